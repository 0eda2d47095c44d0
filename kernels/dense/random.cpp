// Dropout and random initialisation. CPU strategy: parallel_for over contiguous element chunks; inside a
// chunk, Philox blocks are generated in small stack batches (16 blocks = 64 draws, no heap) and applied in a
// flat loop. Values depend only on (seed, offset + i), so the thread count never changes the result.
#include "kernels/dense/random.hpp"

#include <algorithm>
#include <cmath>

#if defined(__AVX512F__)
#include "kernels/sparse/simd_rows.hpp"  // <immintrin.h>, GCC 12's warnings about its own header silenced
#endif

#include "kernels/profile.hpp"
#include "kernels/dense/random_math.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/parallel.hpp"

namespace topo {

#if defined(__AVX512F__)
namespace {
// The ten rounds of philox_round on 16 blocks at once, one vector per counter word (GCC's own code for the
// portable loop below split it into 256-bit halves with shuffles). The 32 x 32 -> 64-bit products m * w per
// lane: even lanes' from vpmuludq on w, odd lanes' on w shifted down, merged by a mask of odd lanes.
inline void philox_rounds16(__m512i& w0, __m512i& w1, __m512i& w2, __m512i& w3, std::uint32_t k0, std::uint32_t k1) {
  static_assert(kPhiloxBatch == 16);
  const auto mulhilo = [](__m512i m, __m512i w, __m512i& hi, __m512i& lo) {
    const __m512i even = _mm512_mul_epu32(m, w), odd = _mm512_mul_epu32(m, _mm512_srli_epi64(w, 32));
    hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
    lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
  };
  const __m512i m0 = _mm512_set1_epi32(static_cast<int>(0xD2511F53u));
  const __m512i m1 = _mm512_set1_epi32(static_cast<int>(0xCD9E8D57u));
  for (int round = 0; round < 10; ++round) {
    __m512i hi0, lo0, hi1, lo1;
    mulhilo(m0, w0, hi0, lo0);
    mulhilo(m1, w2, hi1, lo1);
    w0 = _mm512_xor_si512(_mm512_xor_si512(hi1, w1), _mm512_set1_epi32(static_cast<int>(k0)));
    w2 = _mm512_xor_si512(_mm512_xor_si512(hi0, w3), _mm512_set1_epi32(static_cast<int>(k1)));
    w1 = lo1;
    w3 = lo0;
    k0 += kPhiloxBump0;
    k1 += kPhiloxBump1;
  }
}

// bits_to_unit of every lane: the top 24 bits, exact in a float, times 2^-24.
inline __m512 bits_to_unit16(__m512i w) {
  return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(w, 8)), _mm512_set1_ps(1.0f / 16777216.0f));
}
}  // namespace
#endif

void philox_batch(const std::uint64_t (&blocks)[kPhiloxBatch], std::uint32_t stream, std::uint64_t seed,
                  Philox4 (&out)[kPhiloxBatch], int count) {
  std::uint32_t c0[kPhiloxBatch], c1[kPhiloxBatch], c2[kPhiloxBatch], c3[kPhiloxBatch];
  for (int j = 0; j < count; ++j) {
    c0[j] = static_cast<std::uint32_t>(blocks[j]);
    c1[j] = static_cast<std::uint32_t>(blocks[j] >> 32);
    c2[j] = stream;
    c3[j] = 0u;
  }
  std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
#if defined(__AVX512F__)
  if (count == kPhiloxBatch) {
    __m512i w0 = _mm512_loadu_si512(c0), w1 = _mm512_loadu_si512(c1), w2 = _mm512_loadu_si512(c2),
            w3 = _mm512_loadu_si512(c3);
    philox_rounds16(w0, w1, w2, w3, k0, k1);
    _mm512_storeu_si512(c0, w0);
    _mm512_storeu_si512(c1, w1);
    _mm512_storeu_si512(c2, w2);
    _mm512_storeu_si512(c3, w3);
  } else
#endif
    for (int round = 0; round < 10; ++round) {
#pragma omp simd
      for (int j = 0; j < count; ++j) philox_round(c0[j], c1[j], c2[j], c3[j], k0, k1);
      k0 += kPhiloxBump0;
      k1 += kPhiloxBump1;
    }
  for (int j = 0; j < count; ++j) out[j] = Philox4{{c0[j], c1[j], c2[j], c3[j]}};
}

