#pragma once
// The AVX-512 row movers and lane math shared by the fused attention micro-kernels (flash_attention_band.cpp:
// blocks of 8 queries; flash_attention_narrow.cpp and flash_attention_lanes.cpp: positions in lanes).
// Internal to kernels/dense; included only where __AVX512F__ is defined.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/dense/fast_exp.hpp"
#include "kernels/sparse/simd_rows.hpp"

namespace topo::flash_band::detail {

inline constexpr std::int64_t kL = simd::kLanes;

inline std::int64_t round_up(std::int64_t x, std::int64_t m) { return (x + m - 1) / m * m; }

// v resized to n elements (per-thread scratch: it only grows after the first tasks), its data.
template <class T>
T* sized(std::vector<T>& v, std::int64_t n) {
  v.resize(static_cast<std::size_t>(n));
  return v.data();
}

// A head's slice of a row is dk floats of a row of heads * dk: one task reads 2-3 lines of every row it walks,
// a stride the hardware prefetchers do not follow (without prefetching, the loads of the packing loops took half
// the kernel's time at Multi-Scale's shapes). The rows kAhead ahead are asked for (simd::prefetch_row).
inline constexpr std::int64_t kAhead = 16;

// dst[j * ldd + c] = src[(j0 + j) * lds + c] for j in [0, n), c in [0, d); columns [d, ldd) zero. Rows are
// streamed in order with the ones kAhead ahead prefetched, so a task's strided reads of the tensors happen
// here, once, and its products read contiguous packed rows (ldd a multiple of 16: unmasked loads).
inline void pack_rows(const float* src, std::int64_t lds, std::int64_t j0, std::int64_t n, std::int64_t d, float* dst,
               std::int64_t ldd) {
  for (std::int64_t j = 0; j < n; ++j) {
    const float* row = src + (j0 + j) * lds;
    if (j + kAhead < n) simd::prefetch_row(row + kAhead * lds, d);
    for (std::int64_t c = 0; c < ldd; c += kL)
      _mm512_storeu_ps(dst + j * ldd + c, _mm512_maskz_loadu_ps(simd::first_lanes(d - c), row + c));
  }
}

// The first `count` (< 16) floats of x at dst, by 8-, 4-, 2- and 1-float stores: a masked 512-bit store to a
// line that is not in cache stalled this EPYC (it held the backward's write-back at a fifth of its time on two
// threads); the other floats of the line belong to the next head, possibly another thread's.
inline void store_head(float* dst, __m512 x, std::int64_t count) {
  __m256 y = _mm512_castps512_ps256(x);
  if (count >= 8) {
    _mm256_storeu_ps(dst, y);
    y = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1));
    dst += 8, count -= 8;
  }
  __m128 z = _mm256_castps256_ps128(y);
  if (count >= 4) {
    _mm_storeu_ps(dst, z);
    z = _mm256_extractf128_ps(y, 1);
    dst += 4, count -= 4;
  }
  if (count >= 2) {
    _mm_storel_pi(reinterpret_cast<__m64*>(dst), z);
    z = _mm_movehl_ps(z, z);
    dst += 2, count -= 2;
  }
  if (count == 1) _mm_store_ss(dst, z);
}

// The inverse: dst[(j0 + j) * ldd + c] = src[j * lds + c] for j < n, c < d (packed rows back into a tensor's
// head slices), the destination rows kAhead ahead prefetched.
inline void unpack_rows(const float* src, std::int64_t lds, std::int64_t n, std::int64_t d, float* dst, std::int64_t j0,
                 std::int64_t ldd) {
  for (std::int64_t j = 0; j < n; ++j) {
    float* row = dst + (j0 + j) * ldd;
    if (j + kAhead < n) simd::prefetch_row(row + kAhead * ldd, d);
    std::int64_t c = 0;
    for (; c + kL <= d; c += kL) _mm512_storeu_ps(row + c, _mm512_loadu_ps(src + j * lds + c));
    if (c < d) store_head(row + c, _mm512_loadu_ps(src + j * lds + c), d - c);
  }
}

// GCC 12's unpack intrinsics pass `_mm512_undefined_ps()` as their unused merge source, which -Wuninitialized
// reports once inlined here under some flag sets (the sanitizer build's -O2); nothing is read from it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
// r[i] <- column i of the 16 x 16 block whose rows are r[0..15] (in registers: 64 shuffles).
inline void transpose16(__m512* r) {
  __m512 t[kL];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {  // lane k of r[4i + m] now holds column 4k + m of rows 4i .. 4i + 3
    r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int m = 0; m < 4; ++m) {
    t[m] = _mm512_shuffle_f32x4(r[m], r[4 + m], 0x88);
    t[4 + m] = _mm512_shuffle_f32x4(r[m], r[4 + m], 0xDD);
    t[8 + m] = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0x88);
    t[12 + m] = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0xDD);
  }
  for (int m = 0; m < 8; ++m) {
    r[m] = _mm512_shuffle_f32x4(t[m], t[8 + m], 0x88);
    r[8 + m] = _mm512_shuffle_f32x4(t[m], t[8 + m], 0xDD);
  }
}
#pragma GCC diagnostic pop

