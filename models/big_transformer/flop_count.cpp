#include "models/big_transformer/flop_count.hpp"

namespace topo::models {

FlopCount big_flops(const BigConfig& config, const BigTopology& t) {
  const EncoderConfig& e = config.encoder;
  const double n = total_tokens(t.lengths), b = static_cast<double>(t.lengths.size());
  const double d = static_cast<double>(e.hidden);
  const double f = static_cast<double>(config.ffn > 0 ? config.ffn : 4 * e.hidden);
  double layer = matmul_flops(2 * n, d, d) + matmul_flops(2 * static_cast<double>(t.chars.num_src), d, d) +
                 matmul_flops(n, d, f) + matmul_flops(n, f, d) + 4.0 * d * static_cast<double>(t.chars.num_edges());
  if (t.has_sentence) layer += matmul_flops(b, d, d);
  // + the character vectors' projection when their width is not hidden
  return FlopCount::from_forward(embedding_flops(e.embedding(), static_cast<std::int64_t>(n)) +
                                 static_cast<double>(e.layers) * layer);
}

}  // namespace topo::models
