#include "models/multiscale_transformer/flop_count.hpp"

#include "models/multiscale_transformer/scales.hpp"

namespace topo::models {

std::vector<double> multiscale_window_flops(const MultiScaleConfig& config, const std::vector<std::int64_t>& lengths) {
  const EncoderConfig& e = config.encoder;
  const MultiScaleTopology t = multiscale_topology(lengths, config.scales);
  const auto heads =
      head_distribution(config.alpha, e.layers, static_cast<std::int64_t>(config.scales.size()), e.heads);
  std::vector<double> per_scale(config.scales.size(), 0.0);
  for (std::int64_t l = 0; l < e.layers; ++l)
    for (std::size_t k = 0; k < config.scales.size(); ++k)
      per_scale[k] += 4.0 * static_cast<double>(config.head_dim()) * static_cast<double>(heads[static_cast<std::size_t>(l)][k]) *
                      static_cast<double>(t.scales[k].num_edges());
  return per_scale;
}

FlopCount multiscale_flops(const MultiScaleConfig& config, const std::vector<std::int64_t>& lengths) {
  const EncoderConfig& e = config.encoder;
  const double n = total_tokens(lengths), d = static_cast<double>(e.hidden);
  const double positions = n + static_cast<double>(lengths.size());  // tokens + one [CLS] per sentence
  double forward = embedding_flops(e.embedding(), static_cast<std::int64_t>(n)) +
                   static_cast<double>(e.layers) * matmul_flops(4 * positions, d, d);
  for (double window : multiscale_window_flops(config, lengths)) forward += window;
  return FlopCount::from_forward(forward);
}

}  // namespace topo::models
