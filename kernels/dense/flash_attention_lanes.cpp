// Full attention's forward with queries in lanes: see flash_attention_lanes.hpp.
//
// Strategy. A block of 64 queries (4 vectors of 16) is transposed once into feature-major rows, scaled, and
// stays in L1; the sequence's keys go by in tiles of kKeyTile:
//  - scores, transposed: st[j][q] = sum_c qt[c][q] k[j][c] — 6 keys x 4 query vectors of accumulators, fed per
//    feature by 4 loads of qt and 6 broadcasts of k read straight from the tensor (no packing: a broadcast
//    takes any row stride);
//  - the online softmax per query lane, vertical across the tile's key rows: the tile's max, p = exp(s - m),
//    the sum, and the rescale of the earlier accumulation — no horizontal reductions;
//  - ot[c][q] += sum_j v[j][c] p[j][q] — 5 features x 4 query vectors of accumulators, fed per key by 4 loads
//    of p and 5 broadcasts of v, so a head width of 50 costs no padding (where rows of 50 floats in vectors
//    would compute 64).
// The register blocks were measured (fused forward alone, 4 x 4096 rows, 6 heads x 50, 2 threads): 4 keys per
// score step ran at 153 GFLOP/s, 5-7 keys at 180-184 (GCC folds the qt loads into the FMAs either way); 4 or 6
// features per weighted step lost 10% and 2% against 5; key tiles of 120-480 are within 1%.
// At the end the block is normalised, its lse written, and ot transposed back into the output's head slice.
// Against the sgemm tiles (flash_attention.cpp), this skips OpenBLAS's packing of every tile's operands (its
// copy routines took about a tenth of the dense model's inference at n = 4096) and P's trip through memory
// in row layout.
#include "kernels/dense/flash_attention_lanes.hpp"

#if defined(__AVX512F__)
#include <algorithm>
#include <cmath>

#include "kernels/dense/flash_attention_band_simd.hpp"

namespace topo::flash_lanes {
namespace {

using namespace flash_band::detail;

constexpr std::int64_t kQv = 4, kBlock = kQv * kL;  // query vectors per block, queries per block
constexpr std::int64_t kKeyTile = 240;  // a multiple of kKeys; st: kKeyTile x kBlock floats (60 KiB, L2)
constexpr int kKeys = 6, kFeatures = 5;  // register blocks of the two products (24 and 20 accumulators)

// st[(j0 + g) * kBlock + 16 i] for g < G: the scores of keys j0 .. j0 + G - 1 against the block's queries.
template <int G>
void scores(const float* qt, std::int64_t ldq, std::int64_t dk, const float* k, std::int64_t ldk, float* st) {
  __m512 acc[G][kQv];
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < kQv; ++i) acc[g][i] = _mm512_setzero_ps();
  for (std::int64_t c = 0; c < dk; ++c) {
    __m512 x[kQv];
    for (int i = 0; i < kQv; ++i) x[i] = _mm512_loadu_ps(qt + c * ldq + i * kL);
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      const __m512 b = _mm512_set1_ps(k[g * ldk + c]);
      for (int i = 0; i < kQv; ++i) acc[g][i] = _mm512_fmadd_ps(b, x[i], acc[g][i]);
    }
  }
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < kQv; ++i) _mm512_storeu_ps(st + g * kBlock + i * kL, acc[g][i]);
}

// ot[(c0 + f) * kBlock + 16 i] = alpha_i ot[...] + sum_j v[j][c0 + f] p[j][16 i ..] for f < F, j < nk.
template <int F>
void weighted(const float* st, std::int64_t nk, const float* v, std::int64_t ldv, const __m512* alpha, float* ot) {
  __m512 acc[F][kQv];
  for (int f = 0; f < F; ++f)
    for (int i = 0; i < kQv; ++i) acc[f][i] = _mm512_mul_ps(_mm512_loadu_ps(ot + f * kBlock + i * kL), alpha[i]);
  for (std::int64_t j = 0; j < nk; ++j) {
    __m512 p[kQv];
    for (int i = 0; i < kQv; ++i) p[i] = _mm512_loadu_ps(st + j * kBlock + i * kL);
#pragma GCC unroll 5
    for (int f = 0; f < F; ++f) {
      const __m512 b = _mm512_set1_ps(v[j * ldv + f]);
      for (int i = 0; i < kQv; ++i) acc[f][i] = _mm512_fmadd_ps(b, p[i], acc[f][i]);
    }
  }
  for (int f = 0; f < F; ++f)
    for (int i = 0; i < kQv; ++i) _mm512_storeu_ps(ot + f * kBlock + i * kL, acc[f][i]);
}

template <int F>
void weighted_tail(int f_left, const float* st, std::int64_t nk, const float* v, std::int64_t ldv,
                   const __m512* alpha, float* ot) {
  if constexpr (F > 0) {
    if (f_left == F) return weighted<F>(st, nk, v, ldv, alpha, ot);
    weighted_tail<F - 1>(f_left, st, nk, v, ldv, alpha, ot);
  }
}

float* sized(std::vector<float>& x, std::int64_t n) {
  x.resize(static_cast<std::size_t>(n));
  return x.data();
}

