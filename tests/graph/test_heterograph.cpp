// HeteroGraph: validation messages, CSR/CSC against COO on random heterographs, queries, reverse, subgraphs,
// features, to_homogeneous round trips, batching/unbatching, DOT output and the batch-construction budget.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "graph/graph.hpp"
#include "kernels/threads.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using Pairs = std::vector<std::pair<std::int64_t, std::int64_t>>;

namespace {

std::vector<std::int64_t> i64(const Tensor& t) {
  if (t.dtype() == DType::I64) return t.to_vector<std::int64_t>();
  const auto v = t.to_vector<std::int32_t>();
  return {v.begin(), v.end()};
}

// Random heterograph: 3 node types (one possibly empty), 4 relations incl. a self-relation, with multi-edges.
HeteroGraph random_graph(std::uint64_t seed, DType dt) {
  std::mt19937_64 rng(seed);
  const std::int64_t na = 1 + rng() % 20, nb = rng() % 9, nc = 1 + rng() % 3;
  auto edges = [&](std::int64_t ns, std::int64_t nd) {
    Pairs p;
    const std::int64_t ne = (ns == 0 || nd == 0) ? 0 : rng() % 60;
    for (std::int64_t e = 0; e < ne; ++e) p.emplace_back(rng() % ns, rng() % nd);
    if (!p.empty()) p.push_back(p.front());  // a guaranteed multi-edge
    return EdgeList::from_pairs(p, dt);
  };
  return HeteroGraph({{"a", na}, {"b", nb}, {"c", nc}},
                     {{{"a", "x", "b"}, edges(na, nb)},
                      {{"a", "y", "a"}, edges(na, na)},
                      {{"c", "z", "a"}, edges(nc, na)},
                      {{"b", "x2", "c"}, edges(nb, nc)}});
}

// CSR (by `rows_are_src`) agrees with the COO list: row r's entries are exactly the edges with that endpoint,
// in increasing edge id, and each entry's other endpoint is the COO one.
void check_format(const CsrView& v, const Pairs& coo, std::int64_t num_rows, bool rows_are_src) {
  REQUIRE(v.num_rows == num_rows);
  const auto indptr = i64(v.indptr), indices = i64(v.indices), eids = i64(v.eids);
  std::vector<std::int64_t> want_indptr{0}, want_indices, want_eids;
  for (std::int64_t r = 0; r < num_rows; ++r) {
    for (std::size_t e = 0; e < coo.size(); ++e) {
      const auto [s, d] = coo[e];
      if ((rows_are_src ? s : d) != r) continue;
      want_indices.push_back(rows_are_src ? d : s);
      want_eids.push_back(static_cast<std::int64_t>(e));
    }
    want_indptr.push_back(static_cast<std::int64_t>(want_indices.size()));
  }
  CHECK(indptr == want_indptr);
  CHECK(indices == want_indices);
  CHECK(eids == want_eids);
}

}  // namespace

TEST_CASE("CSR and CSC agree with COO on random heterographs") {
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    for (DType dt : {DType::I32, DType::I64}) {
      const HeteroGraph g = random_graph(seed, dt);
      REQUIRE(g.id_dtype() == dt);
      for (int r = 0; r < g.num_relations(); ++r) {
        const auto& et = g.canonical_etype(r);
        INFO("seed " << seed << " relation " << et.str());
        const Pairs coo = g.edges(r).pairs();
        check_format(g.out_csr(r), coo, g.num_nodes(et.src_type), true);
        check_format(g.in_csc(r), coo, g.num_nodes(et.dst_type), false);
        std::vector<std::int64_t> in_deg(g.num_nodes(et.dst_type), 0), out_deg(g.num_nodes(et.src_type), 0);
        for (auto [s, d] : coo) {
          ++out_deg[s];
          ++in_deg[d];
        }
        CHECK(i64(g.in_degrees(r)) == in_deg);
        CHECK(i64(g.out_degrees(r)) == out_deg);
        // Reversal swaps the formats and shares the caches.
        const HeteroGraph rev = g.reverse();
        CHECK(&rev.out_csr(r) == &g.in_csc(r));
        CHECK(&rev.in_csc(r) == &g.out_csr(r));
        CHECK(rev.canonical_etype(r) == CanonicalEType{et.dst_type, et.etype, et.src_type});
        Pairs swapped;
        for (auto [s, d] : coo) swapped.emplace_back(d, s);
        CHECK(rev.edges(r).pairs() == swapped);
      }
    }
  }
}

