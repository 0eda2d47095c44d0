#pragma once
// BiG-Transformer's model FLOPs (what is counted: models/flop_count.hpp). Per layer (forward): q, o over the
// n characters, k, v over the chars block's sources (words and sentence nodes), W_s over one row per
// sentence, feed-forward 4 n d f, and 4 d per edge of the chars block (the word sums are additions: not
// counted). Its char tables have the model's width: no embedding projection.
#include "models/big_transformer/big_transformer.hpp"
#include "models/flop_count.hpp"

namespace topo::models {

// BiG on a topology already built (its words come from lexicon matching or the batch: big_topology).
FlopCount big_flops(const BigConfig& config, const BigTopology& topology);

}  // namespace topo::models