namespace {

constexpr int kBlocksPerBatch = kPhiloxBatch;
constexpr int kDrawsPerBatch = 4 * kBlocksPerBatch;

// The Philox blocks block0 .. block0 + kBlocksPerBatch of a stream. (Called per block, philox4x32_10 left GCC
// moving the four words of every block through memory: a 50%-dropout mask cost 15% of a GCN epoch at 100k nodes.)
void philox_blocks(std::uint64_t block0, std::uint32_t stream, std::uint64_t seed, Philox4 (&out)[kBlocksPerBatch]) {
  std::uint64_t blocks[kBlocksPerBatch];
  for (int j = 0; j < kBlocksPerBatch; ++j) blocks[j] = block0 + static_cast<std::uint64_t>(j);
  philox_batch(blocks, stream, seed, out);
}

// The uniform draws of blocks block0 .. block0 + kBlocksPerBatch of a stream in element order: draw 4j + l is
// bits_to_unit of word l of block j. On AVX-512 the words stay in registers: converted there, then transposed
// from one vector per word to one per four blocks (through philox_batch's Philox4 array and a scalar convert, each
// draw was stored and reloaded twice: dropout took 18% of a GraphSAGE epoch at 100k nodes, Skylake-SP).
void uniform_draws(std::uint64_t block0, std::uint32_t stream, std::uint64_t seed, float (&out)[kDrawsPerBatch]) {
#if defined(__AVX512F__)
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i low = _mm512_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(block0)));
  __m512i w0 = _mm512_add_epi32(low, iota);
  // The high counter word carries where the low one wrapped past 2^32 within the batch.
  const __m512i high = _mm512_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(block0 >> 32)));
  __m512i w1 = _mm512_mask_add_epi32(high, _mm512_cmplt_epu32_mask(w0, low), high, _mm512_set1_epi32(1));
  __m512i w2 = _mm512_set1_epi32(static_cast<int>(stream)), w3 = _mm512_setzero_si512();
  philox_rounds16(w0, w1, w2, w3, static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
  const __m512 u0 = bits_to_unit16(w0), u1 = bits_to_unit16(w1), u2 = bits_to_unit16(w2), u3 = bits_to_unit16(w3);
  // Per 128-bit lane q (blocks 4q .. 4q + 3): a 4 x 4 transpose gives block 4q + m in lane q of b_m ...
  const __m512 t0 = _mm512_unpacklo_ps(u0, u1), t1 = _mm512_unpackhi_ps(u0, u1), t2 = _mm512_unpacklo_ps(u2, u3),
               t3 = _mm512_unpackhi_ps(u2, u3);
  const auto lo64 = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
  const auto hi64 = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
  const __m512 b0 = lo64(t0, t2), b1 = hi64(t0, t2), b2 = lo64(t1, t3), b3 = hi64(t1, t3);
  // ... and a 4 x 4 transpose of 128-bit lanes puts blocks 4k .. 4k + 3 in output vector k.
  const __m512 v0 = _mm512_shuffle_f32x4(b0, b1, 0x44), v1 = _mm512_shuffle_f32x4(b0, b1, 0xEE),
               v2 = _mm512_shuffle_f32x4(b2, b3, 0x44), v3 = _mm512_shuffle_f32x4(b2, b3, 0xEE);
  _mm512_storeu_ps(out, _mm512_shuffle_f32x4(v0, v2, 0x88));
  _mm512_storeu_ps(out + 16, _mm512_shuffle_f32x4(v0, v2, 0xDD));
  _mm512_storeu_ps(out + 32, _mm512_shuffle_f32x4(v1, v3, 0x88));
  _mm512_storeu_ps(out + 48, _mm512_shuffle_f32x4(v1, v3, 0xDD));
#else
  Philox4 blocks[kBlocksPerBatch];
  philox_blocks(block0, stream, seed, blocks);
  for (int j = 0; j < kBlocksPerBatch; ++j)
    for (int l = 0; l < 4; ++l) out[4 * j + l] = bits_to_unit(blocks[j].v[l]);
#endif
}

