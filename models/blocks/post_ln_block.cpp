#include "models/blocks/post_ln_block.hpp"

#include "nn/ops.hpp"

namespace topo::models {

PostLnBlock::PostLnBlock(std::int64_t hidden, std::int64_t heads, std::int64_t ffn, float p) {
  // Registration order fixes the parameters' names and reset seeds: keep it.
  attention = register_module("attention", std::make_shared<nn::GraphMultiHeadAttention>(hidden, heads));
  attention_norm = register_module("attention_norm", std::make_shared<nn::LayerNorm>(hidden));
  ffn_in = register_module("ffn_in", std::make_shared<nn::Linear>(hidden, ffn));
  ffn_out = register_module("ffn_out", std::make_shared<nn::Linear>(ffn, hidden));
  ffn_norm = register_module("ffn_norm", std::make_shared<nn::LayerNorm>(hidden));
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(p));
}

nn::Var PostLnBlock::finish(const nn::Var& h, const nn::Var& attended) const {
  const nn::Var a = attention_norm->forward(h + dropout->forward(attended));
  return ffn_norm->forward(a + dropout->forward(ffn_out->forward(relu(ffn_in->forward(a)))));
}

}  // namespace topo::models
