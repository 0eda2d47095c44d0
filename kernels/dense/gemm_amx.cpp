// The own bf16 GEMM on AMX tiles: see gemm_amx.hpp.
//
// Strategy (one thread). op(b) is converted to bf16 while it is packed into VNNI tiles (16 rows of k pairs x 16
// columns, 1 KiB each), for a chunk of columns whose tiles fit in kBChunkBytes (at the models' shapes the whole
// of n), kept in L2. Then 32 rows of op(a) at a time are converted into A tiles (16 rows x 32 k; the block, 20 KiB
// at k = 300, stays in L1), and for each 32 columns of the chunk a 2 x 2 block of accumulator tiles runs over all
// of k (tdpbf16ps: 16 x 16 x 32 multiply-adds each) and is stored once. Tiles 0-3 hold c, 4-5 a, 6-7 b: with
// eight tiles the 2 x 2 block is the largest, one tile load per product. Transposed operands (a stored [k, m] in
// weight gradients, b stored [n, k] in x W^T) are packed through 16 x 16 transposes of bf16 pairs. Edges are zero
// in the packs (k past its end too, so padding adds exact zeros), and blocks of c cut by m or n go through a
// 32 x 32 scratch. The sum over k runs in the same order for every call of a shape: bits depend on the shape only.
// Weight gradients (op(a) stored transposed, k the batch's rows: 1,365-2,731 in a slab of cpu::sgemm) are cut
// into chunks of k (product_in_chunks): a 32-row block of a deeper op(a) leaves L1 and both operands then stream
// from L2 (those ran at 0.8-1.0x oneDNN's). Only they: chunks reload c's partial sums, which cost the models'
// k = 1,200 products 1.4-1.6x (2048x1200x1200 nt 6.0-6.2 against 3.7-3.8 ms, alternated runs).
#include "kernels/dense/gemm_amx.hpp"

#include "kernels/error.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TOPO_AMX_BUILD 1
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "kernels/dense/amx_tiles.hpp"
#include "kernels/dense/bf16_pack.hpp"
#include "kernels/dense/gemm_bf16.hpp"
#else
#define TOPO_AMX_BUILD 0
#endif

