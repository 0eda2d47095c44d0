// bf16 GEMM with fp32 accumulation on AVX512_BF16 (issue #20), one thread, row-major c [m, n] += op(a) op(b).
//
// Why ours: Debian's OpenBLAS 0.3.21 declares cblas_sbgemm but does not export it. Why it can pay: on this
// project's Zen 4 vdpbf16ps (32 bf16 products summed in pairs into 16 fp32 lanes, 64 flops) issues at the rate
// of vfmadd231ps (32 flops), so a compute-bound bf16 GEMM has twice sgemm's ceiling (`topo-bench bf16`).
//
// Data layout. vdpbf16ps multiplies 32-bit lanes holding a bf16 pair (k even in the low half, k odd in the
// high half) and adds both products to the fp32 lane. Both operands are therefore packed as "pair words",
// bf16(x[2p]) | bf16(x[2p+1]) << 16 (an odd K padded with a zero high half, missing rows/columns zero). B panels
// of 32 (or 16) columns are [k/2][32] words: one k pair of 32 columns is two zmm loads. A panels of 12 rows are
// [12][k/2] words (row layout) when a is stored with k contiguous (not transposed: a plain conversion of each
// row), and [k/2][12] when a is transposed (m contiguous: two k rows converted and interleaved per 16 lanes);
// either way each row's pair word is one broadcast at a constant displacement. Rounding fp32 -> bf16
// (vcvtne2ps2bf16: round to nearest even, denormals flushed) happens while packing, once per element per pass.
//
// Micro-kernel: 12 rows x 32 columns of c in 24 zmm accumulators (2 per row). Per k pair it loads the B
// panel's two vectors and, per row, broadcasts that row's pair word and issues two vdpbf16ps: 24 independent
// chains (more than latency x throughput), 12 broadcasts + 2 loads per 24 dot instructions, so the loads never
// limit it. The last column panel of width <= 16 runs a 12 x 16 variant (N = 100 = 3 x 32 + 4 computes 112
// columns, not 128). Rows past m are zero in the A panel and not stored. The c tile is prefetched at the start.
//
// Blocking (BLIS order): K in equal even blocks of at most 384 (K = 300 is one block, 1200 four of 300; the B
// micro-panel, 300 x 32 bf16 = 19 KiB, stays in L1 while the 16 A panels of a 192-row block stream past it
// from L2); all of N at once (the packed B block, 300 x 1216 bf16 = 730 KiB at n = 1200: L2); M in blocks of
// 192 rows. The first K block applies beta (beta == 0 writes without reading c), the later ones add. Packing
// costs one pass over a and one over b per call (n is never cut).
//
// Parallel strategy: none inside. cpu::sgemm (gemm.cpp) keeps its policy for both precisions: one thread below
// its threshold or inside an OpenMP region, otherwise one slab of rows or columns per thread, each slab one call
// here (each packs its own B: the duplicated packing is ~1/m_slab of the work).
//
// The AVX-512 code carries function-level target attributes, so the file compiles in every build
// (TOPO_NATIVE=OFF included) and runs only where bf16_gemm_cpu_supported() says the CPU has the instructions.
// (A whole-file `#pragma GCC target` would also compile the standard library's inline functions instantiated
// here for AVX-512, and the linker could hand those copies to callers on any CPU.)
#include "kernels/dense/gemm_bf16.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>

#include "kernels/dense/bf16_pack.hpp"

