// Structure ops (graph/structure.hpp) against brute force over the COO pairs, on random heterographs with
// several relations into one destination type, multi-edges and self loops, on empty graphs, and their errors.
#include <cmath>
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "graph/graph.hpp"
#include "graph/structure.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using topo::testing::error_of;
using Pairs = std::vector<std::pair<std::int64_t, std::int64_t>>;
using Ids = std::vector<std::int64_t>;

namespace {

// kNID / kEID and the "k" feature are int64.
Ids int64_ids(const Tensor& t) { return t.to_vector<std::int64_t>(); }

// Node types a (1..12), b (0..5, possibly empty), c (1..3); relations a->b "x", a->a "y" (self loops and
// multi-edges), c->a "z" ("y" and "z" both end in a), b->c "w". Features: ndata "f" [n, 2] per type (row i of
// type t = 100 t + i, twice), edata "e" [E] (float, = edge id) and "k" [E, 2] int64 (= edge id) on "y".
HeteroGraph random_featured_graph(std::uint64_t seed, DType dt) {
  std::mt19937_64 rng(seed);
  const std::int64_t na = 1 + rng() % 12, nb = rng() % 6, nc = 1 + rng() % 3;
  auto edges = [&](std::int64_t ns, std::int64_t nd, bool loops) {
    Pairs p;
    const std::int64_t ne = (ns == 0 || nd == 0) ? 0 : rng() % 30;
    for (std::int64_t e = 0; e < ne; ++e) p.emplace_back(rng() % ns, rng() % nd);
    if (!p.empty()) p.push_back(p.front());  // a guaranteed multi-edge
    if (loops) p.emplace_back(0, 0);
    return EdgeList::from_pairs(p, dt);
  };
  HeteroGraph g({{"a", na}, {"b", nb}, {"c", nc}}, {{{"a", "x", "b"}, edges(na, nb, false)},
                                                     {{"a", "y", "a"}, edges(na, na, true)},
                                                     {{"c", "z", "a"}, edges(nc, na, false)},
                                                     {{"b", "w", "c"}, edges(nb, nc, false)}});
  for (int t = 0; t < 3; ++t) {
    std::vector<float> f;
    for (std::int64_t i = 0; i < g.num_nodes(t); ++i) f.insert(f.end(), 2, static_cast<float>(100 * t + i));
    g.set_ndata(g.node_types()[t], "f", Tensor::from_vector(f, {g.num_nodes(t), 2}));
  }
  for (int r = 0; r < 4; ++r) {
    std::vector<float> e(static_cast<std::size_t>(g.num_edges(r)));
    std::iota(e.begin(), e.end(), 0.f);
    g.set_edata(r, "e", Tensor::from_vector(e, {g.num_edges(r)}));
  }
  Ids k;
  for (std::int64_t i = 0; i < g.num_edges("y"); ++i) k.insert(k.end(), 2, i);
  g.set_edata("y", "k", Tensor::from_vector(k, {g.num_edges("y"), 2}));
  return g;
}

// Row-wise first column of ndata "f" of type t (the parent id + 100 t).
Ids f_ids(const HeteroGraph& g, const std::string& nt) {
  const auto f = g.ndata(nt, "f").to_vector<float>();
  Ids out;
  for (std::size_t i = 0; i < f.size(); i += 2) out.push_back(static_cast<std::int64_t>(f[i]) - 100 * g.node_type_id(nt));
  return out;
}

}  // namespace

