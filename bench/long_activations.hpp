#pragma once
// Suite `long`'s analytical count of the activation bytes a training step keeps for backward: what the tape
// holds once the forward (and the loss) has run, derived from which tensors each op of the model saves. The
// suite measures the same thing as the allocator's live bytes after the forward minus those before it (the
// topology graph, built first, measured and subtracted apart), so a ratio far from 1 means a tensor kept that
// the equations do not need (a copy, a dense buffer, a leak) or a count that forgot one.
//
// Notation: N tokens in B sentences, rows R = N (+ B where a [CLS] row leads each sentence), hidden d, H heads,
// L layers, feed-forward f = 4d; counts in floats (4 bytes) unless said. What each op saves (nn/):
//   embedding_sum (token + position table rows): its two int64 id tensors [R] (16 R bytes); its output [R, d]
//       is kept by the first layer's projections.
//   linear / linear_rows: their inputs (the states they project; shared with whoever else keeps them). Where
//       GraphMultiHeadAttention stacks projections into one GEMM (W_K|W_V, or W_Q|W_K|W_V on the packed path)
//       the concatenated weight and bias are a new tensor the linear keeps: P d^2 + P d floats per attention
//       call, not per token (it shows at short n).
//   sparse_attention_kv, flash_attention_packed: q, the stacked k|v (or q|k|v) projections, and per row and
//       head the log-sum-exp [R, H]; their output [R, d] is kept by W_O's linear as its input.
//   relu: both its input and its output; layer_norm: its input, mean and rstd [R]; residual_relu_layer_norm:
//       both inputs (the residual and the update), mean and rstd. Their output is the next layer's input.
//   add: nothing its backward needs (but see the dense Transformer). Readouts (sum / mean / max over a sentence): a segment block of int32 ids, about 4 N + R
//       entries (in and out CSR), plus max's argmax [B, d] (left out: B d is not per token).
// The topology graph (Star's rings and relay edges, the window + global blocks) is counted apart: it is not
// an activation and the suite reports its bytes as `topology_bytes`.
#include <cstdint>

namespace topo::bench {

struct ActivationShape {
  std::int64_t tokens = 0, sentences = 0, hidden = 0, heads = 0, layers = 0;
};

namespace detail {
inline double embedding_bytes(double rows, double d) { return 4 * rows * d + 16 * rows; }  // output + 2 id tensors
inline double segment_bytes(double tokens, double rows) { return 4 * (4 * tokens + rows); }  // one readout's block
// P projections stacked into one weight [P d, d] and bias [P d], per attention call.
inline double stacked_weight_bytes(double projections, double d) { return 4 * projections * (d * d + d); }
}  // namespace detail

// Star-Transformer (residual off: LayerNorm(ReLU(MultiAtt)), models/star_transformer), R = N. Per layer:
//   satellites: q [N, d], k|v over [sat; emb; relay] [2N + B, 2d] -> 4 N d, attention output [N, d], lse [N, H],
//               W_O's output (relu's input) [N, d], relu's output [N, d], LayerNorm's output [N, d], mean + rstd:
//               9 N d + N H + 2 N
//   relay:      k|v over [sat; relay] [N + B, 2d] -> 2 N d (its q, output and norm are [B, d])
// = 11 N d + N H + 2 N per layer, and both phases' stacked W_K|W_V; plus the embedding E [N, d] (a source of
// every layer) and two readouts (s^0 = mean(E), max_i h_i).
inline double star_kept_bytes(const ActivationShape& s) {
  const double n = double(s.tokens), d = double(s.hidden), h = double(s.heads), l = double(s.layers);
  return detail::embedding_bytes(n, d) + 4 * l * (11 * n * d + n * h + 2 * n) +
         l * 2 * detail::stacked_weight_bytes(2, d) + 2 * detail::segment_bytes(n, n);
}

// Attention + residual ReLU LayerNorm, no feed-forward, one [CLS] row per sentence (R = N + B): Multi-Scale on
// its band path (flash_attention_packed over q|k|v) and the window + global topology transformer on the graph
// path (q and k|v apart): either way per layer q, k, v [R, 3d], attention output [R, d], lse [R, H], the
// update [R, d], the LayerNorm output [R, d], mean + rstd: 6 R d + R H + 2 R; plus the embedding [R, d] and
// the max readout over the token rows. Stacked weights: W_Q|W_K|W_V on the band path (`projections` 3), W_K|W_V
// on the graph path (2).
inline double cls_attention_kept_bytes(const ActivationShape& s, double projections) {
  const double n = double(s.tokens), r = n + double(s.sentences), d = double(s.hidden), h = double(s.heads);
  const double l = double(s.layers);
  return detail::embedding_bytes(r, d) + 4 * l * (6 * r * d + r * h + 2 * r) +
         l * detail::stacked_weight_bytes(projections, d) + detail::segment_bytes(n, r);
}
inline double multiscale_band_kept_bytes(const ActivationShape& s) { return cls_attention_kept_bytes(s, 3); }
inline double window_global_kept_bytes(const ActivationShape& s) { return cls_attention_kept_bytes(s, 2); }

// The dense Transformer (encode_dense: fused dense attention, post-LN blocks with a 4d feed-forward), R = N.
// Per layer: q|k|v [N, 3d], attention output [N, d], lse [N, H]; x + attention (LayerNorm's input) [N, d],
// its output a [N, d]; W_1 a [N, 4d] (relu's input) and relu's output [N, 4d]; a + W_2 relu(.) (LayerNorm's
// input) [N, d], its output [N, d]; two means + rstds: 16 N d + N H + 4 N. W_O's and W_2's outputs go into an
// add, whose backward needs neither: the count leaves them out, but the tape holds them anyway (an autograd
// node keeps its inputs' Vars, data included: nn/autograd.cpp make_output), 2 N d per layer that the measured
// kept bytes show as kept_over_analytical ~1.1. Plus the stacked W_Q|W_K|W_V per layer, the embedding and two readouts (mean, max).
inline double dense_kept_bytes(const ActivationShape& s) {
  const double n = double(s.tokens), d = double(s.hidden), h = double(s.heads), l = double(s.layers);
  return detail::embedding_bytes(n, d) + 4 * l * (16 * n * d + n * h + 4 * n) + l * detail::stacked_weight_bytes(3, d) +
         2 * detail::segment_bytes(n, n);
}

}  // namespace topo::bench
