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
// This file holds what every count shares; each model counts its own products in its folder, beside its
// equations (<folder>/flop_count.hpp: star_flops, transformer_flops, multiscale_flops, big_flops).
#include <cstdint>
#include <vector>

#include "models/sequence_embedding.hpp"

namespace topo::models {

struct FlopCount {
  double forward = 0;
  double backward = 0;  // 2 x forward
  double train_step() const { return forward + backward; }
  // A step's count from its forward FLOPs (backward = 2 x forward).
  static FlopCount from_forward(double forward) { return {forward, 2.0 * forward}; }
};

// A [rows, in] x [in, out] product: 2 * rows * in * out.
inline double matmul_flops(double rows, double in, double out) { return 2.0 * rows * in * out; }

// The tokens of a batch of sentences (each length >= 1, a topo::Error naming it otherwise).
double total_tokens(const std::vector<std::int64_t>& lengths);

// The embedding's projection when the token table (or the input features) is narrower or wider than hidden:
// 2 * tokens * width * hidden; 0 when tokens are looked up at the model's width.
double embedding_flops(const EmbeddingConfig& embedding, std::int64_t tokens);

}  // namespace topo::models