TEST_CASE("formats are built once, also under concurrent first use") {
  const HeteroGraph g = HeteroGraph::from_edges(builders::window(300, 7), 300);
  std::vector<const CsrView*> seen(8, nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) threads.emplace_back([&, t] { seen[t] = &g.in_csc(0); });
  for (auto& th : threads) th.join();
  for (const CsrView* p : seen) CHECK(p == seen[0]);
  CHECK(g.in_csc(0).indptr.shares_storage_with(seen[0]->indptr));
  const HeteroGraph copy = g;  // copies share the structure and its caches
  CHECK(&copy.in_csc(0) == seen[0]);
}

TEST_CASE("structure-only formats: no edge ids unless asked for, the same arrays either way round") {
  for (DType dt : {DType::I32, DType::I64}) {
    const HeteroGraph g = random_graph(7, dt);
    for (int r = 0; r < g.num_relations(); ++r) {
      const auto& et = g.canonical_etype(r);
      INFO("relation " << et.str() << " dtype " << dtype_name(dt));
      const Pairs coo = g.edges(r).pairs();
      std::vector<std::int64_t> in_deg(g.num_nodes(et.dst_type), 0);
      for (auto [s, d] : coo) ++in_deg[d];
      // Degrees come from the structure alone, made once and kept (a layer asks every step).
      CHECK(i64(g.in_degrees(r)) == in_deg);
      CHECK(g.in_degrees(r).shares_storage_with(g.in_degrees(r)));
      HeteroGraph::BuiltFormats b = g.built_formats(r);
      CHECK(b.csc);
      CHECK_FALSE(b.csc_edge_ids);
      CHECK_FALSE(b.csr);
      const CsrView& csc = g.in_csc_structure(r);
      CHECK_FALSE(csc.has_edge_ids());
      // The full CSC built after it lends the structure's arrays and adds only the edge ids.
      const CsrView& full = g.in_csc(r);
      CHECK(full.indptr.shares_storage_with(csc.indptr));
      CHECK(full.indices.shares_storage_with(csc.indices));
      check_format(full, coo, g.num_nodes(et.dst_type), false);
      b = g.built_formats(r);
      CHECK((b.csc && b.csc_edge_ids && !b.csr));
      // The other way round: a structure asked for after the full CSR is that CSR without its eids.
      const CsrView& out = g.out_csr(r);
      const CsrView& out_structure = g.out_csr_structure(r);
      CHECK(out_structure.indices.shares_storage_with(out.indices));
      CHECK_FALSE(out_structure.has_edge_ids());
      check_format(out, coo, g.num_nodes(et.src_type), true);
    }
  }
}

TEST_CASE("the structure and the full format asked for at once, from several threads") {
  for (int round = 0; round < 4; ++round) {
    const HeteroGraph g = HeteroGraph::from_edges(builders::window(300, 7), 300);
    std::vector<const CsrView*> seen(8, nullptr);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&, t] { seen[t] = t % 2 == 0 ? &g.in_csc(0) : &g.in_csc_structure(0); });
    for (auto& th : threads) th.join();
    const Pairs coo = g.edges(0).pairs();
    for (int t = 0; t < 8; ++t) {
      CHECK(seen[t] == (t % 2 == 0 ? &g.in_csc(0) : &g.in_csc_structure(0)));
      CHECK(seen[t]->has_edge_ids() == (t % 2 == 0));
      CHECK(i64(seen[t]->indices) == i64(g.in_csc(0).indices));
      CHECK(i64(seen[t]->indptr) == i64(g.in_csc(0).indptr));
    }
    check_format(g.in_csc(0), coo, 300, false);
  }
}

