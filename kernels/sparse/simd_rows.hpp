#pragma once
// CPU-only vector primitives of the sparse kernels: horizontal reductions, a dot product, and the
// register-blocked gather-accumulate o = sum_j w_j x_{idx_j} that both gspmm and the fused attention run
// per destination row. With AVX-512 they are written with intrinsics (the gather-accumulate with AVX2 too);
// otherwise plain loops with the same summation order per output element (j ascending from 0), so results do
// not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <cstdint>

#if defined(__SSE__)
// GCC 12's AVX-512 header reports its own `_mm512_undefined_*` placeholders as (maybe-)uninitialized once
// inlined (-O3; "uninitialized" where a caller such as dot() is compiled out of line); the warning points into
// the header, so it is silenced for the header's lines only (clang has no such warning, and would warn about
// the unknown name).
#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace topo::simd {

constexpr std::int64_t kLanes = 16;  // floats per AVX-512 vector

// Horizontal sum / max of 16 floats and the dot product of two n-float rows. `omp simd reduction` ended
// each of them in 16 dependent scalar adds through the stack (it made the fused attention forward twice as
// slow as gsddmm + gspmm even in cache); with AVX-512 they are shuffle trees. (Upper halves come from
// shuffle_f32x4: GCC 12's extractf64x4 trips -Wmaybe-uninitialized.) Fixed order either way.
#if defined(__AVX512F__)
inline __m128 fold_to_128(__m512 v, bool use_max) {
  const __m256 lo = _mm512_castps512_ps256(v), hi = _mm512_castps512_ps256(_mm512_shuffle_f32x4(v, v, 0xEE));
  const __m256 a = use_max ? _mm256_max_ps(lo, hi) : _mm256_add_ps(lo, hi);
  const __m128 b0 = _mm256_castps256_ps128(a), b1 = _mm256_extractf128_ps(a, 1);
  return use_max ? _mm_max_ps(b0, b1) : _mm_add_ps(b0, b1);
}
inline float hsum(__m512 v) {
  __m128 b = fold_to_128(v, false);
  b = _mm_add_ps(b, _mm_movehl_ps(b, b));
  return _mm_cvtss_f32(_mm_add_ss(b, _mm_movehdup_ps(b)));
}
inline float sum16(const float* x) { return hsum(_mm512_loadu_ps(x)); }
inline float max16(const float* x) {
  __m128 b = fold_to_128(_mm512_loadu_ps(x), true);
  b = _mm_max_ps(b, _mm_movehl_ps(b, b));
  return _mm_cvtss_f32(_mm_max_ss(b, _mm_movehdup_ps(b)));
}
// Lanes [0, count) of a vector, count clamped to [0, 16].
inline __mmask16 first_lanes(std::int64_t count) {
  const std::int64_t c = std::clamp<std::int64_t>(count, 0, kLanes);
  return static_cast<__mmask16>((1u << c) - 1u);
}
inline __m512 dot_vector(const float* a, const float* b, std::int64_t n);
inline float dot(const float* a, const float* b, std::int64_t n) { return hsum(dot_vector(a, b, n)); }
inline void hsum4(__m512 a0, __m512 a1, __m512 a2, __m512 a3, float* s);
// Four n-long dot products at once, into s[0..3] (gsddmm's edge x head pairs).
inline void dot4(const float* const (&l)[4], const float* const (&r)[4], std::int64_t n, float* s) {
  hsum4(dot_vector(l[0], r[0], n), dot_vector(l[1], r[1], n), dot_vector(l[2], r[2], n), dot_vector(l[3], r[3], n), s);
}
// The horizontal sums of four vectors at once, into s[0..3]: 13 shuffles and adds instead of 4 x 7. Per
// accumulator the order is fixed (quarters folded pairwise, then lanes), so results do not depend on which
// other accumulators share the call.
inline void hsum4(__m512 a0, __m512 a1, __m512 a2, __m512 a3, float* s) {
  // [a0 q0+q2, a0 q1+q3, a1 q0+q2, a1 q1+q3] (q = 128-bit quarters), the same for a2, a3.
  const __m512 x = _mm512_add_ps(_mm512_shuffle_f32x4(a0, a1, 0x44), _mm512_shuffle_f32x4(a0, a1, 0xEE));
  const __m512 y = _mm512_add_ps(_mm512_shuffle_f32x4(a2, a3, 0x44), _mm512_shuffle_f32x4(a2, a3, 0xEE));
  // Quarter i holds 4 lanes of accumulator i.
  __m512 z = _mm512_add_ps(_mm512_shuffle_f32x4(x, y, 0x88), _mm512_shuffle_f32x4(x, y, 0xDD));
  z = _mm512_add_ps(z, _mm512_permute_ps(z, 0x4E));  // lanes (0 + 2, 1 + 3) in each quarter
  z = _mm512_add_ps(z, _mm512_permute_ps(z, 0xB1));  // every lane of quarter i = sum of accumulator i
  alignas(64) float lanes[kLanes];
  _mm512_store_ps(lanes, z);
  s[0] = lanes[0], s[1] = lanes[4], s[2] = lanes[8], s[3] = lanes[12];
}
// a . b over n floats accumulated in one vector (not reduced): full vectors, then one masked tail.
inline __m512 dot_vector(const float* a, const float* b, std::int64_t n) {
  __m512 acc = _mm512_setzero_ps();
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc);
  if (i < n) {
    const __mmask16 tail = first_lanes(n - i);
    acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, a + i), _mm512_maskz_loadu_ps(tail, b + i), acc);
  }
  return acc;
}
#else
inline float sum16(const float* x) {
  float s = 0.f;
  for (std::int64_t i = 0; i < kLanes; ++i) s += x[i];
  return s;
}
inline float max16(const float* x) {
  float m = x[0];
  for (std::int64_t i = 1; i < kLanes; ++i) m = std::max(m, x[i]);
  return m;
}
#if defined(__AVX2__) && defined(__FMA__)
// AVX2 (Zen 3): the same four-at-once horizontal sums in 8-float vectors, for gsddmm's dot products; a pair's
// sum is ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)) over its vector's lanes whichever way it is taken.
constexpr std::int64_t kLanes8 = 8;
inline __m256 dot_vector8(const float* a, const float* b, std::int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  std::int64_t i = 0;
  for (; i + kLanes8 <= n; i += kLanes8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc);
  if (i < n) {
    const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n - i)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    acc = _mm256_fmadd_ps(_mm256_maskload_ps(a + i, tail), _mm256_maskload_ps(b + i, tail), acc);
  }
  return acc;
}
inline void hsum4_8(__m256 a0, __m256 a1, __m256 a2, __m256 a3, float* s) {
  const __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));  // per 128-bit half
  _mm_storeu_ps(s, _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1)));
}
inline float dot(const float* a, const float* b, std::int64_t n) {
  float s[4];
  const __m256 zero = _mm256_setzero_ps();
  hsum4_8(dot_vector8(a, b, n), zero, zero, zero, s);
  return s[0];
}
inline void dot4(const float* const (&l)[4], const float* const (&r)[4], std::int64_t n, float* s) {
  hsum4_8(dot_vector8(l[0], r[0], n), dot_vector8(l[1], r[1], n), dot_vector8(l[2], r[2], n),
          dot_vector8(l[3], r[3], n), s);
}
#else
inline float dot(const float* a, const float* b, std::int64_t n) {
  float s = 0.f;
#pragma omp simd reduction(+ : s)
  for (std::int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}
#endif
#endif

#if defined(__AVX512F__)
namespace detail {
// dots_with's kernel, n <= 16 kVectors: q's vectors loaded once, each row's products in its own accumulator
// (the first a multiply: 0 + x y rounds as x y, so the bits are dot()'s), four rows reduced by one hsum4.
template <int kVectors, class Row, class Store>
inline void dots_with_vectors(const float* q, std::int64_t n, std::int64_t nj, Row& row, Store& store) {
  const __mmask16 tail = first_lanes(n - (kVectors - 1) * kLanes);
  auto load = [&](const float* x, int i) {
    return i + 1 < kVectors ? _mm512_loadu_ps(x + i * kLanes) : _mm512_maskz_loadu_ps(tail, x + i * kLanes);
  };
  __m512 qv[kVectors];
#pragma GCC unroll 4
  for (int i = 0; i < kVectors; ++i) qv[i] = load(q, i);
  auto dot_row = [&](const float* x) {
    __m512 acc = _mm512_mul_ps(qv[0], load(x, 0));
#pragma GCC unroll 4
    for (int i = 1; i < kVectors; ++i) acc = _mm512_fmadd_ps(qv[i], load(x, i), acc);
    return acc;
  };
  std::int64_t j = 0;
  for (; j + 4 <= nj; j += 4) {
    float s[4];
    hsum4(dot_row(row(j)), dot_row(row(j + 1)), dot_row(row(j + 2)), dot_row(row(j + 3)), s);
    for (int i = 0; i < 4; ++i) store(j + i, s[i]);
  }
  for (; j < nj; ++j) store(j, hsum(dot_row(row(j))));
}
}  // namespace detail
#endif

// store(j, q . row(j)) for j in [0, nj), each product over n floats with dot()'s bits: one row q against the
// gathered rows of a destination's in-edges (an attention score per edge of one head). With AVX-512 and
// n <= 64, q stays in registers and four rows go at once (four independent FMA chains, one horizontal
// reduction): half the loads of the pairwise dot and four chains in flight. Otherwise dot4 over four rows
// (AVX-512 or AVX2), or dot per row.
template <class Row, class Store>
inline void dots_with(const float* q, std::int64_t n, std::int64_t nj, Row&& row, Store&& store) {
#if defined(__AVX512F__)
  switch ((n + kLanes - 1) / kLanes) {
    case 1: return detail::dots_with_vectors<1>(q, n, nj, row, store);
    case 2: return detail::dots_with_vectors<2>(q, n, nj, row, store);
    case 3: return detail::dots_with_vectors<3>(q, n, nj, row, store);
    case 4: return detail::dots_with_vectors<4>(q, n, nj, row, store);
    default: break;
  }
#endif
  std::int64_t j = 0;
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
  for (; j + 4 <= nj; j += 4) {
    const float* const l[4] = {q, q, q, q};
    const float* const r[4] = {row(j), row(j + 1), row(j + 2), row(j + 3)};
    float s[4];
    dot4(l, r, n, s);
    for (int i = 0; i < 4; ++i) store(j + i, s[i]);
  }
#endif
  for (; j < nj; ++j) store(j, dot(q, row(j), n));
}

// How many destination rows ahead gspmm and gsddmm fetch a row's newest source row (prefetch_row).
constexpr std::int64_t kPrefetchRows = 16;

// Asks for the n floats at x to be brought into L1 ahead of use (no-op without SSE). Every line they touch:
// a row that does not start on a line (a 300-float row at a 1200-byte stride, a head's 120-byte slice of one)
// ends in one more line than 64-byte steps from its start reach, so its last byte is asked for too.
inline void prefetch_row(const float* x, std::int64_t n) {
#if defined(__SSE__)
  if (n <= 0) return;
  const char* p = reinterpret_cast<const char*>(x);
  const std::int64_t bytes = n * static_cast<std::int64_t>(sizeof(float));
  for (std::int64_t byte = 0; byte < bytes; byte += 64) _mm_prefetch(p + byte, _MM_HINT_T0);
  _mm_prefetch(p + bytes - 1, _MM_HINT_T0);
#else
  (void)x;
  (void)n;
#endif
}

// Per head h in [0, heads): o[h * n + i] = sum over j in [0, nj) of weight(j, h) * row(j)[h * n + i] for i in
// [0, n), j ascending, each output element's sum starting from 0. `row(j)` gives a const float* (a gathered
// source row of heads * n floats), `weight(j, h)` a float. One head with n = the row length is a plain
// weighted (or, with weight 1, unweighted) sum of rows.
//
// Strategy, short rows (nj <= kRegisterRows: a satellite's 5 in-edges, a window's 9): each head's n outputs
// are cut into blocks of kAccVectors vectors held in registers while all j's are folded in, then stored
// once. The plain loop (o += w x per j) loads and stores the output row once per j; that store traffic held
// gspmm on window graphs to ~2 floats per cycle and was 37% of the fused attention's time in cache. Full
// vectors use plain loads (masked loads ran ~25% slower on this EPYC); only a block's last vector is masked.
// Long rows (a relay's n + 1 in-edges): the plain loop, j outermost, the output row kept in L1. Its
// sources are too many to stay in L1 between blocks, and streaming each whole row once, in order, is what
// the hardware prefetchers follow: block-by-block passes over runs of rows ran 1.2-1.7x slower there.
constexpr std::int64_t kAccVectors = 4;  // 64 floats per block (8 spilled: slower)
constexpr std::int64_t kRegisterRows = 32;

#if defined(__AVX512F__)
namespace detail {
// One block of `vectors` (<= kAccVectors) vectors at o = sum_j w_j x_j, j ascending from 0, each lane's w_j from
// `lane_weights(j, i)`: vector i's weights (one head's broadcast weight, or several narrow heads' blended).
// kMasked: the block's last vector may be partial (mask `tail`); otherwise every vector is full.
template <bool kMasked, class Row, class LaneWeights>
inline void accumulate_block(std::int64_t nj, Row& row, LaneWeights& lane_weights, std::int64_t b,
                             std::int64_t vectors, __mmask16 tail, float* o) {
  __m512 acc[kAccVectors];
#pragma GCC unroll 4
  for (std::int64_t i = 0; i < kAccVectors; ++i) acc[i] = _mm512_setzero_ps();
  for (std::int64_t j = 0; j < nj; ++j) {
    const float* x = row(j) + b;
#pragma GCC unroll 4
    for (std::int64_t i = 0; i < kAccVectors; ++i) {
      if (!kMasked || i + 1 < vectors)
        acc[i] = _mm512_fmadd_ps(lane_weights(j, i), _mm512_loadu_ps(x + i * kLanes), acc[i]);
      else if (i + 1 == vectors)
        acc[i] = _mm512_fmadd_ps(lane_weights(j, i), _mm512_maskz_loadu_ps(tail, x + i * kLanes), acc[i]);
    }
  }
#pragma GCC unroll 4
  for (std::int64_t i = 0; i < kAccVectors; ++i) {
    if (!kMasked || i + 1 < vectors)
      _mm512_storeu_ps(o + b + i * kLanes, acc[i]);
    else if (i + 1 == vectors)
      _mm512_mask_storeu_ps(o + b + i * kLanes, tail, acc[i]);
  }
}

// One row of exactly 8 or 16 floats (a GCN's hidden and class widths): one accumulator, read whole (a 256-bit
// load for 8). On the Xeon with AMX the block path's masked 512-bit load of such rows kept fewer random rows in
// flight: gspmm copy_u over 100k random rows of 8 floats 3.5-3.6 -> 2.1-2.2 ms (2 threads; `topo-bench kernels
// --only "gcn gspmm"`). A separate function, not a fourth kind of block: growing the block template's
// instantiations slowed the 6 x 50 attention and u_mul_e rows by 8-33% (inlining), measured and reverted.
template <bool kHalf, class Row, class Weight>
inline void accumulate_one_vector(std::int64_t nj, Row& row, Weight& weight, float* o) {
  __m512 acc = _mm512_setzero_ps();
  for (std::int64_t j = 0; j < nj; ++j) {
    const __m512 x = kHalf ? _mm512_zextps256_ps512(_mm256_loadu_ps(row(j))) : _mm512_loadu_ps(row(j));
    acc = _mm512_fmadd_ps(_mm512_set1_ps(weight(j, 0)), x, acc);
  }
  if constexpr (kHalf) _mm256_storeu_ps(o, _mm512_castps512_ps256(acc));
  else _mm512_storeu_ps(o, acc);
}

// Several narrow heads in one block: the row's heads * kN floats (<= kAccVectors vectors) at once, a vector's
// lanes weighted by their own head's weight (16 / kN heads per vector for kN < 16, blended from broadcasts).
// Head by head, a head narrower than a vector was one chain of nj dependent FMAs after another (GAT's 8 heads
// x 8: 8 x 21 in a row); here the chains of a row's vectors run side by side, with the same bits.
template <std::int64_t kN, class Row, class Weight>
inline void accumulate_heads(std::int64_t nj, Row& row, Weight& weight, std::int64_t heads, float* o) {
  static_assert(kN == 4 || kN == 8 || kN == 16);
  constexpr std::int64_t kHeadsPerVector = kLanes / kN;
  const std::int64_t total = heads * kN;
  auto lane_weights = [&](std::int64_t j, std::int64_t i) {
    const std::int64_t h0 = i * kHeadsPerVector;
    __m512 w = _mm512_set1_ps(weight(j, h0));
#pragma GCC unroll 4
    for (std::int64_t q = 1; q < kHeadsPerVector; ++q)
      if (h0 + q < heads)
        w = _mm512_mask_blend_ps(static_cast<__mmask16>(0xFFFFu << (q * kN)), w, _mm512_set1_ps(weight(j, h0 + q)));
    return w;
  };
  accumulate_block<true>(nj, row, lane_weights, 0, (total + kLanes - 1) / kLanes,
                         first_lanes(total % kLanes == 0 ? kLanes : total % kLanes), o);
}
}  // namespace detail
#endif

#if !defined(__AVX512F__) && defined(__AVX2__) && defined(__FMA__)
namespace detail {
// AVX2 (AMD Zen 3 and older x86): the same register blocks in 8-float vectors, `Vectors` of them; the plain
// loop's load and store of the output row per j held gspmm copy_u on [100k, 16] features to 40% of a GCN epoch.
template <std::int64_t Vectors, class Row, class Weight>
inline void accumulate_block8(std::int64_t nj, Row& row, Weight& weight, std::int64_t b, float* o) {
  __m256 acc[Vectors];
#pragma GCC unroll 4
  for (std::int64_t i = 0; i < Vectors; ++i) acc[i] = _mm256_setzero_ps();
  for (std::int64_t j = 0; j < nj; ++j) {
    const float* x = row(j) + b;
    const __m256 w = _mm256_set1_ps(weight(j));
#pragma GCC unroll 4
    for (std::int64_t i = 0; i < Vectors; ++i) acc[i] = _mm256_fmadd_ps(w, _mm256_loadu_ps(x + i * kLanes8), acc[i]);
  }
#pragma GCC unroll 4
  for (std::int64_t i = 0; i < Vectors; ++i) _mm256_storeu_ps(o + b + i * kLanes8, acc[i]);
}
}  // namespace detail
#endif

template <class Row, class Weight>
void accumulate_rows(std::int64_t nj, Row&& row, Weight&& weight, std::int64_t heads, std::int64_t n, float* o) {
#if !defined(__AVX512F__) && defined(__AVX2__) && defined(__FMA__)
  if (nj <= kRegisterRows) {
    constexpr std::int64_t kBlock = kAccVectors * kLanes8;
    const std::int64_t full = n / kBlock * kBlock, vectors = (n - full) / kLanes8,
                       tail = full + vectors * kLanes8;
    for (std::int64_t h = 0; h < heads; ++h) {
      auto head_row = [&](std::int64_t j) { return row(j) + h * n; };
      auto head_weight = [&](std::int64_t j) { return weight(j, h); };
      float* oh = o + h * n;
      for (std::int64_t b = 0; b < full; b += kBlock) detail::accumulate_block8<kAccVectors>(nj, head_row, head_weight, b, oh);
      switch (vectors) {
        case 1: detail::accumulate_block8<1>(nj, head_row, head_weight, full, oh); break;
        case 2: detail::accumulate_block8<2>(nj, head_row, head_weight, full, oh); break;
        case 3: detail::accumulate_block8<3>(nj, head_row, head_weight, full, oh); break;
        default: break;
      }
      // The last n % 8 outputs, each summed over j in the same order (fused multiply-adds, as the vectors).
      for (std::int64_t i = tail; i < n; ++i) {
        float acc = 0.f;
        for (std::int64_t j = 0; j < nj; ++j) acc = std::fma(head_weight(j), head_row(j)[i], acc);
        oh[i] = acc;
      }
    }
    return;
  }
#endif
#if defined(__AVX512F__)
  if (nj <= kRegisterRows && heads > 1 && heads * n <= kAccVectors * kLanes) {
    switch (n) {
      case 4: return detail::accumulate_heads<4>(nj, row, weight, heads, o);
      case 8: return detail::accumulate_heads<8>(nj, row, weight, heads, o);
      case 16: return detail::accumulate_heads<16>(nj, row, weight, heads, o);
      default: break;
    }
  }
  if (nj <= kRegisterRows && heads == 1 && (n == kLanes || n == kLanes / 2))
    return n == kLanes ? detail::accumulate_one_vector<false>(nj, row, weight, o)
                       : detail::accumulate_one_vector<true>(nj, row, weight, o);
  if (nj <= kRegisterRows) {
    constexpr std::int64_t kBlock = kAccVectors * kLanes;
    const std::int64_t full = n / kBlock * kBlock, rest = n - full;
    const __mmask16 tail = first_lanes(rest % kLanes == 0 ? kLanes : rest % kLanes);
    const std::int64_t rest_vectors = (rest + kLanes - 1) / kLanes;
    for (std::int64_t h = 0; h < heads; ++h) {
      auto head_row = [&](std::int64_t j) { return row(j) + h * n; };
      auto head_weights = [&](std::int64_t j, std::int64_t) { return _mm512_set1_ps(weight(j, h)); };
      float* oh = o + h * n;
      for (std::int64_t b = 0; b < full; b += kBlock)
        detail::accumulate_block<false>(nj, head_row, head_weights, b, kAccVectors, tail, oh);
      if (rest > 0) detail::accumulate_block<true>(nj, head_row, head_weights, full, rest_vectors, tail, oh);
    }
    return;
  }
#endif
  for (std::int64_t i = 0; i < heads * n; ++i) o[i] = 0.f;
  for (std::int64_t j = 0; j < nj; ++j) {
    const float* x = row(j);
    for (std::int64_t h = 0; h < heads; ++h) {
      const float w = weight(j, h);
      float* oh = o + h * n;
      const float* xh = x + h * n;
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) oh[i] += w * xh[i];
    }
  }
}

}  // namespace topo::simd
