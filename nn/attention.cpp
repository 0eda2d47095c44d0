#include "nn/attention.hpp"

#include <cmath>

#include "nn/ops.hpp"

namespace topo::nn {

GraphMultiHeadAttention::GraphMultiHeadAttention(std::int64_t dim, std::int64_t heads, bool bias)
    : dim_(dim), heads_(heads) {
  TOPO_CHECK(heads >= 1 && dim % heads == 0, "GraphMultiHeadAttention: {} heads do not divide dim {}", heads, dim);
  q = register_module("q", std::make_shared<Linear>(dim, dim, bias));
  k = register_module("k", std::make_shared<Linear>(dim, dim, bias));
  v = register_module("v", std::make_shared<Linear>(dim, dim, bias));
  o = register_module("o", std::make_shared<Linear>(dim, dim, bias));
}

Var GraphMultiHeadAttention::forward(const Block& block, const Var& dst_states, const NodeStates& src_states) const {
  return attend({HeadGroup{heads_, block}}, dst_states, block_source_states(block, src_states));
}

Var GraphMultiHeadAttention::forward(const Block& block, const Var& states) const {
  TOPO_CHECK(block.src_types.size() == 1 && block.src_types[0] == block.dst_type,
             "GraphMultiHeadAttention: self-attention needs a block from '{}' into itself; this one reads {}",
             block.dst_type, fmt::join(block.src_types, ", "));
  return attend({HeadGroup{heads_, block}}, states, states);
}

Var GraphMultiHeadAttention::forward(const std::vector<HeadGroup>& groups, const Var& dst_states,
                                     const NodeStates& src_states) const {
  TOPO_CHECK(!groups.empty(), "GraphMultiHeadAttention: no head groups");
  return attend(groups, dst_states, block_source_states(groups[0].block, src_states));
}

Var GraphMultiHeadAttention::forward(const std::vector<HeadGroup>& groups, const Var& states) const {
  TOPO_CHECK(!groups.empty(), "GraphMultiHeadAttention: no head groups");
  return forward(groups, states, NodeStates{{groups[0].block.dst_type, states}});
}

Var GraphMultiHeadAttention::attend(const std::vector<HeadGroup>& groups, const Var& dst_states,
                                    const Var& src_states) const {
  const std::int64_t dh = dim_ / heads_;
  std::int64_t total_heads = 0;
  std::vector<const HeadGroup*> active;  // groups with heads, in order
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const HeadGroup& g = groups[i];
    TOPO_CHECK(g.heads >= 0, "GraphMultiHeadAttention: head group {} has {} heads", i, g.heads);
    TOPO_CHECK(g.block.same_nodes(groups[0].block),
               "GraphMultiHeadAttention: head group {} attends over other nodes than group 0 (destinations '{}' "
               "x {}, sources {} x {} against '{}' x {}, {} x {})",
               i, g.block.dst_type, g.block.num_dst, fmt::join(g.block.src_types, ","), g.block.num_src,
               groups[0].block.dst_type, groups[0].block.num_dst, fmt::join(groups[0].block.src_types, ","),
               groups[0].block.num_src);
    total_heads += g.heads;
    if (g.heads > 0) active.push_back(&g);
  }
  TOPO_CHECK(total_heads == heads_, "GraphMultiHeadAttention: head groups hold {} heads, the layer has {}",
             total_heads, heads_);
  const Block& block = groups[0].block;
  TOPO_CHECK(dst_states.ndim() == 2 && dst_states.size(1) == dim_ && src_states.ndim() == 2 &&
                 src_states.size(1) == dim_ && dst_states.size(0) == block.num_dst &&
                 src_states.size(0) == block.num_src,
             "GraphMultiHeadAttention(dim {}): states must be [{} destinations, {}] and [{} sources, {}], got {} "
             "and {}",
             dim_, block.num_dst, dim_, block.num_src, dim_, dst_states.data().str(), src_states.data().str());
  const Var qh = reshape(q->forward(dst_states), {dst_states.size(0), heads_, dh});
  const Var kh = reshape(k->forward(src_states), {src_states.size(0), heads_, dh});
  const Var vh = reshape(v->forward(src_states), {src_states.size(0), heads_, dh});
  std::vector<const Block*> blocks;
  std::vector<std::int64_t> sizes;
  for (const HeadGroup* g : active) {
    blocks.push_back(&g->block);
    sizes.push_back(g->heads);
  }
  const Var att = sparse_attention(blocks, sizes, qh, kh, vh, scale());
  return o->forward(reshape(att, {dst_states.size(0), dim_}));
}

float GraphMultiHeadAttention::scale() const { return 1.f / std::sqrt(static_cast<float>(dim_ / heads_)); }

Var GraphMultiHeadAttention::forward_packed(const Var& states, const std::vector<std::int64_t>& lengths,
                                            const std::vector<std::int64_t>& radii) const {
  TOPO_CHECK(states.ndim() == 2 && states.size(1) == dim_, "GraphMultiHeadAttention(dim {}): states must be [rows, {}], got {}",
             dim_, dim_, states.data().str());
  const std::int64_t rows = states.size(0), dh = dim_ / heads_;
  // One projection for q, k and v (their weights stacked, [3 dim, dim]) read in place by the kernel: one GEMM
  // of 3 dim columns each way instead of three, and in the backward one GEMM for the states' gradient instead of
  // three and two accumulations of [rows, dim].
  const bool biased = q->bias.defined();
  TOPO_CHECK(k->bias.defined() == biased && v->bias.defined() == biased,
             "GraphMultiHeadAttention: q, k and v must all have a bias or none (q {}, k {}, v {})", biased,
             k->bias.defined(), v->bias.defined());
  const Var w = concat({q->weight, k->weight, v->weight}, 0);
  const Var qkv = biased ? linear(states, w, concat({q->bias, k->bias, v->bias}, 0)) : matmul(states, w, false, true);
  return o->forward(
      reshape(flash_attention_packed(reshape(qkv, {rows, 3, heads_, dh}), lengths, scale(), radii), {rows, dim_}));
}

Var block_source_states(const Block& block, const NodeStates& states) {
  std::vector<Var> parts;
  for (std::size_t t = 0; t < block.src_types.size(); ++t) {
    const auto it = states.find(block.src_types[t]);
    TOPO_CHECK(it != states.end(), "block into '{}' reads node type '{}' but no states were given for it",
               block.dst_type, block.src_types[t]);
    TOPO_CHECK(it->second.ndim() >= 1 && it->second.size(0) == block.src_offsets[t + 1] - block.src_offsets[t],
               "block into '{}': states for '{}' have {} rows, the graph has {} such nodes", block.dst_type,
               block.src_types[t], it->second.ndim() >= 1 ? it->second.size(0) : 0,
               block.src_offsets[t + 1] - block.src_offsets[t]);
    parts.push_back(it->second);
  }
  return parts.size() == 1 ? parts[0] : concat(parts, 0);
}

}  // namespace topo::nn