TEST_CASE("in_edges / out_edges / predecessors / successors match the COO pairs") {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const HeteroGraph g = random_featured_graph(seed, seed % 2 ? DType::I32 : DType::I64);
    for (const std::string et : {"x", "y", "z", "w"}) {
      const Pairs coo = g.edges(et).pairs();
      const auto& ce = g.canonical_etype(g.relation_id(et));
      Ids nodes;
      for (std::int64_t v = g.num_nodes(ce.dst_type) - 1; v >= 0; --v) nodes.push_back(v);  // reverse order
      if (!nodes.empty()) nodes.push_back(nodes.front());                                  // a repeat
      const EdgeIds in = in_edges(g, nodes, et);
      EdgeIds want;
      for (const std::int64_t v : nodes)
        for (std::size_t e = 0; e < coo.size(); ++e)
          if (coo[e].second == v) {
            want.src.push_back(coo[e].first);
            want.dst.push_back(v);
            want.eid.push_back(static_cast<std::int64_t>(e));
          }
      CHECK(in.src == want.src);
      CHECK(in.dst == want.dst);
      CHECK(in.eid == want.eid);
      for (std::int64_t u = 0; u < g.num_nodes(ce.src_type); ++u) {
        const EdgeIds out = out_edges(g, {u}, et);
        Ids succ, eids;
        for (std::size_t e = 0; e < coo.size(); ++e)
          if (coo[e].first == u) {
            succ.push_back(coo[e].second);
            eids.push_back(static_cast<std::int64_t>(e));
          }
        CHECK(out.dst == succ);
        CHECK(out.eid == eids);
        CHECK(successors(g, u, et) == succ);
      }
      for (std::int64_t v = 0; v < g.num_nodes(ce.dst_type); ++v) {
        Ids pred;
        for (const auto& [s, d] : coo)
          if (d == v) pred.push_back(s);
        CHECK(predecessors(g, v, et) == pred);
      }
    }
  }
}

TEST_CASE("structure queries: typed errors on bad ids and relations") {
  const HeteroGraph g = random_featured_graph(3, DType::I32);
  CHECK(error_of([&] { in_edges(g, {g.num_nodes("b")}, "x"); }).find("destination node") != std::string::npos);
  CHECK(error_of([&] { out_edges(g, {-1}, "x"); }).find("source node -1") != std::string::npos);
  CHECK(error_of([&] { predecessors(g, 0); }).find("has 4 relations") != std::string::npos);
  CHECK(error_of([&] { successors(g, 0, "nope"); }).find("unknown edge type 'nope'") != std::string::npos);
  CHECK(error_of([&] { node_subgraph(g, {{"q", {0}}}); }).find("unknown node type 'q'") != std::string::npos);
  CHECK(error_of([&] { node_subgraph(g, {{"a", {0, 0}}}); }).find("repeats") != std::string::npos);
  CHECK(error_of([&] { node_subgraph(g, {{"a", {g.num_nodes("a")}}}); }).find("not a valid 'a' node id") !=
        std::string::npos);
  CHECK(error_of([&] { in_subgraph(g, {{"c", {-2}}}); }).find("nodes['c'][0] = -2") != std::string::npos);
  CHECK(error_of([&] { edge_subgraph(g, {{"y", {0, 0}}}); }).find("repeated") != std::string::npos);
  CHECK(error_of([&] { edge_subgraph(g, {{"y", {g.num_edges("y")}}}); }).find("not an edge id") != std::string::npos);
  CHECK(error_of([&] { add_self_loop(g, "x"); }).find("joins two node types") != std::string::npos);
  CHECK(error_of([&] { remove_self_loop(g, "z"); }).find("joins two node types") != std::string::npos);
}