// kt[c * ld + j] = a[(j0 + j) * lda + c] for j < n, c < d (rows transposed, read straight from a tensor's head
// slices or from packed rows; ld >= round_up(n, 16) + 16); columns [n, ld) zero (the blocks' rounded-up score
// vectors read them). 16 x 16 blocks in registers, the rows 16 ahead prefetched: gathers (one per column of
// 16 rows) and scalar stores (one per element) each held the kernel's transposes at ~50 cycles a row.
inline void transpose_rows(const float* a, std::int64_t lda, std::int64_t j0, std::int64_t n, std::int64_t d, float* kt,
                    std::int64_t ld) {
  const std::int64_t cols = round_up(n, kL);
  __m512 r[kL];
  for (std::int64_t jb = 0; jb < cols; jb += kL) {
    for (std::int64_t i = 0; i < kL && jb + kL + i < n; ++i) simd::prefetch_row(a + (j0 + jb + kL + i) * lda, d);
    for (std::int64_t c0 = 0; c0 < d; c0 += kL) {
      const __mmask16 mc = simd::first_lanes(d - c0);
      for (std::int64_t i = 0; i < kL; ++i)
        r[i] = jb + i < n ? _mm512_maskz_loadu_ps(mc, a + (j0 + jb + i) * lda + c0) : _mm512_setzero_ps();
      transpose16(r);
      for (std::int64_t c = 0; c < kL && c0 + c < d; ++c) _mm512_storeu_ps(kt + (c0 + c) * ld + jb, r[c]);
    }
  }
  for (std::int64_t c = 0; c < d; ++c) std::fill(kt + c * ld + cols, kt + (c + 1) * ld, 0.f);
}

// exp_approx on 16 lanes (the loop vectorizes: exp_approx is branch-free, fast_exp.hpp).
inline __m512 exp16(__m512 x) {
  alignas(64) float t[kL];
  _mm512_store_ps(t, x);
#pragma omp simd
  for (std::int64_t i = 0; i < kL; ++i) t[i] = exp_approx(t[i]);
  return _mm512_load_ps(t);
}

// Feature-major rows back into a tensor's head slices: x[(p0 + j) * ldx + c] = buf[c * ld + j] for j < n,
// c < d. Rows of 16 positions are transposed in registers and stored as whole vectors plus store_head's
// 8/4/2/1-float tail.
inline void transpose_out(const float* buf, std::int64_t ld, std::int64_t n, std::int64_t d, float* x,
                          std::int64_t p0, std::int64_t ldx) {
  __m512 r[kL];
  for (std::int64_t jb = 0; jb < n; jb += kL) {
    const std::int64_t rows = std::min(kL, n - jb);
    for (std::int64_t i = 0; i < rows && jb + kL + i < n; ++i) simd::prefetch_row(x + (p0 + jb + kL + i) * ldx, d);
    for (std::int64_t c0 = 0; c0 < d; c0 += kL) {
      for (std::int64_t i = 0; i < kL; ++i)
        r[i] = c0 + i < d ? _mm512_loadu_ps(buf + (c0 + i) * ld + jb) : _mm512_setzero_ps();
      transpose16(r);
      for (std::int64_t j = 0; j < rows; ++j) {
        float* dst = x + (p0 + jb + j) * ldx + c0;
        if (c0 + kL <= d)
          _mm512_storeu_ps(dst, r[j]);
        else
          store_head(dst, r[j], d - c0);
      }
    }
  }
}

// ln x for x >= 1 (a softmax row's sum with its max term 1): x = m 2^e with m in [0.75, 1.5), ln m =
// 2 atanh((m - 1) / (m + 1)) by its series to t^9 (|t| <= 1/5: truncation < 4e-9).
inline __m512 log16(__m512 x) {
  __m512 e = _mm512_getexp_ps(x), m = _mm512_getmant_ps(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_src);
  const __mmask16 big = _mm512_cmp_ps_mask(m, _mm512_set1_ps(1.5f), _CMP_GE_OQ);
  m = _mm512_mask_mul_ps(m, big, m, _mm512_set1_ps(0.5f));
  e = _mm512_mask_add_ps(e, big, e, _mm512_set1_ps(1.f));
  const __m512 one = _mm512_set1_ps(1.f);
  const __m512 t = _mm512_div_ps(_mm512_sub_ps(m, one), _mm512_add_ps(m, one)), t2 = _mm512_mul_ps(t, t);
  __m512 s = _mm512_fmadd_ps(_mm512_set1_ps(1.f / 9), t2, _mm512_set1_ps(1.f / 7));
  s = _mm512_fmadd_ps(s, t2, _mm512_set1_ps(1.f / 5));
  s = _mm512_fmadd_ps(s, t2, _mm512_set1_ps(1.f / 3));
  s = _mm512_fmadd_ps(s, t2, one);
  return _mm512_fmadd_ps(e, _mm512_set1_ps(0.693147180559945f), _mm512_mul_ps(_mm512_add_ps(t, t), s));
}

}  // namespace topo::flash_band::detail