TEST_CASE("in_edges / out_edges of a node") {
  const HeteroGraph g({{"u", 3}, {"v", 2}}, {{{"u", "e", "v"}, EdgeList::from_pairs({{0, 1}, {2, 1}, {0, 0}, {0, 1}})}});
  const auto in1 = g.in_edges(0, 1);
  CHECK(in1.neighbors == std::vector<std::int64_t>{0, 2, 0});
  CHECK(in1.eids == std::vector<std::int64_t>{0, 1, 3});
  const auto out0 = g.out_edges(0, 0);
  CHECK(out0.neighbors == std::vector<std::int64_t>{1, 0, 1});
  CHECK(out0.eids == std::vector<std::int64_t>{0, 2, 3});
  CHECK(g.out_edges(0, 1).eids.empty());  // isolated source node
  CHECK_THROWS_WITH_AS(g.in_edges(0, 2), "relation (u, e, v): destination node 2 is outside [0, 2)", Error);
  // Indices as the Python binding passes them: a clean error, not std::out_of_range.
  CHECK_THROWS_WITH_AS(g.edata_map(1), "relation index 1 is outside [0, 1)", Error);
  CHECK_THROWS_WITH_AS(g.edata_map(-1), "relation index -1 is outside [0, 1)", Error);
}

TEST_CASE("construction rejects bad input, naming the relation, position and value") {
  const std::vector<NodeTypeSpec> types = {{"char", 4}, {"word", 2}};
  CHECK_THROWS_WITH_AS(HeteroGraph(types, {{{"char", "in", "word"}, EdgeList::from_pairs({{0, 0}, {3, 1}, {1, 2}})}}),
                       "relation (char, in, word): dst[2] = 2 is not a valid 'word' node id (there are 2)", Error);
  CHECK_THROWS_WITH_AS(HeteroGraph(types, {{{"char", "in", "word"}, EdgeList::from_pairs({{-1, 0}}, DType::I64)}}),
                       "relation (char, in, word): src[0] = -1 is not a valid 'char' node id (there are 4)", Error);
  CHECK_THROWS_WITH_AS(HeteroGraph(types, {{{"char", "in", "sent"}, EdgeList::from_pairs({})}}),
                       "relation (char, in, sent): unknown node type 'sent' (node types: char, word)", Error);
  CHECK_THROWS_AS(HeteroGraph({{"a", 1}, {"a", 2}}, {}), Error);
  CHECK_THROWS_AS(HeteroGraph({{"a", -1}}, {}), Error);
  // Int32 ids (a graph without relations has them) cannot number 2^31 nodes, also of a type no relation
  // touches; with int64 relations the same counts are fine (no per-node memory until a format is asked for).
  const std::int64_t two31 = std::int64_t{1} << 31;
  CHECK_THROWS_WITH_AS(HeteroGraph({{"a", two31}}, {}), "node type 'a': 2147483648 nodes need int64 ids", Error);
  CHECK_THROWS_WITH_AS(HeteroGraph({{"a", 2}, {"b", two31}}, {{{"a", "r", "a"}, EdgeList::from_pairs({{0, 1}})}}),
                       "node type 'b': 2147483648 nodes need int64 ids", Error);
  CHECK(HeteroGraph({{"a", 2}, {"b", two31}}, {{{"a", "r", "a"}, EdgeList::from_pairs({{0, 1}}, DType::I64)}})
            .num_nodes("b") == two31);
  CHECK_THROWS_AS(HeteroGraph(types, {{{"char", "r", "char"}, EdgeList::from_pairs({})},
                                      {{"char", "r", "char"}, EdgeList::from_pairs({})}}),
                  Error);
  // Mixed id dtypes across relations.
  CHECK_THROWS_AS(HeteroGraph(types, {{{"char", "r", "char"}, EdgeList::from_pairs({}, DType::I32)},
                                      {{"char", "s", "char"}, EdgeList::from_pairs({}, DType::I64)}}),
                  Error);
  // Batch counts that do not add up.
  CHECK_THROWS_WITH_AS(HeteroGraph({{"t", 5, {2, 2}}}, {}),
                       "HeteroGraph: node type 't': per-graph counts sum to 4, not its count 5", Error);
  auto ring = builders::ring_batch({3, 3}, true);
  CHECK_THROWS_WITH_AS(HeteroGraph({{"t", 6}}, {{{"t", "ring", "t"}, ring}}),
                       "HeteroGraph: node type 't' has 0 per-graph counts but the batch has 2 graphs", Error);
}

