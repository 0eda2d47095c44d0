#pragma once
// Fused dense attention (FlashAttention-style) over packed variable-length sequences: the per-row math of one
// tile of scores, shared by the CPU (flash_attention.cpp) and CUDA (flash_attention_cuda.cu) kernels.
//
// A score row s_j = scale * q . k_j over one key tile is folded into a running max m and running sum
// l = sum exp(s - m) (the online softmax); the forward keeps only lse = m + log l per (row, head), and the
// backward recomputes p_j = exp(s_j - lse) and ds_j = p_j (dp_j - delta), delta = dout . out.
// Bands: a row i sees keys [i - radius, i + radius] only; within a tile that is one contiguous column range
// (flash_band_columns), and the scores outside it are set to p = 0 (and ds = 0) instead of being softmaxed.
#include <cmath>
#include <cstdint>

#include "kernels/dense/fast_exp.hpp"
#include "kernels/dense/reduce_math.hpp"
#include "kernels/hd.hpp"

// `omp simd` on host loops; absent in CUDA translation units (nvcc's host pass runs without OpenMP).
#if defined(_OPENMP) && !defined(__CUDACC__)
#define TOPO_FLASH_SIMD _Pragma("omp simd")
#else
#define TOPO_FLASH_SIMD
#endif

namespace topo {

// In place over one row of a score tile, s[0, n): s_j -> p_j = exp(s_j - m_new), with m_new the max of the
// running max m and the row. Updates m and l; returns the factor exp(m_old - m_new) that the row's
// earlier output accumulation must be multiplied by (0 on the first tile, where m_old = -inf).
TOPO_HD float flash_row_softmax(float* s, std::int64_t n, float& m, float& l) {
#if defined(__CUDACC__)  // CUDA translation units (both passes): plain loops; the lane helpers are host-only
  float m_new = m;
  for (std::int64_t j = 0; j < n; ++j) m_new = fmaxf(m_new, s[j]);
  float sum = 0.f;
  for (std::int64_t j = 0; j < n; ++j) sum += (s[j] = exp_approx(s[j] - m_new));
#else
  // Max and sum in 16 lanes (reduce_math.hpp), the exps as one plain vectorized loop between them.
  const float top = lane_max(n, [s](std::int64_t j) { return s[j]; });
  const float m_new = top > m ? top : m;
  TOPO_FLASH_SIMD
  for (std::int64_t j = 0; j < n; ++j) s[j] = exp_approx(s[j] - m_new);
  const float sum = lane_sum(n, [s](std::int64_t j) { return s[j]; });
#endif
  const float rescale = exp_approx(m - m_new);  // exp_approx(-inf) = 0
  l = l * rescale + sum;
  m = m_new;
  return rescale;
}

// The online-softmax step when the tile's max `top` is already known (CUDA: a warp-wide max): m -> max(m, top);
// returns exp(m_old - m_new), the factor for the running sum and the output so far (0 on the first tile).
TOPO_HD float flash_online_max(float& m, float top) {
  const float m_new = top > m ? top : m;
  const float rescale = exp_approx(m - m_new);  // exp_approx(-inf) = 0
  m = m_new;
  return rescale;
}

// log-sum-exp of a finished row (every row here has >= 1 key, itself, so l > 0).
TOPO_HD float flash_row_lse(float m, float l) { return m + logf(l); }

// Backward of one score: s (the scaled score) -> p = exp(s - lse), and dp (dout . v) -> ds = p (dp - delta).
TOPO_HD void flash_score_backward(float& s, float& dp, float lse, float delta) {
  const float p = exp_approx(s - lse);
  s = p;
  dp = p * (dp - delta);
}

// The same over one row of a tile (one query: one lse and delta).
TOPO_HD void flash_row_backward(float* s, float* dp, std::int64_t n, float lse, float delta) {
  TOPO_FLASH_SIMD
  for (std::int64_t j = 0; j < n; ++j) flash_score_backward(s[j], dp[j], lse, delta);
}

// The columns [begin, end) of a tile of keys [j0, j0 + n) that query row i (same numbering as j0) sees with
// band radius `radius`: |i - j| <= radius. Empty (begin >= end) when the band misses the tile.
struct BandColumns {
  std::int64_t begin, end;
};
TOPO_HD BandColumns flash_band_columns(std::int64_t i, std::int64_t radius, std::int64_t j0, std::int64_t n) {
  const std::int64_t lo = i - radius - j0, hi = i + radius + 1 - j0;
  return {lo < 0 ? 0 : (lo > n ? n : lo), hi < 0 ? 0 : (hi > n ? n : hi)};
}

TOPO_HD void flash_zero(float* x, std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) x[j] = 0.f;
}

// flash_row_softmax over the columns `c` of a score row of n, the others set to p = 0. Returns the rescale
// factor (1 when the band misses the tile: m and l unchanged).
TOPO_HD float flash_band_row_softmax(float* s, std::int64_t n, BandColumns c, float& m, float& l) {
  if (c.begin >= c.end) {
    flash_zero(s, n);
    return 1.f;
  }
  flash_zero(s, c.begin);
  flash_zero(s + c.end, n - c.end);
  return flash_row_softmax(s + c.begin, c.end - c.begin, m, l);
}

// flash_row_backward over the columns `c`; p and ds are 0 outside them.
TOPO_HD void flash_band_row_backward(float* s, float* dp, std::int64_t n, BandColumns c, float lse, float delta) {
  const std::int64_t begin = c.begin < c.end ? c.begin : n, end = c.begin < c.end ? c.end : n;
  flash_zero(s, begin);
  flash_zero(dp, begin);
  flash_zero(s + end, n - end);
  flash_zero(dp + end, n - end);
  flash_row_backward(s + begin, dp + begin, end - begin, lse, delta);
}

namespace cuda {
// Packed sequences: rows [offsets[b], offsets[b + 1]) attend to each other; seq[r] is row r's sequence;
// radius [B * heads] the band of each (sequence, head), clipped to the sequence (full attention: its length).
// q [rows, H, dk], k [rows, H, dk], v [rows, H, dv]; out [rows, H, dv], lse [rows, H]. Device memory.
void flash_attention(const std::int64_t* offsets, const std::int64_t* seq, const std::int64_t* radius,
                     std::int64_t rows, std::int64_t heads, std::int64_t dk, std::int64_t dv, float scale,
                     const float* q, const float* k, const float* v, float* out, float* lse);
// dq, dk, dv (overwritten) from dout, the forward's out and lse.
void flash_attention_backward(const std::int64_t* offsets, const std::int64_t* seq, const std::int64_t* radius,
                              std::int64_t rows, std::int64_t heads, std::int64_t dk, std::int64_t dv, float scale,
                              const float* q, const float* k, const float* v, const float* out, const float* lse,
                              const float* dout, float* dq, float* dkey, float* dval);
}  // namespace cuda

}  // namespace topo
