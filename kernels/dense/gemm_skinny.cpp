// Narrow-output products (gemm_skinny.hpp). CPU strategy: rows — parallel_for over rows of a, each thread
// through register blocks of R rows x NV vectors of 8 outputs (R * NV <= 8 accumulators, enough to cover the
// FMA latency); tn — parallel_for over fixed blocks of k, each a partial [m, NV * 8] in L1, summed in block order.
#include "kernels/dense/gemm_skinny.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/parallel.hpp"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define TOPO_SKINNY_AVX2 1
#else
#define TOPO_SKINNY_AVX2 0
#endif

namespace topo::cpu {
namespace {

constexpr std::int64_t kW = 8;  // floats per vector

std::int64_t vectors_for(std::int64_t n) { return (n + kW - 1) / kW; }

// op(b) [k, n] as [k, nv * 8], zero beyond column n.
std::vector<float> pack_b(bool trans_b, std::int64_t n, std::int64_t k, const float* b, std::int64_t ldb,
                          std::int64_t nv) {
  std::vector<float> bp(static_cast<std::size_t>(k * nv * kW), 0.f);
  for (std::int64_t kk = 0; kk < k; ++kk)
    for (std::int64_t j = 0; j < n; ++j) bp[kk * nv * kW + j] = trans_b ? b[j * ldb + kk] : b[kk * ldb + j];
  return bp;
}

// out[r * NV * 8 + j] = sum over kk ascending of a[r * lda + kk] * bp[kk * NV * 8 + j], for r < R.
template <int NV, int R>
inline void rows_block(const float* a, std::int64_t lda, const float* bp, std::int64_t k, float* out) {
#if TOPO_SKINNY_AVX2
  __m256 acc[R][NV];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_setzero_ps();
  for (std::int64_t kk = 0; kk < k; ++kk) {
    if ((kk & 15) == 0)  // a line of each row 8 blocks ahead as this block enters one: R interleaved streams
#pragma GCC unroll 8     // left the broadcasts waiting on memory
      for (int r = 0; r < R; ++r) _mm_prefetch(reinterpret_cast<const char*>(a + (r + 8 * R) * lda + kk), _MM_HINT_T0);
    __m256 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = _mm256_loadu_ps(bp + (kk * NV + v) * kW);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256 x = _mm256_broadcast_ss(a + r * lda + kk);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_fmadd_ps(x, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) _mm256_storeu_ps(out + (r * NV + v) * kW, acc[r][v]);
#else
  for (int r = 0; r < R; ++r)
    for (std::int64_t j = 0; j < NV * kW; ++j) {
      float acc = 0.f;
      for (std::int64_t kk = 0; kk < k; ++kk) acc = std::fma(a[r * lda + kk], bp[kk * NV * kW + j], acc);
      out[r * NV * kW + j] = acc;
    }
#endif
}

inline void write_rows(const float* out, std::int64_t rows, std::int64_t width, std::int64_t n, float alpha, float beta,
                       float* c, std::int64_t ldc) {
  for (std::int64_t r = 0; r < rows; ++r) {
    float* cr = c + r * ldc;
    const float* o = out + r * width;
    if (beta == 0.f)
      for (std::int64_t j = 0; j < n; ++j) cr[j] = alpha * o[j];
    else
      for (std::int64_t j = 0; j < n; ++j) cr[j] = alpha * o[j] + beta * cr[j];
  }
}

template <int NV>
void rows_range(const float* a, std::int64_t lda, const float* bp, std::int64_t n, std::int64_t k, float alpha,
                float beta, float* c, std::int64_t ldc, std::int64_t i0, std::int64_t i1) {
  constexpr int R = NV == 1 ? 8 : NV == 2 ? 4 : 2;
  alignas(32) float out[R * NV * kW];
  std::int64_t i = i0;
  for (; i + R <= i1; i += R) {
    rows_block<NV, R>(a + i * lda, lda, bp, k, out);
    write_rows(out, R, NV * kW, n, alpha, beta, c + i * ldc, ldc);
  }
  for (; i < i1; ++i) {  // the same sums, one row at a time
    rows_block<NV, 1>(a + i * lda, lda, bp, k, out);
    write_rows(out, 1, NV * kW, n, alpha, beta, c + i * ldc, ldc);
  }
}

#if TOPO_SKINNY_AVX2
// p rows mm .. mm + MU += the products of b's `rows` rows (gv, from row kk on) with a's entries at those rows.
template <int NV, int MU, int RS>
inline void tn_rows(const float* a, std::int64_t lda, std::int64_t kk, int rows, std::int64_t mm,
                    const __m256 (&gv)[RS][NV], float* p) {
  __m256 acc[MU][NV];
#pragma GCC unroll 8
  for (int u = 0; u < MU; ++u)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[u][v] = _mm256_loadu_ps(p + ((mm + u) * NV + v) * kW);
#pragma GCC unroll 4
  for (int r = 0; r < RS; ++r) {
    if (r >= rows) break;
#pragma GCC unroll 8
    for (int u = 0; u < MU; ++u) {
      const __m256 x = _mm256_broadcast_ss(a + (kk + r) * lda + mm + u);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[u][v] = _mm256_fmadd_ps(x, gv[r][v], acc[u][v]);
    }
  }
#pragma GCC unroll 8
  for (int u = 0; u < MU; ++u)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) _mm256_storeu_ps(p + ((mm + u) * NV + v) * kW, acc[u][v]);
}
#endif

// p[mm * NV * 8 + j] += sum over kk in [kk0, kk1) ascending of a[kk * lda + mm] * b[kk * ldb + j].
template <int NV>
void tn_block(const float* a, std::int64_t lda, const float* b, std::int64_t ldb, std::int64_t m, std::int64_t n,
              std::int64_t kk0, std::int64_t kk1, float* p) {
  // Rows of b per step, held in registers beside the MU * NV accumulators (16 ymm in all: more spill).
  constexpr int RS = NV == 1 ? 4 : NV == 2 ? 2 : 1;
  alignas(32) float g[RS][NV * kW];
  for (std::int64_t kk = kk0; kk < kk1; kk += RS) {
    const int rows = static_cast<int>(std::min<std::int64_t>(RS, kk1 - kk));
    for (int r = 0; r < RS; ++r)
      for (std::int64_t j = 0; j < NV * kW; ++j) g[r][j] = r < rows && j < n ? b[(kk + r) * ldb + j] : 0.f;
#if TOPO_SKINNY_AVX2
    __m256 gv[RS][NV];
#pragma GCC unroll 4
    for (int r = 0; r < RS; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) gv[r][v] = _mm256_load_ps(&g[r][v * kW]);
    // a's rows 16 ahead, every line: left to the hardware, each step waited on its broadcasts (40% of tn).
    for (int r = 0; r < rows; ++r)
      if (kk + r + 16 < kk1)
        for (std::int64_t mm = 0; mm < m; mm += 16)
          _mm_prefetch(reinterpret_cast<const char*>(a + (kk + r + 16) * lda + mm), _MM_HINT_T0);
    // MU outputs rows at once: MU * NV independent accumulator chains (one would wait on its own FMAs).
    constexpr int MU = NV == 1 ? 8 : NV == 2 ? 4 : 2;
    std::int64_t mm = 0;
    for (; mm + MU <= m; mm += MU) tn_rows<NV, MU, RS>(a, lda, kk, rows, mm, gv, p);
    for (; mm < m; ++mm) tn_rows<NV, 1, RS>(a, lda, kk, rows, mm, gv, p);
#else
    for (std::int64_t mm = 0; mm < m; ++mm)
      for (int r = 0; r < rows; ++r) {
        const float x = a[(kk + r) * lda + mm];
        for (std::int64_t j = 0; j < NV * kW; ++j) p[mm * NV * kW + j] = std::fma(x, g[r][j], p[mm * NV * kW + j]);
      }
#endif
  }
}

}  // namespace

bool skinny_rows_applies(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k) {
  return !trans_a && n >= 1 && n <= kSkinnyMaxN && m >= 256 && k >= 1 && k <= 1024;
}

bool skinny_tn_applies(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k) {
  return trans_a && !trans_b && n >= 1 && n <= kSkinnyMaxN && m >= 1 && m <= 1024 && k >= 16 * std::max(m, n) &&
         k >= 2 * kSkinnyBlockK;
}

void skinny_gemm_rows(bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                      std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  const std::int64_t nv = vectors_for(n);
  const std::vector<float> bp = pack_b(trans_b, n, k, b, ldb, nv);
  parallel_for(m, k * nv * kW, [&](std::int64_t i0, std::int64_t i1) {
    switch (nv) {
      case 1: rows_range<1>(a, lda, bp.data(), n, k, alpha, beta, c, ldc, i0, i1); break;
      case 2: rows_range<2>(a, lda, bp.data(), n, k, alpha, beta, c, ldc, i0, i1); break;
      case 3: rows_range<3>(a, lda, bp.data(), n, k, alpha, beta, c, ldc, i0, i1); break;
      default: rows_range<4>(a, lda, bp.data(), n, k, alpha, beta, c, ldc, i0, i1); break;
    }
  });
}

void skinny_gemm_tn(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
                    const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  const std::int64_t nv = vectors_for(n), width = nv * kW;
  // Blocks of k fixed by the shape: kSkinnyBlockK rows, or more so that there are at most 64 partials.
  const std::int64_t block = std::max(kSkinnyBlockK, (k + 63) / 64), blocks = (k + block - 1) / block;
  std::vector<float> partials(static_cast<std::size_t>(blocks * m * width), 0.f);
  parallel_for(blocks, block * m * width, [&](std::int64_t q0, std::int64_t q1) {
    for (std::int64_t q = q0; q < q1; ++q) {
      const std::int64_t kk0 = q * block, kk1 = std::min(k, kk0 + block);
      float* p = partials.data() + q * m * width;
      switch (nv) {
        case 1: tn_block<1>(a, lda, b, ldb, m, n, kk0, kk1, p); break;
        case 2: tn_block<2>(a, lda, b, ldb, m, n, kk0, kk1, p); break;
        case 3: tn_block<3>(a, lda, b, ldb, m, n, kk0, kk1, p); break;
        default: tn_block<4>(a, lda, b, ldb, m, n, kk0, kk1, p); break;
      }
    }
  });
  for (std::int64_t mm = 0; mm < m; ++mm)
    for (std::int64_t j = 0; j < n; ++j) {
      float sum = 0.f;
      for (std::int64_t q = 0; q < blocks; ++q) sum += partials[(q * m + mm) * width + j];
      float* cj = c + mm * ldc + j;
      *cj = beta == 0.f ? alpha * sum : alpha * sum + beta * *cj;
    }
}

}  // namespace topo::cpu
