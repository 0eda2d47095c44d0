#pragma once
// Full attention's forward on AVX-512 CPUs with queries in lanes (flash_attention_lanes.cpp): register-blocked
// products that read k and v straight from the tensors (broadcasts, any row stride), so no tile is packed,
// and an online softmax that is vertical across 16 queries. Internal to kernels/dense: flash_attention.cpp
// calls it for full-attention heads of sequences of at least kMinLength rows when kAvailable; shorter ones,
// bands and the backward keep their schedules.
#include <cstdint>
#include <vector>

#include "kernels/dense/flash_attention_band.hpp"

namespace topo::flash_lanes {

inline constexpr bool kAvailable = flash_band::kAvailable;
// Shorter sequences keep the sgemm tiles: a block of 64 queries would be mostly padding there, and the
// attention is a small share of their step.
inline constexpr std::int64_t kMinLength = 256;

struct Scratch {
  std::vector<float> qt, st, ot, lse;
};

// Rows [r0, r0 + rows) of one head of one sequence of h.len rows, every key: out (normalised) and lse
// (log-sum-exp of the scaled scores). h.radius is ignored (full attention).
void forward(const flash_band::HeadView& h, std::int64_t r0, std::int64_t rows, float scale, const float* q,
             const float* k, const float* v, float* out, float* lse, Scratch& w);

}  // namespace topo::flash_lanes