TEST_CASE("node_subgraph keeps the induced edges of every relation with parent ids and sliced features") {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const HeteroGraph g = random_featured_graph(seed, seed % 2 ? DType::I32 : DType::I64);
    std::mt19937_64 rng(seed * 7);
    NodeSets keep;
    for (const std::string nt : {"a", "b"}) {  // "c" left out: it keeps no nodes
      Ids all(static_cast<std::size_t>(g.num_nodes(nt)));
      std::iota(all.begin(), all.end(), 0);
      std::shuffle(all.begin(), all.end(), rng);
      all.resize(all.size() / 2 + 1 > all.size() ? all.size() : all.size() / 2 + 1);
      keep[nt] = all;
    }
    const HeteroGraph s = node_subgraph(g, keep);
    CHECK(s.num_nodes("c") == 0);
    for (const std::string nt : {"a", "b"}) {
      CHECK(int64_ids(s.ndata(nt, kNID)) == keep[nt]);
      CHECK(f_ids(s, nt) == keep[nt]);
    }
    for (const std::string et : {"x", "y", "z", "w"}) {
      const auto& ce = g.canonical_etype(g.relation_id(et));
      const Pairs coo = g.edges(et).pairs();
      auto pos = [&](const std::string& nt, std::int64_t v) -> std::int64_t {
        if (!keep.count(nt)) return -1;
        const auto it = std::find(keep[nt].begin(), keep[nt].end(), v);
        return it == keep[nt].end() ? -1 : it - keep[nt].begin();
      };
      // DGL 2.1's order: the kept sources in the order given, each one's edges by increasing id
      Pairs want;
      Ids want_eid;
      const Ids sources = keep.count(ce.src_type) ? keep[ce.src_type] : Ids{};
      for (std::size_t ps = 0; ps < sources.size(); ++ps)
        for (std::size_t e = 0; e < coo.size(); ++e) {
          const auto pd = pos(ce.dst_type, coo[e].second);
          if (coo[e].first == sources[ps] && pd >= 0) {
            want.emplace_back(static_cast<std::int64_t>(ps), pd);
            want_eid.push_back(static_cast<std::int64_t>(e));
          }
        }
      CHECK(s.edges(et).pairs() == want);
      CHECK(int64_ids(s.edata(et, kEID)) == want_eid);
      const auto e = s.edata(et, "e").to_vector<float>();
      CHECK(Ids(e.begin(), e.end()) == want_eid);
    }
    Ids k_col;
    for (const std::int64_t e : int64_ids(s.edata("y", kEID))) k_col.insert(k_col.end(), 2, e);
    CHECK(int64_ids(s.edata("y", "k")) == k_col);  // an int64 [E, 2] feature is sliced too
  }
}

TEST_CASE("in_subgraph: all nodes kept, the in-edges of the chosen nodes of two relations into one type") {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const HeteroGraph g = random_featured_graph(seed, DType::I32);
    Ids chosen;
    for (std::int64_t v = 0; v < g.num_nodes("a"); v += 2) chosen.push_back(v);
    const HeteroGraph s = in_subgraph(g, {{"a", chosen}});
    for (int t = 0; t < 3; ++t) CHECK(s.num_nodes(t) == g.num_nodes(t));
    CHECK(s.num_edges("x") == 0);  // into b: not chosen
    CHECK(s.num_edges("w") == 0);
    for (const std::string et : {"y", "z"}) {
      const Pairs coo = g.edges(et).pairs();
      Pairs want;
      Ids want_eid;
      for (std::size_t e = 0; e < coo.size(); ++e)
        if (coo[e].second % 2 == 0) {
          want.push_back(coo[e]);
          want_eid.push_back(static_cast<std::int64_t>(e));
        }
      CHECK(s.edges(et).pairs() == want);
      CHECK(int64_ids(s.edata(et, kEID)) == want_eid);
    }
    CHECK(f_ids(s, "a") == f_ids(g, "a"));
  }
}

