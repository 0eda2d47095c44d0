#include "nn/attention.hpp"

#include <cmath>

namespace topo::nn {

GraphMultiHeadAttention::GraphMultiHeadAttention(std::int64_t dim, std::int64_t heads, bool bias)
    : dim_(dim), heads_(heads) {
  TOPO_CHECK(heads >= 1 && dim % heads == 0, "GraphMultiHeadAttention: {} heads do not divide dim {}", heads, dim);
  q = register_module("q", std::make_shared<Linear>(dim, dim, bias));
  k = register_module("k", std::make_shared<Linear>(dim, dim, bias));
  v = register_module("v", std::make_shared<Linear>(dim, dim, bias));
  o = register_module("o", std::make_shared<Linear>(dim, dim, bias));
}

Var GraphMultiHeadAttention::forward(const RelationCsr& graph, const Var& dst_states, const Var& src_states) const {
  const std::int64_t dh = dim_ / heads_;
  TOPO_CHECK(dst_states.ndim() == 2 && dst_states.size(1) == dim_ && src_states.ndim() == 2 &&
                 src_states.size(1) == dim_,
             "GraphMultiHeadAttention(dim {}): states must be [rows, {}], got {} and {}", dim_, dim_,
             dst_states.data().str(), src_states.data().str());
  const Var qh = reshape(q->forward(dst_states), {dst_states.size(0), heads_, dh});
  const Var kh = reshape(k->forward(src_states), {src_states.size(0), heads_, dh});
  const Var vh = reshape(v->forward(src_states), {src_states.size(0), heads_, dh});
  const Var att = sparse_attention(graph, qh, kh, vh, 1.f / std::sqrt(static_cast<float>(dh)));
  return o->forward(reshape(att, {dst_states.size(0), dim_}));
}

Var block_sources(const Block& block, const std::map<std::string, Var>& states) {
  std::vector<Var> parts;
  for (std::size_t t = 0; t < block.src_types.size(); ++t) {
    const auto it = states.find(block.src_types[t]);
    TOPO_CHECK(it != states.end(), "block into '{}' reads node type '{}' but no states were given for it",
               block.dst_type, block.src_types[t]);
    TOPO_CHECK(it->second.size(0) == block.src_offsets[t + 1] - block.src_offsets[t],
               "block into '{}': states for '{}' have {} rows, the graph has {} such nodes", block.dst_type,
               block.src_types[t], it->second.size(0), block.src_offsets[t + 1] - block.src_offsets[t]);
    parts.push_back(it->second);
  }
  return parts.size() == 1 ? parts[0] : concat(parts, 0);
}

}  // namespace topo::nn
