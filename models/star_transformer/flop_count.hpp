#pragma once
// Star-Transformer's model FLOPs (what is counted: models/flop_count.hpp). Per layer and sentence of n tokens,
// hidden d (forward): the satellites' q, o over n rows and k, v over the 2n + 1 sources [sat; emb; relay]; the
// relay's q, o over 1 row and k, v over its n + 1 sources: 16 n d^2 + 12 d^2, plus 4 d per edge of either
// block (q.k and p v).
#include <cstdint>
#include <vector>

#include "models/flop_count.hpp"
#include "models/star_transformer/star_transformer.hpp"

namespace topo::models {

// Star over sentences of `lengths` (its edges from star_topology of that batch and the config's variant).
FlopCount star_flops(const StarConfig& config, const std::vector<std::int64_t>& lengths);

}  // namespace topo::models