TEST_CASE("edge_subgraph: given edges in order, nodes relabelled by increasing parent id or all kept") {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const HeteroGraph g = random_featured_graph(seed, DType::I64);
    Ids ey, ez;
    for (std::int64_t e = g.num_edges("y") - 1; e >= 0; e -= 3) ey.push_back(e);
    for (std::int64_t e = 0; e < g.num_edges("z"); e += 2) ez.push_back(e);
    const Pairs cy = g.edges("y").pairs(), cz = g.edges("z").pairs();
    const HeteroGraph s = edge_subgraph(g, {{"y", ey}, {"z", ez}});
    std::set<std::int64_t> used_a, used_c;
    for (const auto e : ey) used_a.insert({cy[e].first, cy[e].second});
    for (const auto e : ez) {
      used_c.insert(cz[e].first);
      used_a.insert(cz[e].second);
    }
    CHECK(int64_ids(s.ndata("a", kNID)) == Ids(used_a.begin(), used_a.end()));
    CHECK(int64_ids(s.ndata("c", kNID)) == Ids(used_c.begin(), used_c.end()));
    CHECK(s.num_nodes("b") == 0);
    CHECK(s.num_edges("x") == 0);
    CHECK(int64_ids(s.edata("y", kEID)) == ey);
    CHECK(int64_ids(s.edata("z", kEID)) == ez);
    // Mapped back through kNID, every kept edge is its parent edge.
    const Ids na = int64_ids(s.ndata("a", kNID)), nc = int64_ids(s.ndata("c", kNID));
    const Pairs sy = s.edges("y").pairs(), sz = s.edges("z").pairs();
    for (std::size_t i = 0; i < ey.size(); ++i) CHECK(std::make_pair(na[sy[i].first], na[sy[i].second]) == cy[ey[i]]);
    for (std::size_t i = 0; i < ez.size(); ++i) CHECK(std::make_pair(nc[sz[i].first], na[sz[i].second]) == cz[ez[i]]);
    CHECK(f_ids(s, "a") == na);

    const HeteroGraph keep_all = edge_subgraph(g, {{"y", ey}}, false);
    CHECK(keep_all.num_nodes("a") == g.num_nodes("a"));
    CHECK_FALSE(keep_all.has_ndata("a", kNID));
    Pairs want;
    for (const auto e : ey) want.push_back(cy[e]);
    CHECK(keep_all.edges("y").pairs() == want);
    // Of a subgraph (which has kNID), every node kept: no kNID either. It carried the subgraph's own, ids into
    // g, which read as parent ids of the second subgraph gathered g's rows where the subgraph's were meant.
    const HeteroGraph of_sub = edge_subgraph(s, {{"y", Ids{}}}, false);
    CHECK_FALSE(of_sub.has_ndata("a", kNID));
    CHECK(f_ids(of_sub, "a") == na);  // the features are the subgraph's, whole
    if (s.num_nodes("a") > 0) CHECK_FALSE(in_subgraph(s, {{"a", Ids{0}}}).has_ndata("a", kNID));
    CHECK(int64_ids(add_self_loop(s, "y").ndata("a", kNID)) == na);  // the same nodes: kNID still maps them
  }
}

TEST_CASE("add_self_loop / remove_self_loop: appended loops with filled features, removal keeps the rest") {
  const HeteroGraph g = random_featured_graph(5, DType::I32);
  const Pairs cy = g.edges("y").pairs();
  const std::int64_t na = g.num_nodes("a"), ne = g.num_edges("y");
  const HeteroGraph l = add_self_loop(g, "y", 7.f);
  Pairs want = cy;
  for (std::int64_t v = 0; v < na; ++v) want.emplace_back(v, v);
  CHECK(l.edges("y").pairs() == want);
  CHECK(l.edges("z").pairs() == g.edges("z").pairs());
  const auto e = l.edata("y", "e").to_vector<float>();
  for (std::int64_t i = 0; i < ne + na; ++i) CHECK(e[i] == (i < ne ? static_cast<float>(i) : 7.f));
  CHECK(int64_ids(l.edata("y", "k"))[2 * (ne + na) - 1] == 7);
  // The integer feature "k" cannot hold these fills (converting them was undefined behaviour).
  for (const float bad : {std::nanf(""), 1e30f, -1e30f})
    CHECK(error_of([&] { add_self_loop(g, "y", bad); }).find("edge feature 'k'") != std::string::npos);

  const HeteroGraph r = remove_self_loop(l, "y");
  Pairs no_loops;
  std::vector<float> kept_e;
  for (std::size_t i = 0; i < cy.size(); ++i)
    if (cy[i].first != cy[i].second) {
      no_loops.push_back(cy[i]);
      kept_e.push_back(static_cast<float>(i));
    }
  CHECK(r.edges("y").pairs() == no_loops);
  CHECK(r.edata("y", "e").to_vector<float>() == kept_e);
  CHECK(f_ids(r, "a") == f_ids(g, "a"));
}

TEST_CASE("add_self_loop on a batch: each graph's loops follow its edges and the batch unbatches") {
  const HeteroGraph g0 = HeteroGraph::from_edges(EdgeList::from_pairs({{0, 1}, {1, 2}}), 3);
  const HeteroGraph g1 = HeteroGraph::from_edges(EdgeList::from_pairs({}), 0);
  const HeteroGraph g2 = HeteroGraph::from_edges(EdgeList::from_pairs({{1, 0}, {1, 1}}), 2);
  const HeteroGraph b = add_self_loop(batch({g0, g1, g2}));
  CHECK(b.batch_num_edges(0) == Ids{5, 0, 4});
  const auto parts = unbatch(b);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].edges(0).pairs() == Pairs{{0, 1}, {1, 2}, {0, 0}, {1, 1}, {2, 2}});
  CHECK(parts[1].num_edges(0) == 0);
  CHECK(parts[2].edges(0).pairs() == Pairs{{1, 0}, {1, 1}, {0, 0}, {1, 1}});
  const HeteroGraph r = remove_self_loop(b);
  CHECK(r.batch_num_edges(0) == Ids{2, 0, 1});
  CHECK(unbatch(r)[2].edges(0).pairs() == Pairs{{1, 0}});
}