namespace topo::cpu {
namespace {

constexpr int kMr = 12;                 // rows of the micro-tile
constexpr int kNr = 32;                 // columns of a full B panel (2 zmm)
constexpr std::int64_t kKcMax = 384;    // k elements per block at most (even: pairs never straddle blocks)
constexpr int kRowStride = static_cast<int>(kKcMax / 2);  // pair words between rows of a row-layout A panel
constexpr std::int64_t kMc = 16 * kMr;  // rows per A block

// K cut into equal even blocks of at most kKcMax (K = 300: one block, not 256 + 44: a short block would pay
// the c tile's load and store for a few pairs).
std::int64_t k_block(std::int64_t k) {
  const std::int64_t blocks = (k + kKcMax - 1) / kKcMax;
  const std::int64_t kc = (k + blocks - 1) / blocks;
  return std::min(kKcMax, kc + (kc & 1));
}

std::uint32_t bf16_bits(float x) {  // round to nearest even; NaN kept quiet
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u >> 16) | 0x40u;
  return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}

// Pack x (lane i, k) = src[i * rs + k * cs], i < lanes, k < kc, into pair words out[p * width + i], p < ceil(kc/2),
// lanes..width-1 zero. One of rs, cs is 1 (row-major operands, transposed or not), or lanes == 1.
TOPO_BF16_TARGET void pack_pairs(const float* src, std::int64_t rs, std::int64_t cs, int lanes, int width,
                                 std::int64_t kc, std::uint32_t* out) {
  const std::int64_t kp = (kc + 1) / 2;
  if (cs == 1 && lanes > 1) {
    // k contiguous per lane: convert 32 consecutive k of one lane into 16 pair words, scatter them with stride
    // `width` into the panel (column i of [kp][width]).
    const __m512i stride = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                              _mm512_set1_epi32(width));
    for (int i = 0; i < lanes; ++i) {
      const float* row = src + i * rs;
      for (std::int64_t k0 = 0; k0 < kc; k0 += 32) {
        const __m512i words = bf16_pack::run32(row + k0, kc - k0);  // bf16 k0..k0+31 in order = 16 pairs
        _mm512_mask_i32scatter_epi32(out + (k0 / 2) * width + i, bf16_pack::first_lanes(kp - k0 / 2), stride, words,
                                     4);
      }
    }
    for (int i = lanes; i < width; ++i)
      for (std::int64_t p = 0; p < kp; ++p) out[p * width + i] = 0;
    return;
  }
  // Lanes contiguous for each k (rs == 1; also a single lane): two k rows of 16 lanes become 16 pair words by
  // converting both and interleaving their bf16 halves.
  for (std::int64_t p = 0; p < kp; ++p) {
    const float* r0 = src + 2 * p * cs;
    const bool has_odd = 2 * p + 1 < kc;
    for (int i0 = 0; i0 < width; i0 += 16) {
      const __mmask16 lm = bf16_pack::first_lanes(lanes - i0);
      __m512 x0, x1;
      if (rs == 1) {
        x0 = _mm512_maskz_loadu_ps(lm, r0 + i0);
        x1 = has_odd ? _mm512_maskz_loadu_ps(lm, r0 + cs + i0) : _mm512_setzero_ps();
      } else {  // one lane (lanes == 1) with a stride: load it alone
        x0 = _mm512_maskz_mov_ps(lm, _mm512_set1_ps(r0[0]));
        x1 = has_odd ? _mm512_maskz_mov_ps(lm, _mm512_set1_ps(r0[cs])) : _mm512_setzero_ps();
      }
      _mm512_mask_storeu_epi32(out + p * width + i0, bf16_pack::first_lanes(width - i0),
                               bf16_pack::pair_words(x0, x1));
    }
  }
}

// A stored with k contiguous (op(a) = a, not transposed): the panel in row layout, out[i * kRowStride + p] (rows
// past `rows` zero), which is a straight conversion of each row (no transpose, unlike the [kp][width] layout
// that would need a scatter per 16 pairs); the micro-kernel's broadcasts read it at constant displacements.
TOPO_BF16_TARGET void pack_rows(const float* src, std::int64_t ld, int rows, std::int64_t kc, std::uint32_t* out) {
  const std::int64_t kp = (kc + 1) / 2;
  for (int i = 0; i < kMr; ++i) {
    const float* row = src + i * ld;
    std::uint32_t* o = out + i * kRowStride;
    for (std::int64_t k0 = 0; k0 < kc; k0 += 32)
      _mm512_mask_storeu_epi32(o + k0 / 2, bf16_pack::first_lanes(kp - k0 / 2),
                               bf16_pack::run32(row + k0, i < rows ? kc - k0 : 0));
  }
}

