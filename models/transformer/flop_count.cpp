#include "models/transformer/flop_count.hpp"

namespace topo::models {

FlopCount transformer_flops(const TransformerConfig& config, const std::vector<std::int64_t>& lengths) {
  const EncoderConfig& e = config.encoder;
  const double n = total_tokens(lengths), d = static_cast<double>(e.hidden);
  const double f = static_cast<double>(config.ffn > 0 ? config.ffn : 4 * e.hidden);
  double squares = 0;  // sum of n_b^2: every query against every key of its sentence
  for (std::int64_t len : lengths) squares += static_cast<double>(len) * static_cast<double>(len);
  const double layer = matmul_flops(4 * n, d, d) + matmul_flops(n, d, f) + matmul_flops(n, f, d) + 4.0 * squares * d;
  return FlopCount::from_forward(embedding_flops(e.embedding(), static_cast<std::int64_t>(n)) +
                                 static_cast<double>(e.layers) * layer);
}

}  // namespace topo::models