// Walks local elements [begin, end) whose global counters are offset + i. `draws(block0, values)` fills the
// kDrawsPerBatch values of blocks block0 .. block0 + kBlocksPerBatch (always a full batch: a fixed trip count
// vectorizes); `emit(i, values, count)` consumes the values of elements i .. i + count in a loop of its own, which
// vectorizes (dropout's keep-or-zero becomes a blend rather than a branch mispredicted on half the elements).
template <class Draws, class Emit>
void walk_stream(std::int64_t begin, std::int64_t end, std::uint64_t offset, Draws&& draws, Emit&& emit) {
  float values[kDrawsPerBatch];
  std::int64_t i = begin;
  while (i < end) {
    const std::uint64_t g0 = offset + static_cast<std::uint64_t>(i);
    const int skip = static_cast<int>(g0 & 3);
    const std::int64_t count = std::min<std::int64_t>(end - i, kDrawsPerBatch - skip);
    draws(g0 >> 2, values);
    emit(i, values + skip, count);
    i += count;
  }
}

// y = dropout_apply(x, u) over a run of elements: a vector select.
void dropout_run(const float* x, const float* u, float* y, std::int64_t count, float p, float scale) {
#pragma omp simd
  for (std::int64_t k = 0; k < count; ++k) y[k] = dropout_apply(x[k], u[k], p, scale);
}

// The uniform draws of the stream, batch by batch, over elements [begin, end) at counters offset + i.
void walk_uniform(std::int64_t begin, std::int64_t end, std::uint64_t offset, std::uint64_t seed,
                  const auto& emit) {
  walk_stream(
      begin, end, offset,
      [&](std::uint64_t block0, float (&u)[kDrawsPerBatch]) { uniform_draws(block0, kStreamUniform, seed, u); },
      emit);
}

// ORs the keep bits of elements i .. i + count (count <= 64; u[k] is element i + k's draw) into `words`, whose
// bits there start cleared. The run starts anywhere in a word, so its 64 bits land in up to three words.
void set_keep_bits(const float* u, std::int64_t count, float p, std::int64_t i, std::uint32_t* words) {
  std::uint64_t bits = 0;
#if defined(__AVX512F__)
  const __m512 pv = _mm512_set1_ps(p);
  for (std::int64_t k = 0; k < count; k += simd::kLanes) {
    const __mmask16 lanes = simd::first_lanes(count - k);
    const __mmask16 keep = _mm512_mask_cmp_ps_mask(lanes, _mm512_maskz_loadu_ps(lanes, u + k), pv, _CMP_GE_OQ);
    bits |= static_cast<std::uint64_t>(keep) << k;
  }
#else
  for (std::int64_t k = 0; k < count; ++k) bits |= static_cast<std::uint64_t>(u[k] >= p) << k;
#endif
  const std::int64_t w = i >> 5, shift = i & 31;
  words[w] |= static_cast<std::uint32_t>(bits << shift);
  if (count + shift > 32) words[w + 1] |= static_cast<std::uint32_t>(bits >> (32 - shift));
  if (count + shift > 64) words[w + 2] |= static_cast<std::uint32_t>(bits >> (64 - shift));
}

// y[k] = dropout_keep(x[k], bit first + k, scale) for k in [0, count).
void apply_mask_run(const float* x, float* y, std::int64_t count, const std::uint32_t* words, std::int64_t first,
                    std::int64_t num_words, float scale) {
  std::int64_t k = 0;
#if defined(__AVX512F__)
  const __m512 keep_scale = _mm512_set1_ps(scale), zero = _mm512_setzero_ps();
  // The 16 bits first + k .. + 15, from the word holding the first and the next (absent past the last word).
  const auto keep_bits = [&](std::int64_t k) {
    const std::int64_t bit = first + k, w = bit >> 5;
    const std::uint64_t window = (static_cast<std::uint64_t>(w + 1 < num_words ? words[w + 1] : 0u) << 32) | words[w];
    return static_cast<__mmask16>(window >> (bit & 31));
  };
  // x times scale or 0, as dropout_keep (a dropped NaN stays NaN, a dropped negative is -0). Whole vectors are
  // read and written unmasked: masked 512-bit loads streaming from memory ran the pass at half the rate (Xeon
  // with AMX).
  for (; k + simd::kLanes <= count; k += simd::kLanes)
    _mm512_storeu_ps(y + k, _mm512_mul_ps(_mm512_loadu_ps(x + k), _mm512_mask_blend_ps(keep_bits(k), zero, keep_scale)));
  if (k < count) {
    const __mmask16 lanes = simd::first_lanes(count - k);
    const __m512 factor = _mm512_mask_blend_ps(keep_bits(k) & lanes, zero, keep_scale);
    _mm512_mask_storeu_ps(y + k, lanes, _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, x + k), factor));
  }
