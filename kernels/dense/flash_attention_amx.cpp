// Full attention in bf16 on AMX tiles: see flash_attention_amx.hpp.
//
// Strategy (one thread, one head of one sequence of n rows; n <= kMaxLength, so no online softmax is needed).
// The products are the own AMX GEMM's pieces (amx_tiles.hpp): operands packed once per head into bf16 tiles,
// 2 x 2 blocks of accumulator tiles (32 x 32 of the result) over the whole inner dimension.
//  - forward: K^T and V packed once; per block of 32 queries, S = Q K^T as a [32, n] row block (fp32, L2),
//    its rows softmaxed (AVX-512: scale, max, exp, sum; lse kept) with P written as bf16 straight into its
//    packed tiles, and O = P V summed over all n keys in tiles, then divided by the rows' sums.
//  - backward, keys outer: Q^T, dout^T, dout, Q and K packed once; per block of 32 keys, S^T = K Q^T and
//    dP^T = V dout^T as [32, n] blocks, P^T = exp(scale S^T - lse) and dS^T = scale P^T (dP^T - delta) with the
//    queries in lanes (lse and delta are per query: vector loads), written as bf16 straight into their packed
//    tiles, then dv = P^T dout and dk = dS^T Q for those keys, each over all n queries at once. dS^T also stays
//    in fp32 for the whole head ([n, n]), and dq = dS K is one product over all n keys at the end.
// Every product's inner dimension is n (or the head width, 50 -> two tiles of 32), so no accumulator tile is
// reloaded; padding (queries, keys and features past their ends) is zero in the packs and masked in the
// softmax. Against the fp32 lanes kernels (docs/performance/kernels.md): the dense Transformer's bf16 step at
// n = 512 spent about half its time there.
#include "kernels/dense/flash_attention_amx.hpp"

#if defined(__x86_64__) && defined(__AVX512F__)
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/dense/amx_tiles.hpp"
#include "kernels/dense/flash_attention_band_simd.hpp"
#include "kernels/dense/gemm_backend.hpp"

namespace topo::flash_amx {
namespace {

namespace tiles = cpu::amx_tiles;
using flash_band::detail::exp16;
using flash_band::detail::kL;
using flash_band::detail::sized;
using tiles::kBlock;
using tiles::kTileElems;

std::int64_t blocks(std::int64_t x) { return (x + kBlock - 1) / kBlock; }  // 32-wide blocks (and k tiles)

// The whole of op(b) [kdim, cols] (b stored [kdim, cols], or [cols, kdim] when tb) as [2 blocks(cols)][tiles].
std::uint16_t* pack_b_whole(bool tb, const float* b, std::int64_t ldb, std::int64_t kdim, std::int64_t cols,
                            std::vector<std::uint16_t>& buffer) {
  const std::int64_t tiles_n = 2 * blocks(cols), tiles_k = blocks(kdim);
  std::uint16_t* out = sized(buffer, tiles_n * tiles_k * kTileElems);
  tiles::pack_b(tb, b, ldb, kdim, cols, 0, tiles_n, tiles_k, out);
  return out;
}

// Rows [m0, m0 + 32) of op(a) [m, kdim] (a stored [m, kdim], or [kdim, m] when ta) as [2][tiles].
std::uint16_t* pack_a_block(bool ta, const float* a, std::int64_t lda, std::int64_t m, std::int64_t kdim,
                            std::int64_t m0, std::vector<std::uint16_t>& buffer) {
  std::uint16_t* out = sized(buffer, 2 * blocks(kdim) * kTileElems);
  tiles::pack_a(ta, a, lda, m, kdim, m0, blocks(kdim), out);
  return out;
}

// c[rows, cols] = a block (packed, k tiles `tiles_k`) times every column block of a whole packed op(b).
void multiply_rows(const std::uint16_t* a, const std::uint16_t* b, std::int64_t tiles_k, std::int64_t rows,
                   std::int64_t cols, float* c, std::int64_t ldc) {
  for (std::int64_t c0 = 0; c0 < cols; c0 += kBlock)
    tiles::multiply_block(a, b + (c0 / 16) * tiles_k * kTileElems, tiles_k, false, c + c0, ldc, rows,
                          std::min(kBlock, cols - c0));
}

// Horizontal max and sum through memory (GCC 12's reduction intrinsics warn -Wmaybe-uninitialized inlined here).
float lane_max(__m512 x) {
  alignas(64) float t[kL];
  _mm512_store_ps(t, x);
  return *std::max_element(t, t + kL);
}
float lane_sum(__m512 x) {
  alignas(64) float t[kL];
  _mm512_store_ps(t, x);
  float s = 0.f;
  for (float v : t) s += v;
  return s;
}

// Where row r (of a 32-row block) and columns [32 t, 32 t + 32) of an op(a) block go in its packed tiles
// (amx_tiles.hpp: [2][tiles_k] tiles of 16 rows x 32 bf16).
std::uint16_t* tile_row(std::uint16_t* pack, std::int64_t tiles_k, std::int64_t r, std::int64_t t) {
  return pack + ((r / 16) * tiles_k + t) * kTileElems + (r % 16) * 32;
}

// 32 floats (two vectors) as 32 bf16 in order (nearest even), the layout of a tile row.
TOPO_AMX_TARGET inline void store_bf16(std::uint16_t* dst, __m512 lo, __m512 hi) {
  _mm512_storeu_si512(dst, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
}

// One score row x[0, n): p = exp(scale x - max) written as bf16 into row r of the packed P block (zero past n);
// returns the row's lse, and its sum of exps (fp32, before rounding; >= 1: the max's own term) in `sum_out`.
// x is scaled in place.
TOPO_AMX_TARGET float softmax_row(float* x, std::int64_t n, float scale, std::uint16_t* pack, std::int64_t r,
                                  float& sum_out) {
  const __m512 sv = _mm512_set1_ps(scale);
  __m512 top = _mm512_set1_ps(-INFINITY);
  for (std::int64_t j = 0; j < n; j += kL) {
    const __mmask16 m = simd::first_lanes(n - j);
    const __m512 y = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + j), sv);
    _mm512_mask_storeu_ps(x + j, m, y);
    top = _mm512_mask_max_ps(top, m, top, y);
  }
  const float top_max = lane_max(top);
  const __m512 mv = _mm512_set1_ps(top_max);
  __m512 sum = _mm512_setzero_ps();
  const std::int64_t tiles_k = blocks(n);
  for (std::int64_t j = 0; j < n; j += 2 * kL) {
    const __mmask16 m0 = simd::first_lanes(n - j), m1 = simd::first_lanes(n - j - kL);
    const __m512 p0 = _mm512_maskz_mov_ps(m0, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m0, x + j), mv)));
    const __m512 p1 = _mm512_maskz_mov_ps(m1, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m1, x + j + kL), mv)));
    sum = _mm512_add_ps(sum, _mm512_add_ps(p0, p1));
    store_bf16(tile_row(pack, tiles_k, r, j / kBlock), p0, p1);
  }
  sum_out = lane_sum(sum);
  return top_max + std::log(sum_out);
}