// One block of nq <= kBlock queries starting at row b0.
void forward_block(const flash_band::HeadView& h, std::int64_t b0, std::int64_t nq, float scale, const float* q,
                   const float* k, const float* v, float* out, float* lse, Scratch& w) {
  const std::int64_t ldq = kBlock + kL;  // transpose_rows zero-fills up to ld, which must exceed the block by 16
  float *qt = sized(w.qt, h.dk * ldq + ldq), *st = sized(w.st, kKeyTile * kBlock), *ot = sized(w.ot, h.dv * kBlock);
  float* lanes = sized(w.lse, kBlock);
  transpose_rows(q, h.ldk, b0, nq, h.dk, qt, ldq);
  const __m512 sv = _mm512_set1_ps(scale);
  for (std::int64_t c = 0; c < h.dk; ++c)
    for (int i = 0; i < kQv; ++i) _mm512_storeu_ps(qt + c * ldq + i * kL, _mm512_mul_ps(_mm512_loadu_ps(qt + c * ldq + i * kL), sv));
  std::fill_n(ot, h.dv * kBlock, 0.f);
  __m512 m[kQv], l[kQv];
  for (int i = 0; i < kQv; ++i) m[i] = _mm512_set1_ps(-INFINITY), l[i] = _mm512_setzero_ps();
  for (std::int64_t j0 = 0; j0 < h.len; j0 += kKeyTile) {
    const std::int64_t nk = std::min(kKeyTile, h.len - j0);
    std::int64_t j = 0;
    for (; j + kKeys <= nk; j += kKeys) scores<kKeys>(qt, ldq, h.dk, k + (j0 + j) * h.ldk, h.ldk, st + j * kBlock);
    for (; j < nk; ++j) scores<1>(qt, ldq, h.dk, k + (j0 + j) * h.ldk, h.ldk, st + j * kBlock);
    __m512 top[kQv], alpha[kQv], sum[kQv];
    for (int i = 0; i < kQv; ++i) top[i] = m[i];
    for (j = 0; j < nk; ++j)
      for (int i = 0; i < kQv; ++i) top[i] = _mm512_max_ps(top[i], _mm512_loadu_ps(st + j * kBlock + i * kL));
    for (int i = 0; i < kQv; ++i) {
      alpha[i] = exp16(_mm512_sub_ps(m[i], top[i]));  // 0 on the first tile (m = -inf)
      m[i] = top[i];
      sum[i] = _mm512_setzero_ps();
    }
    for (j = 0; j < nk; ++j)
      for (int i = 0; i < kQv; ++i) {
        float* x = st + j * kBlock + i * kL;
        const __m512 p = exp16(_mm512_sub_ps(_mm512_loadu_ps(x), m[i]));
        _mm512_storeu_ps(x, p);
        sum[i] = _mm512_add_ps(sum[i], p);
      }
    for (int i = 0; i < kQv; ++i) l[i] = _mm512_fmadd_ps(l[i], alpha[i], sum[i]);
    std::int64_t c = 0;
    for (; c + kFeatures <= h.dv; c += kFeatures)
      weighted<kFeatures>(st, nk, v + j0 * h.ldv + c, h.ldv, alpha, ot + c * kBlock);
    if (c < h.dv)
      weighted_tail<kFeatures - 1>(static_cast<int>(h.dv - c), st, nk, v + j0 * h.ldv + c, h.ldv, alpha, ot + c * kBlock);
  }
  __m512 inv[kQv];
  for (int i = 0; i < kQv; ++i) {
    inv[i] = _mm512_div_ps(_mm512_set1_ps(1.f), l[i]);
    _mm512_storeu_ps(lanes + i * kL, _mm512_add_ps(m[i], log16(l[i])));
  }
  for (std::int64_t c = 0; c < h.dv; ++c)
    for (int i = 0; i < kQv; ++i) _mm512_storeu_ps(ot + c * kBlock + i * kL, _mm512_mul_ps(_mm512_loadu_ps(ot + c * kBlock + i * kL), inv[i]));
  transpose_out(ot, kBlock, nq, h.dv, out, b0, h.ld_out);
  for (std::int64_t t = 0; t < nq; ++t) lse[(b0 + t) * h.ld_lse] = lanes[t];
}

}  // namespace

void forward(const flash_band::HeadView& h, std::int64_t r0, std::int64_t rows, float scale, const float* q,
             const float* k, const float* v, float* out, float* lse, Scratch& w) {
  for (std::int64_t b0 = r0; b0 < r0 + rows; b0 += kBlock)
    forward_block(h, b0, std::min(kBlock, r0 + rows - b0), scale, q, k, v, out, lse, w);
}

}  // namespace topo::flash_lanes
#else
#include "kernels/error.hpp"

namespace topo::flash_lanes {
// Not built without AVX-512 (kAvailable is false, so flash_attention.cpp never calls it).
void forward(const flash_band::HeadView&, std::int64_t, std::int64_t, float, const float*, const float*, const float*,
             float*, float*, Scratch&) {
  TOPO_CHECK(false, "flash_lanes::forward: built without AVX-512");
}
}  // namespace topo::flash_lanes
#endif