namespace topo::cpu {

#if TOPO_AMX_BUILD

// The tile helpers (amx_tiles.hpp) are shared with the bf16 attention on AMX (flash_attention_amx.cpp); the
// GEMM's own schedule follows in amx_gemm. Named namespaces: unity builds (scripts/sanitize.sh) join this file
// with others that have their own pack_b and kBlock at file scope.
namespace amx_tiles {
namespace {

struct alignas(64) TileConfig {
  std::uint8_t palette = 1, start_row = 0, reserved[14] = {};
  std::uint16_t bytes_per_row[16] = {};
  std::uint8_t rows[16] = {};
};

// All-lanes masks: the maskz forms of the shuffles below, because GCC 12's unmasked ones start from
// _mm512_undefined_*(), which -Wmaybe-uninitialized reports once inlined here.
constexpr __mmask16 kAll16 = 0xffff;
constexpr __mmask8 kAll8 = 0xff;

using bf16_pack::first_lanes;
using bf16_pack::run32;

// Two rows of 16 floats (mask: the valid columns; a null row is zero) as 16 pair words (row0[j], row1[j]).
TOPO_AMX_TARGET inline __m512i pair_rows(const float* row0, const float* row1, __mmask16 mask) {
  return bf16_pack::pair_words(row0 ? _mm512_maskz_loadu_ps(mask, row0) : _mm512_setzero_ps(),
                               row1 ? _mm512_maskz_loadu_ps(mask, row1) : _mm512_setzero_ps());
}

// r[i] lane j <- r[j] lane i, for 16 vectors of 16 32-bit lanes (here: bf16 pairs).
TOPO_AMX_TARGET inline void transpose_16x16(__m512i r[16]) {
  __m512i t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_maskz_unpacklo_epi32(kAll16, r[i], r[i + 1]);
    t[i + 1] = _mm512_maskz_unpackhi_epi32(kAll16, r[i], r[i + 1]);
  }
  for (int g = 0; g < 16; g += 4) {  // u[g + j], 128-bit lane L: column 4L + j of rows g .. g + 3
    u[g] = _mm512_maskz_unpacklo_epi64(kAll8, t[g], t[g + 2]);
    u[g + 1] = _mm512_maskz_unpackhi_epi64(kAll8, t[g], t[g + 2]);
    u[g + 2] = _mm512_maskz_unpacklo_epi64(kAll8, t[g + 1], t[g + 3]);
    u[g + 3] = _mm512_maskz_unpackhi_epi64(kAll8, t[g + 1], t[g + 3]);
  }
  for (int j = 0; j < 4; ++j) {  // row 4L + j gathers lane L of u[j], u[4 + j], u[8 + j], u[12 + j]
    const __m512i x0 = _mm512_maskz_shuffle_i32x4(kAll16, u[j], u[4 + j], 0x44);
    const __m512i x1 = _mm512_maskz_shuffle_i32x4(kAll16, u[j], u[4 + j], 0xEE);
    const __m512i x2 = _mm512_maskz_shuffle_i32x4(kAll16, u[8 + j], u[12 + j], 0x44);
    const __m512i x3 = _mm512_maskz_shuffle_i32x4(kAll16, u[8 + j], u[12 + j], 0xEE);
    r[j] = _mm512_maskz_shuffle_i32x4(kAll16, x0, x2, 0x88);
    r[4 + j] = _mm512_maskz_shuffle_i32x4(kAll16, x0, x2, 0xDD);
    r[8 + j] = _mm512_maskz_shuffle_i32x4(kAll16, x1, x3, 0x88);
    r[12 + j] = _mm512_maskz_shuffle_i32x4(kAll16, x1, x3, 0xDD);
  }
}

}  // namespace

TOPO_AMX_TARGET void configure_tiles() {
  TileConfig config;
  for (int t = 0; t < 8; ++t) config.bytes_per_row[t] = 64, config.rows[t] = 16;
  // GCC 12's _tile_loadconfig tells the compiler it reads fewer bytes than the 64 of the configuration: compiled
  // out of line, the stores of bytes_per_row and rows were dropped and ldtilecfg faulted on stack garbage. The
  // escaped address and memory clobber keep every store.
  asm volatile("" : : "r"(&config) : "memory");
  _tile_loadconfig(&config);
}

TOPO_AMX_TARGET void pack_b(bool tb, const float* b, std::int64_t ldb, std::int64_t k, std::int64_t n, std::int64_t n0,
                            std::int64_t tiles_n, std::int64_t tiles_k, std::uint16_t* out) {
  for (std::int64_t tn = 0; tn < tiles_n; ++tn) {
    const std::int64_t j0 = n0 + 16 * tn, cols = n - j0;  // cols <= 0: a padding tile
    for (std::int64_t tk = 0; tk < tiles_k; ++tk) {
      std::uint16_t* tile = out + (tn * tiles_k + tk) * kTileElems;
      const std::int64_t k0 = 32 * tk;
      if (!tb) {  // b [k, n]: the pair rows, 16 columns each
        for (std::int64_t r = 0; r < 16; ++r) {
          const std::int64_t kk = k0 + 2 * r;
          const float* row0 = kk < k ? b + kk * ldb + j0 : nullptr;
          const float* row1 = kk + 1 < k ? b + (kk + 1) * ldb + j0 : nullptr;
          _mm512_storeu_si512(tile + 32 * r, pair_rows(row0, row1, first_lanes(cols)));
        }
      } else {  // b [n, k]: a column's 32 k are contiguous
        __m512i v[16];
        for (std::int64_t j = 0; j < 16; ++j)
          v[j] = j < cols ? run32(b + (j0 + j) * ldb + k0, k - k0) : _mm512_setzero_si512();
        transpose_16x16(v);
        for (int r = 0; r < 16; ++r) _mm512_storeu_si512(tile + 32 * r, v[r]);
      }
    }
  }
}

TOPO_AMX_TARGET void pack_a(bool ta, const float* a, std::int64_t lda, std::int64_t m, std::int64_t k, std::int64_t m0,
                            std::int64_t tiles_k, std::uint16_t* out) {
  for (std::int64_t h = 0; h < 2; ++h) {
    const std::int64_t i0 = m0 + 16 * h, rows = m - i0;  // rows <= 0: a padding tile
    for (std::int64_t tk = 0; tk < tiles_k; ++tk) {
      std::uint16_t* tile = out + (h * tiles_k + tk) * kTileElems;
      const std::int64_t k0 = 32 * tk;
      if (!ta) {  // a [m, k]
        for (std::int64_t r = 0; r < 16; ++r)
          _mm512_storeu_si512(tile + 32 * r,
                              r < rows ? run32(a + (i0 + r) * lda + k0, k - k0) : _mm512_setzero_si512());
      } else {  // a [k, m]: stored row kk holds column kk of 16 consecutive rows of op(a)
        __m512i v[16];
        for (std::int64_t p = 0; p < 16; ++p) {
          const std::int64_t kk = k0 + 2 * p;
          const float* row0 = kk < k ? a + kk * lda + i0 : nullptr;
          const float* row1 = kk + 1 < k ? a + (kk + 1) * lda + i0 : nullptr;
          v[p] = pair_rows(row0, row1, first_lanes(rows));
        }
        transpose_16x16(v);
        for (int r = 0; r < 16; ++r) _mm512_storeu_si512(tile + 32 * r, v[r]);
      }
    }
  }
}

TOPO_AMX_TARGET void multiply_block(const std::uint16_t* a_block, const std::uint16_t* b_pair, std::int64_t tiles_k,
                                    bool accumulate, float* c, std::int64_t ldc, std::int64_t rows, std::int64_t cols) {
  alignas(64) float scratch[kBlock * kBlock];
  const bool whole = rows == kBlock && cols == kBlock;
  float* dst = whole ? c : scratch;
  const std::int64_t ld = whole ? ldc : kBlock, stride = ld * static_cast<std::int64_t>(sizeof(float));
  if (accumulate) {
    if (!whole) {
      std::fill(scratch, scratch + kBlock * kBlock, 0.f);
      for (std::int64_t i = 0; i < rows; ++i) std::copy(c + i * ldc, c + i * ldc + cols, scratch + i * kBlock);
    }
    _tile_loadd(0, dst, stride);
    _tile_loadd(1, dst + 16, stride);
    _tile_loadd(2, dst + 16 * ld, stride);
    _tile_loadd(3, dst + 16 * ld + 16, stride);
  } else {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
  const std::uint16_t *a0 = a_block, *a1 = a_block + tiles_k * kTileElems;
  const std::uint16_t *b0 = b_pair, *b1 = b_pair + tiles_k * kTileElems;
  for (std::int64_t tk = 0; tk < tiles_k; ++tk) {
    _tile_loadd(4, a0 + tk * kTileElems, 64);
    _tile_loadd(5, a1 + tk * kTileElems, 64);
    _tile_loadd(6, b0 + tk * kTileElems, 64);
    _tile_loadd(7, b1 + tk * kTileElems, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, dst, stride);
  _tile_stored(1, dst + 16, stride);
  _tile_stored(2, dst + 16 * ld, stride);
  _tile_stored(3, dst + 16 * ld + 16, stride);
  if (!whole)
    for (std::int64_t i = 0; i < rows; ++i) std::copy(scratch + i * kBlock, scratch + i * kBlock + cols, c + i * ldc);
}

TOPO_AMX_TARGET void release_tiles() { _tile_release(); }

}  // namespace amx_tiles

namespace amx_gemm {
namespace {

using amx_tiles::kBlock;
using amx_tiles::kTileElems;
constexpr std::int64_t kBChunkBytes = std::int64_t{1} << 20;  // packed op(b) per chunk of columns: within L2
constexpr std::int64_t kMaxChunkK = 384;  // k per chunk of a weight gradient: its 32-row block of a in L1

bool request_amx() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool amx_bf16 = edx & (1u << 22), amx_tile = edx & (1u << 24);
  if (!amx_bf16 || !amx_tile || !bf16_gemm_cpu_supported()) return false;
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;  // Linux 5.16+: asm/prctl.h, fpu/xstate.h
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

// c = (accumulate ? c : 0) + op(a) @ op(b), k > 0.
TOPO_AMX_TARGET void product(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                             std::int64_t lda, const float* b, std::int64_t ldb, bool accumulate, float* c,
                             std::int64_t ldc) {
  thread_local std::vector<std::uint16_t> a_pack, b_pack;
  const std::int64_t tiles_k = (k + 31) / 32;
  const std::int64_t pair_bytes = 2 * tiles_k * kTileElems * static_cast<std::int64_t>(sizeof(std::uint16_t));
  const std::int64_t chunk = std::max<std::int64_t>(1, kBChunkBytes / pair_bytes) * kBlock;  // columns
  a_pack.resize(static_cast<std::size_t>(2 * tiles_k * kTileElems));
  amx_tiles::configure_tiles();
  for (std::int64_t n0 = 0; n0 < n; n0 += chunk) {
    const std::int64_t tiles_n = 2 * ((std::min(chunk, n - n0) + kBlock - 1) / kBlock);
    b_pack.resize(static_cast<std::size_t>(tiles_n * tiles_k * kTileElems));
    amx_tiles::pack_b(tb, b, ldb, k, n, n0, tiles_n, tiles_k, b_pack.data());
    for (std::int64_t m0 = 0; m0 < m; m0 += kBlock) {
      amx_tiles::pack_a(ta, a, lda, m, k, m0, tiles_k, a_pack.data());
      for (std::int64_t tn = 0; tn < tiles_n; tn += 2) {
        const std::int64_t j0 = n0 + 16 * tn;
        amx_tiles::multiply_block(a_pack.data(), b_pack.data() + tn * tiles_k * kTileElems, tiles_k, accumulate,
                                  c + m0 * ldc + j0, ldc, std::min(kBlock, m - m0), std::min(kBlock, n - j0));
      }
    }
  }
  amx_tiles::release_tiles();
}

// Weight gradients (op(a) stored transposed; k the batch's rows, 1,365-2,731 in a slab of cpu::sgemm): k in
// equal chunks of at most kMaxChunkK, each after the first added onto c, so that a 32-row block of op(a) stays
// in L1; the other products keep all of k in one pass (chunks there cost c's reloads: 1.4-1.6x at k = 1,200).
void product_in_chunks(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                       std::int64_t lda, const float* b, std::int64_t ldb, bool accumulate, float* c,
                       std::int64_t ldc) {
  const std::int64_t chunks = ta ? (k + kMaxChunkK - 1) / kMaxChunkK : 1, step = (k + chunks - 1) / chunks;
  for (std::int64_t k0 = 0; k0 < k; k0 += step)
    product(ta, tb, m, n, std::min(step, k - k0), ta ? a + k0 * lda : a + k0, lda, tb ? b + k0 : b + k0 * ldb, ldb,
            accumulate || k0 > 0, c, ldc);
}

}  // namespace
}  // namespace amx_gemm

bool amx_gemm_supported() {
  static const bool supported = amx_gemm::request_amx();
  return supported;
}

void amx_sgemm_bf16(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                    std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0 || alpha == 0.f) return sgemm_bf16(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);  // c = beta c
  TOPO_CHECK(amx_gemm_supported(), "AMX bf16 GEMM: this CPU or kernel offers no AMX tiles with bf16");
  if (alpha == 1.f && (beta == 0.f || beta == 1.f))
    return amx_gemm::product_in_chunks(ta, tb, m, n, k, a, lda, b, ldb, beta == 1.f, c, ldc);
  // Other scales (rare: no model's product has them) take the product apart and combine it with c.
  thread_local std::vector<float> t;
  t.resize(static_cast<std::size_t>(m * n));
  amx_gemm::product_in_chunks(ta, tb, m, n, k, a, lda, b, ldb, false, t.data(), n);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      c[i * ldc + j] = beta == 0.f ? alpha * t[i * n + j] : alpha * t[i * n + j] + beta * c[i * ldc + j];
}

#else  // not x86-64

bool amx_gemm_supported() { return false; }
void amx_sgemm_bf16(bool, bool, std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t,
                    const float*, std::int64_t, float, float*, std::int64_t) {
  fail("AMX bf16 GEMM: not an x86-64 build");
}

#endif

}  // namespace topo::cpu