// c[rows, cols] (= alpha acc + beta c when first, += alpha acc after) for one kMr x 16*NV tile; b: [kp][16*NV]
// pair words; a: [kp][kMr] pair words, or with kRowA [kMr][kRowStride] (pack_rows).
template <int NV, bool kRowA>
TOPO_BF16_TARGET void micro_kernel(std::int64_t kp, const std::uint32_t* a, const std::uint32_t* b, float* c,
                                   std::int64_t ldc, int rows, int cols, float alpha, float beta, bool first) {
  // The c tile's lines are fetched while the products run: a c larger than L2 (8192 x 1200) otherwise stalls
  // the epilogue on 24 misses per tile.
  for (int r = 0; r < rows; ++r)
    for (int v = 0; v < NV; ++v) _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + 16 * v), _MM_HINT_T0);
  __m512 acc[kMr][NV];
#pragma GCC unroll 12
  for (int r = 0; r < kMr; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  for (std::int64_t p = 0; p < kp; ++p) {
    __m512bh bv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) bv[v] = (__m512bh)_mm512_loadu_si512(b + p * 16 * NV + 16 * v);
#pragma GCC unroll 12
    for (int r = 0; r < kMr; ++r) {
      const std::uint32_t word = kRowA ? a[r * kRowStride + p] : a[p * kMr + r];
      const __m512bh av = (__m512bh)_mm512_set1_epi32(static_cast<int>(word));
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], av, bv[v]);
    }
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  __mmask16 mask[NV];
  for (int v = 0; v < NV; ++v) {
    const int cv = cols - 16 * v;
    mask[v] = cv >= 16 ? 0xffff : cv <= 0 ? 0 : static_cast<__mmask16>((1u << cv) - 1);
  }
  // Unrolled with constant row indices (a loop to `rows` would index acc at run time and move it to the stack).
#pragma GCC unroll 12
  for (int r = 0; r < kMr; ++r) {
    if (r >= rows) break;
    float* cr = c + r * ldc;
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      if (!mask[v]) continue;
      __m512 out = _mm512_mul_ps(va, acc[r][v]);
      if (!first)
        out = _mm512_add_ps(out, _mm512_maskz_loadu_ps(mask[v], cr + 16 * v));
      else if (beta != 0.f)
        out = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mask[v], cr + 16 * v), out);
      _mm512_mask_storeu_ps(cr + 16 * v, mask[v], out);
    }
  }
}