// One key's row of the backward's block, queries in lanes (n of them valid; 0 for a key past the head): from
// its scores s[0, ld) and dP in g[0, ld), P = exp(scale s - lse) and dS = scale P (dP - delta) as bf16 into row
// r of the packed P^T and dS^T blocks, and dS (fp32, for dq at the end) over g. Lanes past n are zero.
TOPO_AMX_TARGET void probabilities_row(const float* s, float* g, std::int64_t n, std::int64_t ld, float scale,
                                       const float* lse, const float* delta, std::uint16_t* p_pack,
                                       std::uint16_t* ds_pack, std::int64_t r) {
  const __m512 sv = _mm512_set1_ps(scale);
  const std::int64_t tiles_k = ld / kBlock;
  __m512 p[2], d[2];
  for (std::int64_t i = 0; i < ld; i += kBlock) {
    for (int half = 0; half < 2; ++half) {
      const std::int64_t at = i + half * kL;
      const __mmask16 m = simd::first_lanes(n - at);
      const __m512 e = exp16(_mm512_fmsub_ps(_mm512_loadu_ps(s + at), sv, _mm512_maskz_loadu_ps(m, lse + at)));
      p[half] = _mm512_maskz_mov_ps(m, e);
      d[half] = _mm512_mul_ps(_mm512_mul_ps(p[half], sv),
                              _mm512_sub_ps(_mm512_loadu_ps(g + at), _mm512_maskz_loadu_ps(m, delta + at)));
      _mm512_storeu_ps(g + at, d[half]);
    }
    store_bf16(tile_row(p_pack, tiles_k, r, i / kBlock), p[0], p[1]);
    store_bf16(tile_row(ds_pack, tiles_k, r, i / kBlock), d[0], d[1]);
  }
}

}  // namespace

bool usable(std::int64_t len) {
  return len <= kMaxLength && gemm_precision() == Precision::bf16 && active_gemm_backend() == GemmBackend::amx;
}

