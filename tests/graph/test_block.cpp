#include <set>
#include <tuple>

#include "graph/graph.hpp"
#include "tests/support/testing.hpp"

using namespace topo;

namespace {
// Edges of a block as (dst, block src) pairs, from its in-CSR.
std::multiset<std::pair<std::int64_t, std::int64_t>> block_edges(const CsrView& csr, bool by_dst) {
  std::multiset<std::pair<std::int64_t, std::int64_t>> out;
  const auto indptr = csr.indptr.to_vector<std::int32_t>(), indices = csr.indices.to_vector<std::int32_t>();
  for (std::int64_t r = 0; r < csr.num_rows; ++r)
    for (std::int32_t k = indptr[r]; k < indptr[r + 1]; ++k)
      out.insert(by_dst ? std::pair<std::int64_t, std::int64_t>{r, indices[k]}
                        : std::pair<std::int64_t, std::int64_t>{indices[k], r});
  return out;
}
}  // namespace

TEST_CASE("to_block: one CSR pair over several relations, sources numbered type by type") {
  const std::vector<std::int64_t> lens = {3, 1};
  HeteroGraph g({builders::node_type("sat", lens), builders::node_type("emb", lens),
                 builders::node_type("relay", builders::ones(2))},
                {{{"sat", "ring", "sat"}, builders::ring_batch(lens, true)},
                 {{"emb", "token", "sat"}, builders::self_loops_batch(lens)},
                 {{"relay", "from_relay", "sat"}, builders::from_one_batch(lens)},
                 {{"sat", "to_relay", "relay"}, builders::to_one_batch(lens)}});
  Block b = to_block(g, "sat", {"ring", "token", "from_relay"});
  CHECK(b.num_dst == 4);
  CHECK(b.num_src == 4 + 4 + 2);
  CHECK(b.src_types == std::vector<std::string>{"sat", "emb", "relay"});
  CHECK(b.src_offset("emb") == 4);
  CHECK(b.src_offset("relay") == 8);
  // Sentence 0 (sats 0..2): ring neighbours, own embedding (4 + i), relay 8. Sentence 1 (sat 3): emb 7, relay 9.
  const std::multiset<std::pair<std::int64_t, std::int64_t>> expected = {
      {0, 2}, {0, 1}, {1, 0}, {1, 2}, {2, 1}, {2, 0}, {0, 4}, {1, 5}, {2, 6}, {3, 7}, {0, 8}, {1, 8}, {2, 8}, {3, 9}};
  CHECK(block_edges(b.in, true) == expected);
  CHECK(block_edges(b.out, false) == expected);  // the same edges by source
  CHECK(b.edge_offsets == std::vector<std::int64_t>{0, 6, 10, 14});

  CHECK_THROWS_WITH_AS(to_block(g, "sat", {"to_relay"}), doctest::Contains("(sat, to_relay, relay)"), Error);
  CHECK_THROWS_WITH_AS(b.src_offset("word"), doctest::Contains("word"), Error);
  CHECK_THROWS_AS(to_block(g, "sat", {"ring", "ring"}), Error);
}
