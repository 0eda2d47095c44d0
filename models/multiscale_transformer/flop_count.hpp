#pragma once
// The Multi-Scale Transformer's model FLOPs (what is counted: models/flop_count.hpp). Per layer and sentence
// of n tokens, hidden d (forward): q, k, v, o over n + 1 positions ([CLS]): 8 (n + 1) d^2, plus 4 d_h per
// edge and head of each scale's window graph, for the heads the alpha rule gives that scale in that layer.
#include <cstdint>
#include <vector>

#include "models/flop_count.hpp"
#include "models/multiscale_transformer/multiscale_transformer.hpp"

namespace topo::models {

// Multi-Scale (its window graphs from multiscale_topology, head counts from the alpha rule).
FlopCount multiscale_flops(const MultiScaleConfig& config, const std::vector<std::int64_t>& lengths);
// Its attention's forward FLOPs per scale (config.scales order, all layers): the part of multiscale_flops that
// grows with the window widths, so a fraction scale (N/4) shows its quadratic share.
std::vector<double> multiscale_window_flops(const MultiScaleConfig& config, const std::vector<std::int64_t>& lengths);

}  // namespace topo::models