void forward(const flash_band::HeadView& h, float scale, const float* q, const float* k, const float* v, float* out,
             float* lse, Scratch& w) {
  const std::int64_t n = h.len, ld = blocks(n) * kBlock, dv_cols = blocks(h.dv) * kBlock;
  float *s = sized(w.s, kBlock * ld), *o = sized(w.o, kBlock * dv_cols);
  tiles::configure_tiles();
  const std::uint16_t* kt = pack_b_whole(true, k, h.ldk, h.dk, n, w.b0);     // K^T [dk, n]
  const std::uint16_t* vb = pack_b_whole(false, v, h.ldv, n, h.dv, w.b1);    // V [n, dv]
  float row_lse[kBlock], row_sum[kBlock];
  for (std::int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const std::int64_t rows = std::min(kBlock, n - i0);
    const std::uint16_t* qa = pack_a_block(false, q, h.ldk, n, h.dk, i0, w.a0);
    multiply_rows(qa, kt, blocks(h.dk), kBlock, ld, s, ld);  // S [32, n]; rows past `rows` are zero queries
    std::uint16_t* pa = sized(w.a1, 2 * blocks(n) * kTileElems);  // P, unnormalised, packed by the rows' pass
    for (std::int64_t r = 0; r < rows; ++r) row_lse[r] = softmax_row(s + r * ld, n, scale, pa, r, row_sum[r]);
    for (std::int64_t r = rows; r < kBlock; ++r)  // the last block's rows past the head: zero
      for (std::int64_t t = 0; t < blocks(n); ++t) std::fill_n(tile_row(pa, blocks(n), r, t), 32, std::uint16_t{0});
    multiply_rows(pa, vb, blocks(n), kBlock, dv_cols, o, dv_cols);
    for (std::int64_t r = 0; r < rows; ++r) {
      const __m512 inv = _mm512_set1_ps(1.f / row_sum[r]);
      float* dst = out + (i0 + r) * h.ld_out;
      for (std::int64_t c = 0; c < h.dv; c += kL) {
        const __mmask16 m = simd::first_lanes(h.dv - c);
        _mm512_mask_storeu_ps(dst + c, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, o + r * dv_cols + c), inv));
      }
      lse[(i0 + r) * h.ld_lse] = row_lse[r];
    }
  }
  tiles::release_tiles();
}

void backward(const flash_band::HeadView& h, float scale, const float* q, const float* k, const float* v,
              const float* lse, const float* delta, const float* dout, float* dq, float* dk, float* dv, Scratch& w) {
  const std::int64_t n = h.len, ld = blocks(n) * kBlock;
  float *pt = sized(w.s, kBlock * ld), *dst = sized(w.ds, ld * ld);
  tiles::configure_tiles();
  const std::uint16_t* qt = pack_b_whole(true, q, h.ldk, h.dk, n, w.b0);          // Q^T [dk, n]
  const std::uint16_t* gt = pack_b_whole(true, dout, h.ld_out, h.dv, n, w.b1);    // dout^T [dv, n]
  const std::uint16_t* gb = pack_b_whole(false, dout, h.ld_out, n, h.dv, w.b2);   // dout [n, dv]
  const std::uint16_t* qb = pack_b_whole(false, q, h.ldk, n, h.dk, w.b3);         // Q [n, dk]
  for (std::int64_t j0 = 0; j0 < n; j0 += kBlock) {
    const std::int64_t rows = std::min(kBlock, n - j0);
    float* dsb = dst + j0 * ld;  // dS^T rows of these keys: dP^T first
    multiply_rows(pack_a_block(false, k, h.ldk, n, h.dk, j0, w.a0), qt, blocks(h.dk), kBlock, ld, pt, ld);
    multiply_rows(pack_a_block(false, v, h.ldv, n, h.dv, j0, w.a0), gt, blocks(h.dv), kBlock, ld, dsb, ld);
    const std::int64_t tiles_k = blocks(n);
    std::uint16_t *pa = sized(w.a0, 2 * tiles_k * kTileElems), *da = sized(w.a1, 2 * tiles_k * kTileElems);
    for (std::int64_t r = 0; r < kBlock; ++r) probabilities_row(pt + r * ld, dsb + r * ld, r < rows ? n : 0, ld, scale,
                                                                lse, delta, pa, da, r);
    multiply_rows(pa, gb, tiles_k, rows, h.dv, dv + j0 * h.ldv, h.ldv);
    multiply_rows(da, qb, tiles_k, rows, h.dk, dk + j0 * h.ldk, h.ldk);
  }
  const std::uint16_t* kb = pack_b_whole(false, k, h.ldk, n, h.dk, w.b0);  // K [n, dk]
  for (std::int64_t i0 = 0; i0 < n; i0 += kBlock)  // dq = dS K, dS stored transposed: [keys, queries]
    multiply_rows(pack_a_block(true, dst, ld, n, n, i0, w.a0), kb, blocks(n), std::min(kBlock, n - i0), h.dk,
                  dq + i0 * h.ldk, h.ldk);
  tiles::release_tiles();
}

}  // namespace topo::flash_amx
#else
#include "kernels/error.hpp"

namespace topo::flash_amx {
// Not built without AVX-512 on x86-64 (kAvailable is false, so flash_attention.cpp never calls these).
bool usable(std::int64_t) { return false; }
void forward(const flash_band::HeadView&, float, const float*, const float*, const float*, float*, float*, Scratch&) {
  TOPO_CHECK(false, "flash_amx::forward: built without AVX-512");
}
void backward(const flash_band::HeadView&, float, const float*, const float*, const float*, const float*,
              const float*, const float*, float*, float*, float*, Scratch&) {
  TOPO_CHECK(false, "flash_amx::backward: built without AVX-512");
}
}  // namespace topo::flash_amx
#endif