#else
  (void)num_words;
  for (; k < count; ++k) y[k] = dropout_keep(x[k], mask_bit(words, first + k), scale);
#endif
}

const std::uint32_t* mask_words(const Tensor& mask) { return reinterpret_cast<const std::uint32_t*>(mask.data<std::int32_t>()); }

// The keep bits of elements [0, n) into words[dropout_mask_words(n)], in chunks of whole words (no two threads
// write one word); `also(i, u, count)` sees each run of draws before its bits are set (dropout_with_mask applies
// them to x there, in the same pass).
template <class Also>
void draw_keep_bits(std::int64_t n, float p, std::uint64_t seed, std::uint64_t offset, std::uint32_t* words,
                    const Also& also) {
  parallel_for(dropout_mask_words(n), 32 * 16, [&](std::int64_t wb, std::int64_t we) {
    std::fill(words + wb, words + we, 0u);
    walk_uniform(wb * 32, std::min(we * 32, n), offset, seed, [&](std::int64_t i, const float* u, std::int64_t count) {
      also(i, u, count);
      set_keep_bits(u, count, p, i, words);
    });
  });
}

}  // namespace

Tensor dropout(const Tensor& x, float p, std::uint64_t seed, std::uint64_t offset) {
  check_dtype(x, DType::F32, "dropout", "input");
  TOPO_CHECK(p >= 0.f && p < 1.f, "dropout: probability p = {} is outside [0, 1)", p);
  if (p == 0.f) return x;
  return dropout_with_mask(x, p, seed, offset).y;
}

Tensor dropout_mask(std::int64_t n, float p, std::uint64_t seed, std::uint64_t offset, Device device) {
  TOPO_PROFILE(Elementwise);
  TOPO_CHECK(n >= 0, "dropout_mask: {} elements", n);
  TOPO_CHECK(p >= 0.f && p < 1.f, "dropout_mask: probability p = {} is outside [0, 1)", p);
  const std::int64_t num_words = dropout_mask_words(n);
  Tensor mask = Tensor::empty({num_words}, DType::I32, device);
  auto* words = reinterpret_cast<std::uint32_t*>(mask.data<std::int32_t>());
  TOPO_ON_DEVICE(
      device, draw_keep_bits(n, p, seed, offset, words, [](std::int64_t, const float*, std::int64_t) {}),
      cuda::dropout_mask(words, n, p, seed, offset));
  return mask;
}

MaskedDropout dropout_with_mask(const Tensor& x, float p, std::uint64_t seed, std::uint64_t offset) {
  TOPO_PROFILE(Elementwise);
  check_dtype(x, DType::F32, "dropout_with_mask", "input");
  TOPO_CHECK(p >= 0.f && p < 1.f, "dropout_with_mask: probability p = {} is outside [0, 1)", p);
  const std::int64_t n = x.numel();
  if (x.device().is_cuda()) {  // two launches: the mask, then its application
    Tensor mask = dropout_mask(n, p, seed, offset, x.device());
    return {dropout_apply_mask(x, mask, p), mask};
  }
  const float scale = 1.f / (1.f - p);
  const std::int64_t num_words = dropout_mask_words(n);
  MaskedDropout out{Tensor::empty(x.shape(), DType::F32, x.device()), Tensor::empty({num_words}, DType::I32, x.device())};
  const float* xp = x.data<float>();
  float* yp = out.y.data<float>();
  auto* words = reinterpret_cast<std::uint32_t*>(out.mask.data<std::int32_t>());
  draw_keep_bits(n, p, seed, offset, words, [&](std::int64_t i, const float* u, std::int64_t count) {
    dropout_run(xp + i, u, yp + i, count, p, scale);
  });
  return out;
}

