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
  return attend({HeadGroup{heads_, block}}, dst_states, block_source_parts(block, src_states));
}

Var GraphMultiHeadAttention::forward(const Block& block, const Var& states) const {
  TOPO_CHECK(block.src_types.size() == 1 && block.src_types[0] == block.dst_type,
             "GraphMultiHeadAttention: self-attention needs a block from '{}' into itself; this one reads {}",
             block.dst_type, fmt::join(block.src_types, ", "));
  return attend({HeadGroup{heads_, block}}, states, {states});
}

Var GraphMultiHeadAttention::forward(const std::vector<HeadGroup>& groups, const Var& dst_states,
                                     const NodeStates& src_states) const {
  TOPO_CHECK(!groups.empty(), "GraphMultiHeadAttention: no head groups");
  return attend(groups, dst_states, block_source_parts(groups[0].block, src_states));
}

Var GraphMultiHeadAttention::forward(const std::vector<HeadGroup>& groups, const Var& states) const {
  TOPO_CHECK(!groups.empty(), "GraphMultiHeadAttention: no head groups");
  return forward(groups, states, NodeStates{{groups[0].block.dst_type, states}});
}

Var GraphMultiHeadAttention::attend(const std::vector<HeadGroup>& groups, const Var& dst_states,
                                    const std::vector<Var>& src_parts) const {
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
  std::int64_t ns = 0;
  bool widths = true;
  for (const Var& part : src_parts) {
    widths = widths && part.ndim() == 2 && part.size(1) == dim_;
    ns += part.ndim() >= 1 ? part.size(0) : 0;
  }
  TOPO_CHECK(dst_states.ndim() == 2 && dst_states.size(1) == dim_ && widths && dst_states.size(0) == block.num_dst &&
                 ns == block.num_src,
             "GraphMultiHeadAttention(dim {}): states must be [{} destinations, {}] and [{} sources, {}], got {} "
             "and {} source rows (of width {})",
             dim_, block.num_dst, dim_, block.num_src, dim_, dst_states.data().str(), ns,
             widths ? std::to_string(dim_) : "another");
  const Var qh = reshape(q->forward(dst_states), {dst_states.size(0), heads_, dh});
  const Var kv = reshape(project({k.get(), v.get()}, src_parts), {ns, 2, heads_, dh});
  Var att;
  if (active.size() == 1) {
    att = sparse_attention_kv(active[0]->block, qh, kv, scale());
  } else {  // per-group slices of heads: k and v as tensors of their own
    std::vector<const Block*> blocks;
    std::vector<std::int64_t> sizes;
    for (const HeadGroup* g : active) {
      blocks.push_back(&g->block);
      sizes.push_back(g->heads);
    }
    const std::vector<Var> halves = split(kv, {1, 1}, 1);
    att = sparse_attention(blocks, sizes, qh, reshape(halves[0], {ns, heads_, dh}), reshape(halves[1], {ns, heads_, dh}),
                           scale());
  }
  return o->forward(reshape(att, {dst_states.size(0), dim_}));
}

// Several projections of the same states as one GEMM, their weights stacked ([P dim, dim]): each way
// (forward, the states' gradient, the weights' gradient) one GEMM of P dim columns instead of P GEMMs, and no
// accumulation of P [rows, dim] gradients in the backward. The wider GEMMs run nearer the peak: for Star's
// 32,896 satellite sources (2 threads), k and v as one [600, 300] product took 63 ms instead of 68 forward and
// 70 instead of 75 for the weights' gradient. The attention kernels read the result in place ([rows, P, H, dh]).
// The sparse kernel pays for it on DRAM-sized blocks: a pass that reads only the k halves of the rows streams
// as slowly as one reading them whole (Star's satellites, n = 128: forward 4.0 -> 7.4 ms, backward 14.4 ->
// 16.0 ms); the GEMMs gain more: Star's training step went 957 -> 920 ms (n = 128, three interleaved runs).
Var GraphMultiHeadAttention::project(const std::vector<const Linear*>& projections, const std::vector<Var>& parts) const {
  const bool biased = projections[0]->bias.defined();
  std::vector<Var> weights, biases;
  for (const Linear* l : projections) {
    TOPO_CHECK(l->bias.defined() == biased,
               "GraphMultiHeadAttention: the projections stacked into one GEMM must all have a bias or none");
    weights.push_back(l->weight);
    if (biased) biases.push_back(l->bias);
  }
  // Several parts (a block's source node types): each projected into its rows, no concat of their states.
  return linear_rows(parts, concat(weights, 0), biased ? concat(biases, 0) : Var());
}

float GraphMultiHeadAttention::scale() const { return 1.f / std::sqrt(static_cast<float>(dim_ / heads_)); }

Var GraphMultiHeadAttention::forward_packed(const Var& states, const std::vector<std::int64_t>& lengths,
                                            const std::vector<std::int64_t>& radii) const {
  TOPO_CHECK(states.ndim() == 2 && states.size(1) == dim_, "GraphMultiHeadAttention(dim {}): states must be [rows, {}], got {}",
             dim_, dim_, states.data().str());
  const std::int64_t rows = states.size(0), dh = dim_ / heads_;
  const Var qkv = project({q.get(), k.get(), v.get()}, {states});
  return o->forward(
      reshape(flash_attention_packed(reshape(qkv, {rows, 3, heads_, dh}), lengths, scale(), radii), {rows, dim_}));
}

std::vector<Var> block_source_parts(const Block& block, const NodeStates& states) {
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
  return parts;
}

}  // namespace topo::nn
