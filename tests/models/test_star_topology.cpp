#include <set>

#include "models/star_transformer/topology.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::models;

namespace {
// Context of satellite `i` (global id) as (source type, local id) pairs, read from the block's in-CSR.
std::multiset<std::pair<std::string, std::int64_t>> context(const Block& b, std::int64_t i) {
  std::multiset<std::pair<std::string, std::int64_t>> out;
  const auto indptr = b.in.indptr.to_vector<std::int32_t>(), indices = b.in.indices.to_vector<std::int32_t>();
  for (std::int32_t k = indptr[i]; k < indptr[i + 1]; ++k) {
    std::size_t t = 0;
    while (indices[k] >= b.src_offsets[t + 1]) ++t;
    out.insert({b.src_types[t], indices[k] - b.src_offsets[t]});
  }
  return out;
}
}  // namespace

TEST_CASE("star topology: each satellite's context is exactly [h_{i-1}, h_i, h_{i+1}, e_i, s] on a closed ring") {
  // Sentences of lengths 1, 2, 3 and 6: satellites 0 | 1 2 | 3 4 5 | 6..11; relays 0..3.
  StarTopology t = star_topology({1, 2, 3, 6}, StarVariant::Full);
  CHECK(t.num_tokens() == 12);
  CHECK(t.num_sentences() == 4);
  using C = std::multiset<std::pair<std::string, std::int64_t>>;
  CHECK(context(t.satellite, 0) == C{{"sat", 0}, {"emb", 0}, {"relay", 0}});  // n = 1: no ring edge
  CHECK(context(t.satellite, 1) == C{{"sat", 1}, {"sat", 2}, {"emb", 1}, {"relay", 1}});  // n = 2: neighbour once
  CHECK(context(t.satellite, 3) == C{{"sat", 3}, {"sat", 4}, {"sat", 5}, {"emb", 3}, {"relay", 2}});
  CHECK(context(t.satellite, 6) == C{{"sat", 11}, {"sat", 6}, {"sat", 7}, {"emb", 6}, {"relay", 3}});  // wraps
  CHECK(context(t.satellite, 11) == C{{"sat", 10}, {"sat", 11}, {"sat", 6}, {"emb", 11}, {"relay", 3}});
  // Relay: itself and every satellite of its sentence.
  CHECK(context(t.relay, 2) == C{{"sat", 3}, {"sat", 4}, {"sat", 5}, {"relay", 2}});
}

TEST_CASE("star topology ablations drop exactly the relay->satellite or the ring edges") {
  using C = std::multiset<std::pair<std::string, std::int64_t>>;
  StarTopology no_radical = star_topology({4}, StarVariant::NoRadical);
  CHECK(context(no_radical.satellite, 1) == C{{"sat", 0}, {"sat", 1}, {"sat", 2}, {"emb", 1}});
  CHECK(context(no_radical.relay, 0) == C{{"sat", 0}, {"sat", 1}, {"sat", 2}, {"sat", 3}, {"relay", 0}});
  StarTopology no_ring = star_topology({4}, StarVariant::NoRing);
  CHECK(context(no_ring.satellite, 1) == C{{"sat", 1}, {"emb", 1}, {"relay", 0}});
  CHECK(parse_star_variant("no-ring") == StarVariant::NoRing);
  CHECK_THROWS_WITH_AS(parse_star_variant("ring"), doctest::Contains("'ring'"), Error);
  CHECK_THROWS_WITH_AS(star_topology({3, 0}, StarVariant::Full), doctest::Contains("sentence 1 has length 0"), Error);
}