Tensor dropout_apply_mask(const Tensor& x, const Tensor& mask, float p, std::int64_t first) {
  TOPO_PROFILE(Elementwise);
  check_dtype(x, DType::F32, "dropout_apply_mask", "input");
  check_dtype(mask, DType::I32, "dropout_apply_mask", "mask");
  TOPO_CHECK(p >= 0.f && p < 1.f, "dropout_apply_mask: probability p = {} is outside [0, 1)", p);
  TOPO_CHECK(mask.ndim() == 1 && mask.device() == x.device(), "dropout_apply_mask: mask {} for input {}", mask.str(),
             x.str());
  const std::int64_t n = x.numel(), num_words = mask.size(0);
  TOPO_CHECK(first >= 0 && first + n <= num_words * 32,
             "dropout_apply_mask: elements {} .. {} are past the mask's {} bits", first, first + n, num_words * 32);
  if (p == 0.f) return x;
  const float scale = 1.f / (1.f - p);
  Tensor y = Tensor::empty(x.shape(), DType::F32, x.device());
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  const std::uint32_t* words = mask_words(mask);
  TOPO_ON_DEVICE(
      x.device(),
      parallel_for(n, 2,
                   [&](std::int64_t b, std::int64_t e) {
                     apply_mask_run(xp + b, yp + b, e - b, words, first + b, num_words, scale);
                   }),
      cuda::dropout_apply_mask(xp, yp, n, words, first, scale));
  return y;
}

Tensor random_uniform(const Shape& shape, float lo, float hi, std::uint64_t seed, Device device) {
  TOPO_CHECK(std::isfinite(lo) && std::isfinite(hi) && lo <= hi, "random_uniform: bad range [{}, {})", lo, hi);
  Tensor y = Tensor::empty(shape, DType::F32, device);
  float* yp = y.data<float>();
  const std::int64_t n = y.numel();
  TOPO_ON_DEVICE(
      device,
      parallel_for(n, 16,
                   [&](std::int64_t b, std::int64_t e) {
                     walk_uniform(b, e, 0, seed, [&](std::int64_t i, const float* u, std::int64_t count) {
                       _Pragma("omp simd")
                       for (std::int64_t k = 0; k < count; ++k) yp[i + k] = uniform_affine(u[k], lo, hi);
                     });
                   }),
      cuda::random_uniform(yp, n, lo, hi, seed));
  return y;
}

Tensor random_normal(const Shape& shape, float mean, float stddev, std::uint64_t seed, Device device) {
  TOPO_CHECK(std::isfinite(mean) && std::isfinite(stddev) && stddev >= 0.f,
             "random_normal: bad mean {} or stddev {} (stddev must be finite and >= 0)", mean, stddev);
  Tensor y = Tensor::empty(shape, DType::F32, device);
  float* yp = y.data<float>();
  const std::int64_t n = y.numel();
  TOPO_ON_DEVICE(
      device,
      parallel_for(n, 64,
                   [&](std::int64_t b, std::int64_t e) {
                     walk_stream(
                         b, e, 0,
                         [&](std::uint64_t block0, float (&z)[kDrawsPerBatch]) {
                           Philox4 blocks[kBlocksPerBatch];
                           philox_blocks(block0, kStreamNormal, seed, blocks);
                           for (int j = 0; j < kBlocksPerBatch; ++j)
                             for (unsigned l = 0; l < 4; ++l) z[4 * j + l] = normal_from_block(blocks[j], l);
                         },
                         [&](std::int64_t i, const float* z, std::int64_t count) {
                           _Pragma("omp simd")
                           for (std::int64_t k = 0; k < count; ++k) yp[i + k] = normal_affine(z[k], mean, stddev);
                         });
                   }),
      cuda::random_normal(yp, n, mean, stddev, seed));
  return y;
}

}  // namespace topo
