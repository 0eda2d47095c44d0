#pragma once
// to_homogeneous: one node numbering and one edge list spanning several relations, so a single edge softmax
// can normalise over in-edges from different relations at once (the Star-Transformer satellite attends over
// ring, self, embedding and relay edges together).
//
// Global node id of (type t, local id i) = node_offsets[t] + i (types in the graph's order, all types kept).
// Edges are the chosen relations' edges concatenated in the order given: global edge id of (k-th chosen
// relation, local eid e) = edge_offsets[k] + e; edge_type[e] = k.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph/heterograph.hpp"

namespace topo {

struct HomogeneousGraph {
  HeteroGraph graph;                       // one node type "_N", one relation ("_N", "_E", "_N")
  Tensor edge_type;                        // [E] int32: index into `relations`
  std::vector<int> relations;              // relation ids (of the source graph) in edge order
  std::vector<std::int64_t> node_offsets;  // [types + 1]
  std::vector<std::int64_t> edge_offsets;  // [relations.size() + 1]

  std::int64_t global_node(int ntype, std::int64_t local) const;
  // (node type, local id) of a global node id.
  std::pair<int, std::int64_t> node_of(std::int64_t global) const;
  // (source-graph relation id, local edge id) of a global edge id.
  std::pair<int, std::int64_t> edge_of(std::int64_t global) const;
  // [total nodes, ...] -> per-type row blocks (zero-copy views), the inverse of stack_nodes.
  std::vector<Tensor> split_nodes(const Tensor& rows) const;
  // Per-type [num_nodes(t), ...] tensors -> one [total nodes, ...] tensor in global order.
  Tensor stack_nodes(const std::vector<Tensor>& per_type) const;
};

// All relations when `etypes` is empty; otherwise the named ones (edge-type names, unambiguous), in that order.
HomogeneousGraph to_homogeneous(const HeteroGraph& g, const std::vector<std::string>& etypes = {});

}  // namespace topo
