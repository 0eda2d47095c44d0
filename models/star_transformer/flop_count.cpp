#include "models/star_transformer/flop_count.hpp"

namespace topo::models {

FlopCount star_flops(const StarConfig& config, const std::vector<std::int64_t>& lengths) {
  const double n = total_tokens(lengths), b = static_cast<double>(lengths.size());
  const double d = static_cast<double>(config.encoder.hidden);
  const StarTopology t = star_topology(lengths, config.variant);
  double layer = 0;
  // Satellites: q and o on the tokens, k and v on the block's sources; the relay: q and o on one row per
  // sentence, k and v on its sources.
  layer += matmul_flops(2 * n, d, d) + matmul_flops(2 * static_cast<double>(t.satellite.num_src), d, d);
  layer += matmul_flops(2 * b, d, d) + matmul_flops(2 * static_cast<double>(t.relay.num_src), d, d);
  // Attention: q.k and p v, d multiply-adds each per edge (all heads together).
  layer += 4.0 * d * static_cast<double>(t.satellite.num_edges() + t.relay.num_edges());
  return FlopCount::from_forward(embedding_flops(config.encoder.embedding(), static_cast<std::int64_t>(n)) +
                                 static_cast<double>(config.encoder.layers) * layer);
}

}  // namespace topo::models
