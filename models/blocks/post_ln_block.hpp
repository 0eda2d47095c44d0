#pragma once
// The post-LN Transformer block (Vaswani et al. 2017) around an attention its caller runs:
//   h = LN(h + Dropout(attended)),  h = LN(h + Dropout(W2 ReLU(W1 h)))
// The Transformer baseline runs its attention over the full graph, packed or padded; BiG-Transformer over
// each character's words and sentence node. The block owns the attention's weights (`attention`) so both
// keep one parameter layout, but not the call: each model feeds `finish` the attention result its topology
// gives. Parameter names (checkpoints): attention.*, attention_norm.*, ffn_in.*, ffn_out.*, ffn_norm.*.
#include <cstdint>
#include <memory>

#include "nn/attention.hpp"
#include "nn/layers.hpp"
#include "nn/module.hpp"

namespace topo::models {

struct PostLnBlock : nn::Module {
  // ffn: the feed-forward width (the callers pass 4 * hidden by default); dropout on both sublayers.
  PostLnBlock(std::int64_t hidden, std::int64_t heads, std::int64_t ffn, float dropout);
  // h, attended: [rows, hidden] -> [rows, hidden].
  nn::Var finish(const nn::Var& h, const nn::Var& attended) const;

  std::shared_ptr<nn::GraphMultiHeadAttention> attention;
  std::shared_ptr<nn::LayerNorm> attention_norm, ffn_norm;
  std::shared_ptr<nn::Linear> ffn_in, ffn_out;
  std::shared_ptr<nn::Dropout> dropout;
};

}  // namespace topo::models
