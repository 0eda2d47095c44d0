// Model FLOPs from the shapes (see flop_count.hpp for what is counted).
#include "models/flop_count.hpp"

#include "kernels/error.hpp"
#include "models/multiscale_transformer/scales.hpp"

namespace topo::models {
namespace {

// A [rows, in] x [in, out] product.
double matmul_flops(double rows, double in, double out) { return 2.0 * rows * in * out; }

FlopCount from_forward(double forward) { return {forward, 2.0 * forward}; }

double total_tokens(const std::vector<std::int64_t>& lengths) {
  double n = 0;
  for (std::int64_t len : lengths) {
    TOPO_CHECK(len >= 1, "flop count: sentence length {} (must be >= 1)", len);
    n += static_cast<double>(len);
  }
  return n;
}

}  // namespace

double embedding_flops(const EmbeddingConfig& e, std::int64_t tokens) {
  const std::int64_t width = e.input_dim > 0 ? e.input_dim : e.embedding_dim;
  return width > 0 && width != e.hidden ? matmul_flops(static_cast<double>(tokens), static_cast<double>(width),
                                                       static_cast<double>(e.hidden))
                                        : 0.0;
}

FlopCount star_flops(const StarConfig& config, const std::vector<std::int64_t>& lengths) {
  const double n = total_tokens(lengths), b = static_cast<double>(lengths.size()), d = static_cast<double>(config.hidden);
  const StarTopology t = star_topology(lengths, config.variant);
  double layer = 0;
  // Satellites: q and o on the tokens, k and v on the block's sources; the relay: q and o on one row per
  // sentence, k and v on its sources.
  layer += matmul_flops(2 * n, d, d) + matmul_flops(2 * static_cast<double>(t.satellite.num_src), d, d);
  layer += matmul_flops(2 * b, d, d) + matmul_flops(2 * static_cast<double>(t.relay.num_src), d, d);
  // Attention: q.k and p v, d multiply-adds each per edge (all heads together).
  layer += 4.0 * d * static_cast<double>(t.satellite.num_edges() + t.relay.num_edges());
  return from_forward(embedding_flops(config.embedding(), static_cast<std::int64_t>(n)) +
                      static_cast<double>(config.layers) * layer);
}

FlopCount transformer_flops(const TransformerConfig& config, const std::vector<std::int64_t>& lengths) {
  const double n = total_tokens(lengths), d = static_cast<double>(config.hidden);
  const double f = static_cast<double>(config.ffn > 0 ? config.ffn : 4 * config.hidden);
  double squares = 0;  // sum of n_b^2: every query against every key of its sentence
  for (std::int64_t len : lengths) squares += static_cast<double>(len) * static_cast<double>(len);
  const double layer = matmul_flops(4 * n, d, d) + matmul_flops(n, d, f) + matmul_flops(n, f, d) + 4.0 * squares * d;
  return from_forward(embedding_flops(config.embedding(), static_cast<std::int64_t>(n)) +
                      static_cast<double>(config.layers) * layer);
}

std::vector<double> multiscale_window_flops(const MultiScaleConfig& config, const std::vector<std::int64_t>& lengths) {
  const MultiScaleTopology t = multiscale_topology(lengths, config.scales);
  const auto heads = head_distribution(config.alpha, config.layers, static_cast<std::int64_t>(config.scales.size()),
                                       config.heads);
  std::vector<double> per_scale(config.scales.size(), 0.0);
  for (std::int64_t l = 0; l < config.layers; ++l)
    for (std::size_t k = 0; k < config.scales.size(); ++k)
      per_scale[k] += 4.0 * static_cast<double>(config.head_dim()) * static_cast<double>(heads[static_cast<std::size_t>(l)][k]) *
                      static_cast<double>(t.scales[k].num_edges());
  return per_scale;
}

FlopCount multiscale_flops(const MultiScaleConfig& config, const std::vector<std::int64_t>& lengths) {
  const double n = total_tokens(lengths), d = static_cast<double>(config.hidden);
  const double positions = n + static_cast<double>(lengths.size());  // tokens + one [CLS] per sentence
  double forward = embedding_flops(config.embedding(), static_cast<std::int64_t>(n)) +
                   static_cast<double>(config.layers) * matmul_flops(4 * positions, d, d);
  for (double window : multiscale_window_flops(config, lengths)) forward += window;
  return from_forward(forward);
}

FlopCount big_flops(const BigConfig& config, const BigTopology& t) {
  const double n = total_tokens(t.lengths), b = static_cast<double>(t.lengths.size()), d = static_cast<double>(config.hidden);
  const double f = static_cast<double>(config.ffn > 0 ? config.ffn : 4 * config.hidden);
  double layer = matmul_flops(2 * n, d, d) + matmul_flops(2 * static_cast<double>(t.chars.num_src), d, d) +
                 matmul_flops(n, d, f) + matmul_flops(n, f, d) + 4.0 * d * static_cast<double>(t.chars.num_edges());
  if (t.has_sentence) layer += matmul_flops(b, d, d);
  return from_forward(static_cast<double>(config.layers) * layer);  // char tables have the model's width
}

}  // namespace topo::models