TEST_CASE("relation lookup by edge-type name, ambiguity and unknown names") {
  const HeteroGraph g({{"a", 2}, {"b", 2}}, {{{"a", "x", "b"}, EdgeList::from_pairs({{0, 1}})},
                                             {{"b", "x", "a"}, EdgeList::from_pairs({{1, 0}})},
                                             {{"a", "y", "a"}, EdgeList::from_pairs({})}});
  CHECK(g.relation_id("y") == 2);
  CHECK(g.relation_id(CanonicalEType{"b", "x", "a"}) == 1);
  CHECK_THROWS_WITH_AS(g.relation_id("x"),
                       "edge type 'x' is ambiguous: (a, x, b) and (b, x, a); use the canonical (src, etype, dst)", Error);
  CHECK_THROWS_WITH_AS(g.relation_id("q"), "unknown edge type 'q' (relations: (a, x, b), (b, x, a), (a, y, a))", Error);
  CHECK_THROWS_WITH_AS(g.num_nodes("c"), "unknown node type 'c' (node types: a, b)", Error);
  const HeteroGraph sub = g.edge_type_subgraph(std::vector<std::string>{"y"});
  CHECK(sub.num_relations() == 1);
  CHECK(sub.num_node_types() == 2);
  CHECK(sub.canonical_etype(0) == CanonicalEType{"a", "y", "a"});
  const HeteroGraph sub2 = g.edge_type_subgraph(std::vector<CanonicalEType>{{"b", "x", "a"}});
  CHECK(sub2.edges(0).pairs() == Pairs{{1, 0}});
  CHECK(sub2.relation_id("x") == 0);  // unambiguous in the subgraph
}

TEST_CASE("edge_type_subgraph over chosen node types: only those types, renumbered, features and formats shared") {
  HeteroGraph g({{"a", 2}, {"b", 3}, {"c", 1}}, {{{"a", "x", "b"}, EdgeList::from_pairs({{0, 2}, {1, 0}})},
                                                 {{"c", "y", "c"}, EdgeList::from_pairs({{0, 0}})}});
  g.set_ndata("b", "h", Tensor::zeros({3, 2}));
  g.set_edata("x", "w", Tensor::zeros({2}));
  const HeteroGraph sub = g.edge_type_subgraph(std::vector<CanonicalEType>{{"a", "x", "b"}}, {"b", "a"});
  CHECK(sub.node_types() == std::vector<std::string>{"b", "a"});  // the order asked for
  CHECK(sub.num_nodes("a") == 2);
  CHECK(sub.num_nodes(0) == 3);
  CHECK(sub.num_relations() == 1);
  CHECK(sub.edges(0).pairs() == Pairs{{0, 2}, {1, 0}});
  CHECK(sub.ndata("b", "h").raw_data() == g.ndata("b", "h").raw_data());  // the same storage, not a copy
  CHECK(sub.has_edata("x", "w"));
  CHECK(sub.in_csc(0).indptr.raw_data() == g.in_csc(0).indptr.raw_data());  // one format cache for both graphs
  CHECK_THROWS_WITH_AS(g.edge_type_subgraph(std::vector<CanonicalEType>{{"a", "x", "b"}}, {"a"}),
                       doctest::Contains("needs its destination type 'b'"), Error);
  CHECK_THROWS_WITH_AS(g.edge_type_subgraph(std::vector<CanonicalEType>{{"a", "x", "b"}}, {"a", "b", "a"}),
                       doctest::Contains("node type 'a' is named twice"), Error);
  CHECK_THROWS_WITH_AS(g.edge_type_subgraph(std::vector<CanonicalEType>{{"a", "x", "b"}}, {"a", "q"}),
                       doctest::Contains("unknown node type 'q'"), Error);
}

