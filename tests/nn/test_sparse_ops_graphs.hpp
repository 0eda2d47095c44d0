#pragma once
// Small graphs for the sparse-op and message-passing tests: random (with a multi-edge, a self loop and
// destinations of in-degree 0), ring, relay (in-degree 33 and 1), window, character/word spans, and an
// int64-id ring. Each keeps its COO on the host for the reference loops.
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.hpp"
#include "nn/sparse_ops.hpp"

namespace topo::nn::testing {

struct TestGraph {
  std::string name;
  HeteroGraph g;
  std::string etype;
  std::int64_t num_src = 0, num_dst = 0;
  std::vector<std::int64_t> src, dst;  // host COO, index = edge id
  Block csr() const { return relation_block(g, etype); }
  std::int64_t num_edges() const { return static_cast<std::int64_t>(src.size()); }
};

inline TestGraph make_graph(const std::string& name, const EdgeList& edges, std::int64_t num_src, std::int64_t num_dst,
                            bool bipartite) {
  TestGraph t;
  t.name = name;
  t.etype = "rel";
  t.num_src = num_src;
  t.num_dst = num_dst;
  if (bipartite)
    t.g = HeteroGraph({{"a", num_src}, {"b", num_dst}}, {{{"a", "rel", "b"}, edges}});
  else
    t.g = HeteroGraph::from_edges(edges, num_src, "_N", "rel");
  for (const auto& [s, d] : edges.pairs()) {
    t.src.push_back(s);
    t.dst.push_back(d);
  }
  return t;
}

inline TestGraph random_graph(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs = {{0, 1}, {0, 1}, {2, 2}};  // multi-edge, self loop
  for (int i = 0; i < 12; ++i)
    pairs.emplace_back(static_cast<std::int64_t>(rng() % 7), static_cast<std::int64_t>(rng() % 5));
  return make_graph("random", EdgeList::from_pairs(pairs), 7, 7, false);  // nodes 5, 6: in-degree 0
}

inline std::vector<TestGraph> test_graphs() {
  std::vector<TestGraph> gs;
  gs.push_back(random_graph(17));
  gs.push_back(make_graph("ring", builders::ring(5, true), 5, 5, false));
  gs.push_back(make_graph("ring-int64", builders::ring(4, false, DType::I64), 4, 4, false));
  gs.push_back(make_graph("relay-in", builders::to_one(33), 33, 1, true));
  gs.push_back(make_graph("relay-out", builders::from_one(4), 1, 4, true));
  gs.push_back(make_graph("window", builders::window(6, 3), 6, 6, false));
  gs.push_back(make_graph("spans", builders::bipartite_spans(6, {{0, 1}, {2, 4}, {5, 5}}).in, 6, 3, true));
  return gs;
}

// (heads, feature dim) combinations: heads 1 and 6, dims 1 and 7, kept small for finite differences.
inline const std::vector<std::pair<std::int64_t, std::int64_t>> kHeadDims = {{1, 1}, {1, 7}, {6, 1}, {2, 7}};

}  // namespace topo::nn::testing
