#pragma once
// Full attention on AVX-512 CPUs with positions in lanes (flash_attention_lanes.cpp): register-blocked
// products whose broadcast operand is read straight from the tensors (any row stride), so no tile is packed;
// the forward's online softmax is vertical across 16 queries, the backward runs keys in lanes. Internal to
// kernels/dense: flash_attention.cpp calls these for full-attention heads of sequences of at least kMinLength
// rows when kAvailable; shorter sequences and bands keep their schedules.
#include <cstdint>
#include <vector>

#include "kernels/dense/flash_attention_band.hpp"

namespace topo::flash_lanes {

inline constexpr bool kAvailable = flash_band::kAvailable;
// Shorter sequences keep the sgemm tiles: a block of 64 queries would be mostly padding there, and the
// attention is a small share of their step.
inline constexpr std::int64_t kMinLength = 256;

// Per-thread scratch. Forward: the block's queries transposed (qt), a tile of scores (s), the outputs (ot) and
// lse lanes. Backward: a key block's k and v transposed (kt, vt), P (s), dS (ds) and dS transposed (ds_t), the
// accumulators dk, dv (per key block) and dq (per head), all feature-major.
struct Scratch {
  std::vector<float> qt, kt, vt, s, ds, ds_t, ot, lse, dkt, dvt, dqt;
};

// Rows [r0, r0 + rows) of one head of one sequence of h.len rows, every key: out (normalised) and lse
// (log-sum-exp of the scaled scores). h.radius is ignored (full attention).
void forward(const flash_band::HeadView& h, std::int64_t r0, std::int64_t rows, float scale, const float* q,
             const float* k, const float* v, float* out, float* lse, Scratch& w);

// The whole (sequence, head), every key: dq, dk, dv (every row of the head overwritten) from dout, the rows'
// lse and delta = dout . out (contiguous, h.len each; h.ld_lse unused).
void backward(const flash_band::HeadView& h, float scale, const float* q, const float* k, const float* v,
              const float* lse, const float* delta, const float* dout, float* dq, float* dk, float* dv, Scratch& w);

}  // namespace topo::flash_lanes