TEST_CASE("features: row counts are checked, names are reported") {
  HeteroGraph g({{"tok", 3}, {"hub", 1}}, {{{"tok", "to", "hub"}, builders::to_one(3)}});
  g.set_ndata("tok", "h", Tensor::zeros({3, 4}));
  g.set_edata("to", "w", Tensor::zeros({3}));
  CHECK(g.ndata("tok", "h").shape() == Shape{3, 4});
  CHECK(g.has_edata("to", "w"));
  CHECK_THROWS_WITH_AS(g.set_ndata("tok", "x", Tensor::zeros({2, 4})),
                       "ndata['tok']['x']: [2, 4] has 2 rows but 'tok' has 3 nodes", Error);
  CHECK_THROWS_WITH_AS(g.set_edata("to", "w", Tensor::zeros({4})),
                       "edata[(tok, to, hub)]['w']: [4] has 4 rows but the relation has 3 edges", Error);
  CHECK_THROWS_WITH_AS(g.ndata("hub", "h"), "node type 'hub' has no feature 'h'", Error);
  CHECK_THROWS_AS(g.set_ndata("sent", "h", Tensor::zeros({1})), Error);
  const HeteroGraph r = g.reverse();
  CHECK(r.ndata("tok", "h").shares_storage_with(g.ndata("tok", "h")));
  CHECK(g.to(Device::cpu()).has_ndata("tok", "h"));
}

TEST_CASE("to_homogeneous: offsets, edge types and the round trip") {
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const HeteroGraph g = random_graph(seed, seed % 2 ? DType::I64 : DType::I32);
    const HomogeneousGraph h = to_homogeneous(g);
    REQUIRE(h.graph.num_nodes(0) == g.total_num_nodes());
    REQUIRE(h.graph.num_edges(0) == g.total_num_edges());
    const Pairs all = h.graph.edges(0).pairs();
    const auto etype = h.edge_type.to_vector<std::int32_t>();
    for (std::int64_t e = 0; e < static_cast<std::int64_t>(all.size()); ++e) {
      const auto [r, local] = h.edge_of(e);
      CHECK(etype[e] == r);  // all relations, in graph order: edge_type is the relation id
      const auto& et = g.canonical_etype(r);
      const auto [s, d] = g.edges(r).pairs()[local];
      const auto [ts, ls] = h.node_of(all[e].first);
      const auto [td, ld] = h.node_of(all[e].second);
      CHECK(g.node_types()[ts] == et.src_type);
      CHECK(g.node_types()[td] == et.dst_type);
      CHECK(ls == s);
      CHECK(ld == d);
    }
    for (int t = 0; t < g.num_node_types(); ++t)
      for (std::int64_t i = 0; i < g.num_nodes(t); ++i) CHECK(h.node_of(h.global_node(t, i)) == std::make_pair(t, i));
    // Node features through stack_nodes / split_nodes.
    std::vector<Tensor> per_type;
    for (int t = 0; t < g.num_node_types(); ++t)
      per_type.push_back(testing::random_uniform({g.num_nodes(t), 3}, seed * 10 + t));
    const auto back = h.split_nodes(h.stack_nodes(per_type));
    for (int t = 0; t < g.num_node_types(); ++t) CHECK(back[t].to_vector<float>() == per_type[t].to_vector<float>());
  }
}