TOPO_BF16_TARGET void gemm_blocked(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                                   const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta,
                                   float* c, std::int64_t ldc, std::uint32_t* a_pack, std::uint32_t* b_pack) {
  // Lane i / depth k strides of each operand as stored.
  const std::int64_t a_rs = ta ? 1 : lda, a_cs = ta ? lda : 1;  // a lane = row of op(a)
  const std::int64_t b_rs = tb ? ldb : 1, b_cs = tb ? 1 : ldb;  // b lane = column of op(b)
  const bool row_a = a_cs == 1;  // k contiguous in a: row layout (pack_rows)
  const std::int64_t kcb = k_block(k);
  for (std::int64_t k0 = 0; k0 < k; k0 += kcb) {
    const std::int64_t kc = std::min(kcb, k - k0), kp = (kc + 1) / 2;
    const bool first = k0 == 0;
    const std::int64_t a_panel = row_a ? kMr * kRowStride : kp * kMr;  // words per A panel
    // B block [kc, n] as panels of 32 columns (the last one 16 wide when at most 16 are left); panel j0 starts
    // at word kp * j0.
    for (std::int64_t j0 = 0; j0 < n; j0 += kNr) {
      const int cols = static_cast<int>(std::min<std::int64_t>(kNr, n - j0));
      pack_pairs(b + j0 * b_rs + k0 * b_cs, b_rs, b_cs, cols, cols > 16 ? 32 : 16, kc, b_pack + kp * j0);
    }
    for (std::int64_t i0 = 0; i0 < m; i0 += kMc) {
      const std::int64_t mc = std::min(kMc, m - i0);
      for (std::int64_t ir = 0; ir < mc; ir += kMr) {
        const int rows = static_cast<int>(std::min<std::int64_t>(kMr, mc - ir));
        std::uint32_t* ap = a_pack + a_panel * (ir / kMr);
        if (row_a)
          pack_rows(a + (i0 + ir) * a_rs + k0, a_rs, rows, kc, ap);
        else
          pack_pairs(a + (i0 + ir) * a_rs + k0 * a_cs, a_rs, a_cs, rows, kMr, kc, ap);
      }
      for (std::int64_t j0 = 0; j0 < n; j0 += kNr) {
        const int cols = static_cast<int>(std::min<std::int64_t>(kNr, n - j0));
        const std::uint32_t* bp = b_pack + kp * j0;
        for (std::int64_t ir = 0; ir < mc; ir += kMr) {
          const int rows = static_cast<int>(std::min<std::int64_t>(kMr, mc - ir));
          const std::uint32_t* ap = a_pack + a_panel * (ir / kMr);
          float* ct = c + (i0 + ir) * ldc + j0;
          if (row_a) {
            if (cols > 16)
              micro_kernel<2, true>(kp, ap, bp, ct, ldc, rows, cols, alpha, beta, first);
            else
              micro_kernel<1, true>(kp, ap, bp, ct, ldc, rows, cols, alpha, beta, first);
          } else if (cols > 16) {
            micro_kernel<2, false>(kp, ap, bp, ct, ldc, rows, cols, alpha, beta, first);
          } else {
            micro_kernel<1, false>(kp, ap, bp, ct, ldc, rows, cols, alpha, beta, first);
          }
        }
      }
    }
  }
}

// Per-thread packing buffers, 64-byte aligned, grown on demand and kept (every call of a run has similar sizes).
struct PackBuffer {
  std::uint32_t* data = nullptr;
  std::size_t words = 0;
  std::uint32_t* get(std::size_t need) {
    if (need > words) {
      ::operator delete[](data, std::align_val_t{64});
      data = static_cast<std::uint32_t*>(::operator new[](need * 4, std::align_val_t{64}));
      words = need;
    }
    return data;
  }
  ~PackBuffer() { ::operator delete[](data, std::align_val_t{64}); }
};

}  // namespace

bool bf16_gemm_cpu_supported() {
  static const bool ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
  return ok;
}

float round_to_bf16(float x) {
  const std::uint32_t u = bf16_bits(x) << 16;
  float r;
  std::memcpy(&r, &u, 4);
  return r;
}

void sgemm_bf16(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0 || alpha == 0.f) {  // c = beta c (BLAS convention: beta == 0 writes zeros, reads nothing)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.f ? 0.f : beta * c[i * ldc + j];
    return;
  }
  thread_local PackBuffer a_buf, b_buf;
  const std::int64_t kp = kKcMax / 2;  // pair words per lane of a block, at most
  const std::int64_t n_pad = (n + kNr - 1) / kNr * kNr;
  std::uint32_t* a_pack = a_buf.get(static_cast<std::size_t>(kp * kMc));  // either layout: kMc / kMr panels
  std::uint32_t* b_pack = b_buf.get(static_cast<std::size_t>(kp * n_pad));
  gemm_blocked(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, a_pack, b_pack);
}

void sgemm_bf16_reference(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                          std::int64_t ldc) {
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      float dot = 0.f;
      for (std::int64_t p = 0; p < k; ++p) {
        const float av = ta ? a[p * lda + i] : a[i * lda + p];
        const float bv = tb ? b[j * ldb + p] : b[p * ldb + j];
        dot += round_to_bf16(av) * round_to_bf16(bv);
      }
      float& out = c[i * ldc + j];
      out = beta == 0.f ? alpha * dot : alpha * dot + beta * out;
    }
}

}  // namespace topo::cpu
