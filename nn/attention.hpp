#pragma once
// GraphMultiHeadAttention: scaled dot-product attention of destination nodes over their in-neighbours in a
// Block, with h heads of size d/h, on the fused sparse attention kernel (one pass per destination, no
// [E, H] scores):  out_i = W_O [ head_1; ...; head_h ],  head = sum_j softmax_j(q_i . k_j / sqrt(d_h)) v_j,
// q = W_Q x_dst, k = W_K x_src, v = W_V x_src. Sources may be several node types (the block's src_types):
// their states are passed per type and joined in the block's source numbering.
//
// Head groups: the heads may be split into groups that each attend over their own block (Multi-Scale's
// windows: 2 heads on width 1, 2 on width 3, ...). All groups' blocks share the destination and source node
// sets; q, k, v are projected once, each group runs the fused kernel on its slice of heads (one call per
// distinct topology), and the groups' outputs are concatenated head-wise before the one W_O.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/block.hpp"

#include "nn/layers.hpp"
#include "nn/sparse_ops.hpp"

namespace topo::nn {

// States per node type, e.g. {{"sat", h}, {"emb", e}, {"relay", s}}: [nodes of that type, dim] each.
using NodeStates = std::map<std::string, Var>;

// A group of `heads` consecutive heads attending over `block`. A group of 0 heads is allowed (skipped).
struct HeadGroup {
  std::int64_t heads = 0;
  Block block;
};

class GraphMultiHeadAttention : public Module {
 public:
  GraphMultiHeadAttention(std::int64_t dim, std::int64_t heads, bool bias = true);
  // dst_states [block.num_dst, dim]; src_states holds every type in block.src_types -> [num_dst, dim].
  Var forward(const Block& block, const Var& dst_states, const NodeStates& src_states) const;
  // Self-attention within one node type: the block's only source type is its destination type.
  Var forward(const Block& block, const Var& states) const;
  // Head groups: the groups' heads sum to heads(); all blocks share destinations and sources.
  Var forward(const std::vector<HeadGroup>& groups, const Var& dst_states, const NodeStates& src_states) const;
  Var forward(const std::vector<HeadGroup>& groups, const Var& states) const;
  // The same layer without a graph: self-attention within packed sequences (sequence b owns `lengths[b]`
  // consecutive rows of states [rows, dim]) on the fused dense kernel (nn::flash_attention), optionally banded:
  // radii [B] or [B * heads] let query i see only the keys |i - j| <= radius (a window graph's edges). The
  // Transformer's dense path and Multi-Scale's band path; the same parameters as the graph forms.
  Var forward_packed(const Var& states, const std::vector<std::int64_t>& lengths,
                     const std::vector<std::int64_t>& radii = {}) const;
  // 1 / sqrt(d_h): the scores' scale of every form.
  float scale() const;

  std::int64_t dim() const { return dim_; }
  std::int64_t heads() const { return heads_; }
  std::shared_ptr<Linear> q, k, v, o;

 private:
  Var attend(const std::vector<HeadGroup>& groups, const Var& dst_states, const std::vector<Var>& src_parts) const;
  Var project(const std::vector<const Linear*>& projections, const std::vector<Var>& parts) const;
  std::int64_t dim_, heads_;
};

// The block's source states in its numbering: the per-type states in block.src_types order (their rows
// concatenated are [block.num_src, dim]; the projections read them as parts, nn::linear_rows); a type the
// block reads must be present with its node count of rows.
std::vector<Var> block_source_parts(const Block& block, const NodeStates& states);

}  // namespace topo::nn
