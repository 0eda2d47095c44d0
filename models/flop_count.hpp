#pragma once
// Model FLOPs counted from the shapes, for MFU (model FLOPs utilisation = these FLOPs / step time / the
// measured sgemm peak; topo-bench models). Counted: every matrix product (2 FLOPs per multiply-add): the
// linear projections, the feed-forward layers, and attention's score and weighted-sum products (sparse: per
// edge; dense: per query x key pair of the padded [L, L] block the dense path computes). Not counted:
// biases, LayerNorm, ReLU, softmax, embedding lookups and pooling (O(n d) each, well under 1% at d = 300).
// Backward = 2 x forward: each product has two gradient products (input and weight; for attention the two
// operands), as in a training step where the embeddings are trained (so the first layer's input gradient is
// needed too).
//
// Per layer and sentence of n tokens, hidden d (forward):
//   Star:        satellites q, o over n rows and k, v over the 2n + 1 sources [sat; emb; relay]; the relay's
//                q, o over 1 row and k, v over its n + 1 sources: 16 n d^2 + 12 d^2, plus 4 d per edge of
//                either block (q.k and p v);
//   Transformer: q, k, v, o 8 n d^2, feed-forward 4 n d f (f = 4d: 16 n d^2), attention 4 n^2 d:
//                24 n d^2 + 4 n^2 d at f = 4d (model FLOPs: each sentence at its own length; the padding the
//                dense path computes for shorter sentences of a batch is not counted);
//   Multi-Scale: q, k, v, o over n + 1 positions ([CLS]): 8 (n + 1) d^2, plus 4 d_h per edge and head of
//                each scale's window graph, for the heads the alpha rule gives that scale in that layer;
//   BiG:         q, o over the n characters, k, v over the chars block's sources (words and sentence nodes),
//                W_s over one row per sentence, feed-forward 4 n d f, and 4 d per edge of the chars block
//                (the word sums are additions: not counted).
#include <cstdint>
#include <vector>

#include "models/big_transformer/big_transformer.hpp"
#include "models/multiscale_transformer/multiscale_transformer.hpp"
#include "models/star_transformer/star_transformer.hpp"
#include "models/transformer/transformer.hpp"

namespace topo::models {

struct FlopCount {
  double forward = 0;
  double backward = 0;  // 2 x forward
  double train_step() const { return forward + backward; }
};

// The embedding's projection when the token table (or the input features) is narrower or wider than hidden:
// 2 * tokens * width * hidden; 0 when tokens are looked up at the model's width.
double embedding_flops(const EmbeddingConfig& embedding, std::int64_t tokens);

// Star over sentences of `lengths` (its edges from star_topology of that batch and the config's variant).
FlopCount star_flops(const StarConfig& config, const std::vector<std::int64_t>& lengths);
// The dense Transformer (encode_dense; the graph path over the full topology does the same products).
FlopCount transformer_flops(const TransformerConfig& config, const std::vector<std::int64_t>& lengths);
// Multi-Scale (its window graphs from multiscale_topology, head counts from the alpha rule).
FlopCount multiscale_flops(const MultiScaleConfig& config, const std::vector<std::int64_t>& lengths);
// Its attention's forward FLOPs per scale (config.scales order, all layers): the part of multiscale_flops that
// grows with the window widths, so a fraction scale (N/4) shows its quadratic share.
std::vector<double> multiscale_window_flops(const MultiScaleConfig& config, const std::vector<std::int64_t>& lengths);
// BiG on a topology already built (its words come from lexicon matching or the batch: big_topology).
FlopCount big_flops(const BigConfig& config, const BigTopology& topology);

}  // namespace topo::models
