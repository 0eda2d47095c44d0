#pragma once
// GraphMultiHeadAttention: scaled dot-product attention of destination nodes over their in-neighbours,
// with h heads of size d/h, on the fused sparse attention kernel (one pass per destination, no [E, H]
// scores):  out_i = W_O [ head_1; ...; head_h ],  head = sum_j softmax_j(q_i . k_j / sqrt(d_h)) v_j,
// q = W_Q x_dst, k = W_K x_src, v = W_V x_src. Sources and destinations may be different node sets (a block).
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "graph/block.hpp"

#include "nn/layers.hpp"
#include "nn/sparse_ops.hpp"

namespace topo::nn {

class GraphMultiHeadAttention : public Module {
 public:
  GraphMultiHeadAttention(std::int64_t dim, std::int64_t heads, bool bias = true);
  // graph: rows = destinations (graph.num_dst()), sources graph.num_src().
  // dst_states [num_dst, dim], src_states [num_src, dim] -> [num_dst, dim].
  Var forward(const RelationCsr& graph, const Var& dst_states, const Var& src_states) const;

  std::int64_t dim() const { return dim_; }
  std::int64_t heads() const { return heads_; }
  std::shared_ptr<Linear> q, k, v, o;

 private:
  std::int64_t dim_, heads_;
};

// A block as the sparse ops see it.
inline RelationCsr block_csr(const Block& block) { return RelationCsr{block.in, block.out}; }
// The block's source states in its numbering: per-type states concatenated in block.src_types order.
// `states` maps node type -> [num nodes of that type, dim]; a type the block reads must be present.
Var block_sources(const Block& block, const std::map<std::string, Var>& states);

}  // namespace topo::nn
