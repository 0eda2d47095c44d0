#pragma once
// The plain ingredients of a heterograph: a relation's name and its edges as a COO list.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/tensor.hpp"

namespace topo {

// A relation named DGL-style by (source node type, edge type, destination node type).
struct CanonicalEType {
  std::string src_type, etype, dst_type;
  std::string str() const { return "(" + src_type + ", " + etype + ", " + dst_type + ")"; }
  friend bool operator==(const CanonicalEType&, const CanonicalEType&) = default;
};

// COO edges: edge e goes src[e] -> dst[e]; e is the edge's id. src, dst: [E], int32 or int64, one device.
// `batch_num_edges` is filled by the batched builders (edges per graph, in graph order) and empty otherwise.
struct EdgeList {
  Tensor src, dst;
  std::vector<std::int64_t> batch_num_edges;

  std::int64_t num_edges() const { return src.defined() ? src.numel() : 0; }
  DType dtype() const { return src.dtype(); }
  // Host copy of the pairs, for tests and small inspections.
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs() const;
  // From host pairs (an explicit edge list), as `dtype` on the CPU.
  static EdgeList from_pairs(const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                             DType dtype = DType::I32);
};

}  // namespace topo
