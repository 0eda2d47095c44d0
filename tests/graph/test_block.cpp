#include <random>
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

namespace {
template <class T>
std::vector<std::int64_t> wide(const Tensor& t) {
  const auto v = t.to_vector<T>();
  return std::vector<std::int64_t>(v.begin(), v.end());
}
std::vector<std::int64_t> ids_of(const Tensor& t) {
  return t.dtype() == DType::I32 ? wide<std::int32_t>(t) : wide<std::int64_t>(t);
}
void check_same_csr(const CsrView& a, const CsrView& b) {
  CHECK(a.num_rows == b.num_rows);
  CHECK(a.num_cols == b.num_cols);
  CHECK(ids_of(a.indptr) == ids_of(b.indptr));
  CHECK(ids_of(a.indices) == ids_of(b.indices));
  CHECK(ids_of(a.eids) == ids_of(b.eids));
}
EdgeList random_edges(std::int64_t num_src, std::int64_t num_dst, std::int64_t count, std::mt19937& rng, DType dtype) {
  std::vector<std::int64_t> src, dst;
  for (std::int64_t e = 0; e < count; ++e) {
    src.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint32_t>(num_src)));
    dst.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint32_t>(num_dst)));
  }
  auto ids = [&](const std::vector<std::int64_t>& v) {
    if (dtype == DType::I64) return Tensor::from_vector(v, {count});
    return Tensor::from_vector(std::vector<std::int32_t>(v.begin(), v.end()), {count});
  };
  return EdgeList{ids(src), ids(dst), {}};
}
}  // namespace

TEST_CASE("to_block joins the cached per-relation formats exactly as a COO -> CSR of the renumbered edges") {
  for (DType dtype : {DType::I32, DType::I64}) {
    std::mt19937 rng(dtype == DType::I32 ? 3 : 4);
    // Types a (7 nodes), b (1), c (13); four relations into a (one empty, two from the same type) and one out.
    HeteroGraph g({{"a", 7}, {"b", 1}, {"c", 13}},
                  {{{"c", "c1", "a"}, random_edges(13, 7, 40, rng, dtype)},
                   {{"a", "aa", "a"}, random_edges(7, 7, 19, rng, dtype)},
                   {{"b", "ba", "a"}, random_edges(1, 7, 0, rng, dtype)},
                   {{"c", "c2", "a"}, random_edges(13, 7, 25, rng, dtype)},
                   {{"a", "ab", "b"}, random_edges(7, 1, 5, rng, dtype)}});
    const std::vector<std::string> names = {"c2", "ba", "c1", "aa"};
    const Block b = to_block(g, "a", names);
    CHECK(b.src_types == std::vector<std::string>{"a", "b", "c"});
    CHECK(b.src_offsets == std::vector<std::int64_t>{0, 7, 8, 21});
    // Reference: relations' COO concatenated in the order named, sources renumbered, then COO -> CSR.
    std::vector<std::int64_t> src, dst;
    for (const std::string& name : names) {
      const EdgeList e = g.edges(name);
      const std::int64_t offset = b.src_offset(g.canonical_etype(g.relation_id(name)).src_type);
      for (std::int64_t s : ids_of(e.src)) src.push_back(s + offset);
      const auto d = ids_of(e.dst);
      dst.insert(dst.end(), d.begin(), d.end());
    }
    const auto n = static_cast<std::int64_t>(src.size());
    auto ids_tensor = [&](const std::vector<std::int64_t>& v) {
      if (dtype == DType::I64) return Tensor::from_vector(v, {n});
      return Tensor::from_vector(std::vector<std::int32_t>(v.begin(), v.end()), {n});
    };
    check_same_csr(b.in, coo_to_csr(ids_tensor(dst), ids_tensor(src), b.num_dst, b.num_src));
    check_same_csr(b.out, coo_to_csr(ids_tensor(src), ids_tensor(dst), b.num_src, b.num_dst));
    // Each block edge knows its relation and its own id there.
    CHECK(b.relation_of_edge(0) == g.relation_id("c2"));
    CHECK(b.relation_edge_id(24) == 24);
    CHECK(b.relation_of_edge(25) == g.relation_id("c1"));
    CHECK(b.relation_edge_id(25) == 0);
    CHECK(b.relation_of_edge(n - 1) == g.relation_id("aa"));
    CHECK(b.relation_edge_id(n - 1) == 18);
    CHECK_THROWS_AS(b.relation_of_edge(n), Error);
  }
}

TEST_CASE("a one-relation block is the graph's cached formats (no copy)") {
  HeteroGraph g({builders::node_type("tok", {3, 4})}, {{{"tok", "w", "tok"}, builders::window_batch({3, 4}, 3)}});
  const Block b = to_block(g, "tok", {"w"});
  CHECK(b.in.indices.raw_data() == g.in_csc("w").indices.raw_data());
  CHECK(b.out.indices.raw_data() == g.out_csr("w").indices.raw_data());
  const Block r = relation_block(g, "w");
  CHECK(r.in.indptr.raw_data() == b.in.indptr.raw_data());
  CHECK(r.same_nodes(b));
}

TEST_CASE("merge_csr rejects parts that do not fit") {
  HeteroGraph g({builders::node_type("tok", {3})}, {{{"tok", "w", "tok"}, builders::window_batch({3}, 3)}});
  const CsrView& in = g.in_csc("w");
  CHECK_THROWS_WITH_AS(merge_csr({{in, 1, 0, 0}}, 3, 3), doctest::Contains("does not fit"), Error);
  CHECK_THROWS_WITH_AS(merge_csr({{in, 0, 1, 0}}, 3, 3), doctest::Contains("does not fit"), Error);
  CHECK_THROWS_AS(merge_csr({}, 3, 3), Error);
  const CsrView two = merge_csr({{in, 0, 0, 0}, {in, 3, 3, 7}}, 6, 6);  // block-diagonal copy of itself
  CHECK(ids_of(two.indptr) == std::vector<std::int64_t>{0, 2, 5, 7, 9, 12, 14});
  CHECK(ids_of(two.indices) == std::vector<std::int64_t>{0, 1, 0, 1, 2, 1, 2, 3, 4, 3, 4, 5, 4, 5});
  CHECK(ids_of(two.eids) == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13});
}

TEST_CASE("segment_block: every row into its example, empty examples allowed") {
  const Block b = segment_block({2, 0, 3}, "tok");
  CHECK(b.num_dst == 3);
  CHECK(b.num_src == 5);
  CHECK(ids_of(b.in.indptr) == std::vector<std::int64_t>{0, 2, 2, 5});
  CHECK(ids_of(b.out.indices) == std::vector<std::int64_t>{0, 0, 2, 2, 2});
  CHECK_THROWS_AS(segment_block({1, -1}), Error);
}