TEST_CASE("to_homogeneous over chosen relations: one softmax span for a Star-Transformer satellite") {
  const std::vector<std::int64_t> lens = {1, 2, 5};
  const auto star = builders::star_batch(lens);
  const HeteroGraph g({builders::node_type("sat", lens), builders::node_type("emb", lens),
                       builders::node_type("relay", builders::ones(3))},
                      {{{"sat", "ring", "sat"}, builders::ring_batch(lens, true)},
                       {{"sat", "self", "sat"}, builders::self_loops_batch(lens)},
                       {{"emb", "emb", "sat"}, builders::self_loops_batch(lens)},
                       {{"relay", "relay_to_sat", "sat"}, star.from_center},
                       {{"sat", "sat_to_relay", "relay"}, star.to_center}});
  const HomogeneousGraph h = to_homogeneous(g, {"ring", "self", "emb", "relay_to_sat"});
  // Satellite i of a sentence of length n has min(n-1, 2) ring + self + emb + relay in-edges.
  const auto deg = i64(h.graph.in_degrees(0));
  std::int64_t sat = 0;
  for (std::int64_t n : lens)
    for (std::int64_t i = 0; i < n; ++i, ++sat) CHECK(deg[h.global_node(0, sat)] == std::min<std::int64_t>(n - 1, 2) + 3);
  for (std::int64_t v = lens[0] + lens[1] + lens[2]; v < static_cast<std::int64_t>(deg.size()); ++v) CHECK(deg[v] == 0);
  CHECK(h.relations == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("batch: offsets, features and unbatch are exact") {
  std::vector<HeteroGraph> graphs;
  std::vector<Tensor> feats;
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    HeteroGraph g = random_graph(seed, DType::I32);
    feats.push_back(testing::random_uniform({g.num_nodes("a"), 2}, seed));
    g.set_ndata("a", "h", feats.back());
    g.set_edata("y", "w", testing::random_uniform({g.num_edges("y")}, seed + 100));
    graphs.push_back(g);
  }
  const HeteroGraph b = batch(graphs);
  CHECK(b.batch_size() == 6);
  for (int t = 0; t < b.num_node_types(); ++t) {
    const auto off = batch_node_offsets(b, b.node_types()[t]);
    for (std::size_t k = 0; k < graphs.size(); ++k) CHECK(off[k + 1] - off[k] == graphs[k].num_nodes(t));
  }
  for (int r = 0; r < b.num_relations(); ++r) {
    const auto& et = b.canonical_etype(r);
    const auto src_off = batch_node_offsets(b, et.src_type), dst_off = batch_node_offsets(b, et.dst_type);
    Pairs want;
    for (std::size_t k = 0; k < graphs.size(); ++k)
      for (auto [s, d] : graphs[k].edges(r).pairs()) want.emplace_back(s + src_off[k], d + dst_off[k]);
    CHECK(b.edges(r).pairs() == want);
  }
  const auto parts = unbatch_nodes(b, "a", b.ndata("a", "h"));
  REQUIRE(parts.size() == graphs.size());
  for (std::size_t k = 0; k < graphs.size(); ++k) CHECK(parts[k].to_vector<float>() == feats[k].to_vector<float>());
  const auto eparts = unbatch_edges(b, "y", b.edata("y", "w"));
  for (std::size_t k = 0; k < graphs.size(); ++k)
    CHECK(eparts[k].to_vector<float>() == graphs[k].edata("y", "w").to_vector<float>());
  {
    const std::int64_t n = b.num_nodes("a");
    const std::string want = fmt::format("unbatch nodes of 'a': tensor [{}] has {} rows, the batch has {}", n + 1, n + 1, n);
    CHECK_THROWS_WITH_AS(unbatch_nodes(b, "a", Tensor::zeros({n + 1})), want.c_str(), Error);
  }
  // unbatch() inverts batch(): structure and features.
  const auto back = unbatch(b);
  REQUIRE(back.size() == graphs.size());
  for (std::size_t k = 0; k < graphs.size(); ++k) {
    for (int t = 0; t < b.num_node_types(); ++t) CHECK(back[k].num_nodes(t) == graphs[k].num_nodes(t));
    for (int r = 0; r < b.num_relations(); ++r) CHECK(back[k].edges(r).pairs() == graphs[k].edges(r).pairs());
    CHECK(back[k].ndata("a", "h").to_vector<float>() == feats[k].to_vector<float>());
    CHECK(back[k].edata("y", "w").to_vector<float>() == graphs[k].edata("y", "w").to_vector<float>());
  }
  // A batched graph whose edges cross graphs cannot be unbatched: the message names the graph.
  const HeteroGraph crossing({builders::node_type("t", {2, 2})},
                             {{{"t", "e", "t"}, EdgeList{EdgeList::from_pairs({{0, 3}, {2, 3}}).src,
                                                         EdgeList::from_pairs({{0, 3}, {2, 3}}).dst, {1, 1}}}});
  CHECK_THROWS_WITH_AS(unbatch(crossing),
                       doctest::Contains("unbatch: graph 0 of 2: relation (t, e, t): dst[0] = 3 is not a valid 't' node id"),
                       Error);
  // Batching batches flattens; a feature missing in one graph is an error.
  const HeteroGraph bb = batch({b, batch({graphs[0]})});
  CHECK(bb.batch_size() == 7);
  graphs[2] = random_graph(2, DType::I32);
  CHECK_THROWS_WITH_AS(batch(graphs), "batch: graph 2 lacks node feature 'h' that graph 0 has", Error);
  CHECK_THROWS_AS(batch({random_graph(0, DType::I32), HeteroGraph::from_edges(builders::ring(3, true), 3)}), Error);
}

TEST_CASE("DOT export names node types, shapes and labelled relations") {
  const HeteroGraph g({{"char", 2}, {"word", 1}}, {{{"char", "in", "word"}, EdgeList::from_pairs({{0, 0}, {1, 0}})},
                                                   {{"word", "contains", "char"}, EdgeList::from_pairs({{0, 1}})}});
  const std::string dot = to_dot(g);
  CHECK(dot.rfind("digraph topology {\n", 0) == 0);
  CHECK(dot.find("  \"char:1\" [label=\"char 1\", shape=ellipse, style=filled, fillcolor=\"#8dd3c7\"];\n") !=
        std::string::npos);
  CHECK(dot.find("  \"word:0\" [label=\"word 0\", shape=box,") != std::string::npos);
  CHECK(dot.find("  \"char:1\" -> \"word:0\" [label=\"in\"") != std::string::npos);
  CHECK(dot.find("  \"word:0\" -> \"char:1\" [label=\"contains\"") != std::string::npos);
  CHECK(std::count(dot.begin(), dot.end(), '\n') == 1 + 3 + 3 + 1);
  const std::string schema = schema_to_dot(g);
  CHECK(schema.find("  \"char\" -> \"word\" [label=\"in (2)\"") != std::string::npos);
  CHECK_THROWS_AS(to_dot(g, DotOptions{2}), Error);
}

// Its speed is bench/graph_bench.cpp's business (topo-bench graph: "star topology"), not a test's.
TEST_CASE("batched ring+relay construction of 128 sentences: the same graph on 1 thread and on several") {
  std::vector<std::int64_t> lens;
  std::mt19937 rng(3);
  for (int b = 0; b < 128; ++b) lens.push_back(16 + rng() % 241);
  const std::int64_t tokens = std::accumulate(lens.begin(), lens.end(), std::int64_t{0});
  auto build = [&] {
    const auto star = builders::star_batch(lens);
    return HeteroGraph({builders::node_type("sat", lens), builders::node_type("relay", builders::ones(128))},
                       {{{"sat", "ring", "sat"}, builders::ring_batch(lens, true)},
                        {{"sat", "self", "sat"}, builders::self_loops_batch(lens)},
                        {{"relay", "relay_to_sat", "sat"}, star.from_center},
                        {{"sat", "sat_to_relay", "relay"}, star.to_center}});
  };
  const int threads = num_threads();
  set_num_threads(std::max(2, threads));
  const HeteroGraph parallel = build();
  set_num_threads(1);
  const HeteroGraph serial = build();
  set_num_threads(threads);
  CHECK(serial.num_nodes("sat") == tokens);
  for (const char* relation : {"ring", "self", "relay_to_sat", "sat_to_relay"}) {
    CAPTURE(relation);
    CHECK(serial.num_edges(relation) == (std::string(relation) == "ring" ? 2 : 1) * tokens);
    CHECK(serial.edges(relation).pairs() == parallel.edges(relation).pairs());
  }
}
