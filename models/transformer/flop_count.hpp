#pragma once
// The Transformer baseline's model FLOPs (what is counted: models/flop_count.hpp). Per layer and sentence of
// n tokens, hidden d, feed-forward width f (forward): q, k, v, o 8 n d^2, feed-forward 4 n d f (f = 4d:
// 16 n d^2), attention 4 n^2 d: 24 n d^2 + 4 n^2 d at f = 4d. Model FLOPs: each sentence at its own length;
// the padding encode_padded computes for shorter sentences of a batch is not counted.
#include <cstdint>
#include <vector>

#include "models/flop_count.hpp"
#include "models/transformer/transformer.hpp"

namespace topo::models {

// The dense Transformer (encode_dense; the graph path over the full topology does the same products).
FlopCount transformer_flops(const TransformerConfig& config, const std::vector<std::int64_t>& lengths);

}  // namespace topo::models