TEST_CASE("to_simple merges parallel edges with counts and a writeback map") {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const HeteroGraph g = random_featured_graph(seed, DType::I32);
    std::vector<Ids> back;
    const HeteroGraph s = to_simple(g, "count", &back);
    for (int r = 0; r < g.num_relations(); ++r) {
      const Pairs coo = g.edges(r).pairs();
      std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> mult;
      for (const auto& p : coo) ++mult[p];
      const Pairs got = s.edges(r).pairs();
      Pairs want;
      Ids want_count;
      for (const auto& [p, c] : mult) {
        want.push_back(p);
        want_count.push_back(c);
      }
      CHECK(got == want);
      CHECK(int64_ids(s.edata_map(r).at("count")) == want_count);
      REQUIRE(back[r].size() == coo.size());
      for (std::size_t e = 0; e < coo.size(); ++e) CHECK(got[back[r][e]] == coo[e]);
      CHECK(s.edata_map(r).count("e") == 0);  // edge features dropped (DGL's copy_edata=False)
    }
  }
}

TEST_CASE("to_simple keeps a batch's per-graph edge counts") {
  const HeteroGraph g0 = HeteroGraph::from_edges(EdgeList::from_pairs({{0, 1}, {0, 1}, {1, 0}}), 2);
  const HeteroGraph g1 = HeteroGraph::from_edges(EdgeList::from_pairs({{2, 2}, {0, 1}, {2, 2}}), 3);
  const HeteroGraph s = to_simple(batch({g0, g1}));
  CHECK(s.batch_num_edges(0) == Ids{2, 2});
  CHECK(unbatch(s)[1].edges(0).pairs() == Pairs{{0, 1}, {2, 2}});
}

TEST_CASE("reverse of a heterograph: in-edges become out-edges relation by relation") {
  const HeteroGraph g = random_featured_graph(4, DType::I64);
  const HeteroGraph r = g.reverse();
  for (int q = 0; q < g.num_relations(); ++q) {
    const auto& ce = g.canonical_etype(q);
    CHECK(r.canonical_etype(q) == CanonicalEType{ce.dst_type, ce.etype, ce.src_type});
    for (std::int64_t v = 0; v < g.num_nodes(ce.dst_type); ++v)
      CHECK(successors(r, v, ce.etype) == predecessors(g, v, ce.etype));
  }
}

TEST_CASE("structure ops on empty graphs") {
  const HeteroGraph g = HeteroGraph::from_edges(EdgeList::from_pairs({}), 0);
  CHECK(in_edges(g, {}).size() == 0);
  CHECK(out_edges(g, {}).size() == 0);
  CHECK(error_of([&] { predecessors(g, 0); }).find("outside [0, 0)") != std::string::npos);
  CHECK(node_subgraph(g, {{"_N", {}}}).num_nodes("_N") == 0);
  CHECK(in_subgraph(g, {}).num_edges(0) == 0);
  CHECK(edge_subgraph(g, {}).total_num_edges() == 0);
  CHECK(add_self_loop(g).num_edges(0) == 0);
  CHECK(remove_self_loop(g).num_edges(0) == 0);
  CHECK(to_simple(g).num_edges(0) == 0);
  // Nodes but no edges: loops only.
  const HeteroGraph n = HeteroGraph::from_edges(EdgeList::from_pairs({}), 3);
  CHECK(add_self_loop(n).edges(0).pairs() == Pairs{{0, 0}, {1, 1}, {2, 2}});
  CHECK(node_subgraph(n, {{"_N", {2}}}).num_edges(0) == 0);
}
