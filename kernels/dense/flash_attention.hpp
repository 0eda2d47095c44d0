#pragma once
// Fused dense self-attention over packed variable-length sequences (the dense Transformer baseline):
// out_i = sum_{j in seq(i)} softmax_j(scale * q_i . k_j) v_j per head, without any [L, L] tensor — tiles of
// queries x keys with an online softmax (forward), the scores recomputed from the kept row log-sum-exp
// (backward). Padding is by lengths: sequence b owns rows [offset_b, offset_b + lengths[b]) of q, k, v and
// attends only within them, so no padded row is ever computed.
//
// Bands (windowed attention, Multi-Scale's head groups): with radii, query i of sequence b in head h attends
// only the keys j of its sequence with |i - j| <= radius(b, h) — exactly builders::window_batch with width
// 2 radius + 1, clipped at the sequence ends. Key tiles wholly outside the band are never computed (the
// speed: O(L r) instead of O(L^2)); tiles the band's edge crosses are masked per element. `radii` is
//   empty         full attention (every head),
//   [B]           radius per sequence, the same for every head,
//   [B * heads]   radius per (sequence, head), row-major: one call serves head groups with different bands.
// A radius >= length - 1 is full attention; radii must be >= 0.
#include <vector>

#include "kernels/tensor.hpp"

namespace topo {

struct FlashAttentionOutput {
  Tensor out;  // [rows, H, dv]
  Tensor lse;  // [rows, H]: log-sum-exp of the scaled scores, kept for backward
};
// q, k [rows, H, dk], v [rows, H, dv], rows = sum(lengths), every length >= 1.
FlashAttentionOutput flash_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                     const std::vector<std::int64_t>& lengths, float scale,
                                     const std::vector<std::int64_t>& radii = {});

struct FlashAttentionGrads {
  Tensor dq, dk, dv;
};
FlashAttentionGrads flash_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const std::vector<std::int64_t>& lengths,
                                             const FlashAttentionOutput& forward, const Tensor& grad_out, float scale,
                                             const std::vector<std::int64_t>& radii = {});

// The same attention over q, k, v interleaved in one tensor qkv [rows, 3, H, dh] — one projection's output
// [rows, 3 H dh] reshaped — read in place (on CUDA: split into copies first). The backward returns dqkv in the
// same layout, so the projection's gradient is one GEMM instead of three and two accumulations.
FlashAttentionOutput flash_attention_packed(const Tensor& qkv, const std::vector<std::int64_t>& lengths, float scale,
                                            const std::vector<std::int64_t>& radii = {});
Tensor flash_attention_packed_backward(const Tensor& qkv, const std::vector<std::int64_t>& lengths,
                                       const FlashAttentionOutput& forward, const Tensor& grad_out, float scale,
                                       const std::vector<std::int64_t>& radii = {});

// The readable reference (CPU, float, one row at a time with its full score row, masked keys skipped): what
// the tiled kernels compute, kept beside them for tests and for reading.
FlashAttentionOutput flash_attention_reference(const Tensor& q, const Tensor& k, const Tensor& v,
                                               const std::vector<std::int64_t>& lengths, float scale,
                                               const std::vector<std::int64_t>& radii = {});

}  // namespace topo
