// Narrow-output products (gemm_skinny.hpp). CPU strategy: rows — parallel_for over rows of a, each thread
// through register blocks of R rows x NV vectors of W outputs (R * NV <= 8 accumulators, enough to cover the
// FMA latency); tn — parallel_for over fixed blocks of k, each a partial [m, NV * W] in L1, summed in block order.
#include "kernels/dense/gemm_skinny.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/parallel.hpp"

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#define TOPO_SKINNY_SIMD 1
#else
#define TOPO_SKINNY_SIMD 0
#endif

namespace topo::cpu {
namespace {

// Lanes: one vector of outputs, 8 floats (AVX2) or 16 (AVX-512, where the build targets it). The same FMAs
// in the same order per output element either way (k ascending), so both give the same bits; 16 lanes halve
// the instructions. These products are FMA-bound, not byte-bound, on a core that streams 60 GB/s from L3:
// [100k, 128] @ [128, 16] on 2 threads of the Xeon with AMX ran at 185 GFLOP/s with 8 lanes (that core's AVX2
// FMA peak), 2.2 ms where the bytes take 0.9 ms. Outputs of n <= 8 columns keep 8 lanes (16 would be half
// empty: [100k, 16] @ [16, 8] 0.21 -> 0.24 ms).
#if TOPO_SKINNY_SIMD
struct Lanes8 {
  using Vec = __m256;
  static constexpr std::int64_t W = 8;
  static Vec zero() { return _mm256_setzero_ps(); }
  static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  static Vec broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static Vec fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  static void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
};
#else
struct Lanes8 {  // the plain loops' block width
  static constexpr std::int64_t W = 8;
};
#endif
#if defined(__AVX512F__)
struct Lanes16 {
  using Vec = __m512;
  static constexpr std::int64_t W = 16;
  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static Vec broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static Vec fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  static void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
};
#else
using Lanes16 = Lanes8;
#endif

template <class L>
std::int64_t vectors_for(std::int64_t n) { return (n + L::W - 1) / L::W; }

// op(b) [k, n] as [k, width], zero beyond column n.
std::vector<float> pack_b(bool trans_b, std::int64_t n, std::int64_t k, const float* b, std::int64_t ldb,
                          std::int64_t width) {
  std::vector<float> bp(static_cast<std::size_t>(k * width), 0.f);
  for (std::int64_t kk = 0; kk < k; ++kk)
    for (std::int64_t j = 0; j < n; ++j) bp[kk * width + j] = trans_b ? b[j * ldb + kk] : b[kk * ldb + j];
  return bp;
}

// out[r * NV * W + j] = sum over kk ascending of a[r * lda + kk] * bp[kk * NV * W + j], for r < R.
template <class L, int NV, int R>
inline void rows_block(const float* a, std::int64_t lda, const float* bp, std::int64_t k, float* out) {
#if TOPO_SKINNY_SIMD
  typename L::Vec acc[R][NV];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = L::zero();
  for (std::int64_t kk = 0; kk < k; ++kk) {
    if ((kk & 15) == 0)  // a line of each row 8 blocks ahead as this block enters one: R interleaved streams
#pragma GCC unroll 8     // left the broadcasts waiting on memory
      for (int r = 0; r < R; ++r) _mm_prefetch(reinterpret_cast<const char*>(a + (r + 8 * R) * lda + kk), _MM_HINT_T0);
    typename L::Vec bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = L::load(bp + (kk * NV + v) * L::W);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const typename L::Vec x = L::broadcast(a + r * lda + kk);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = L::fma(x, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) L::store(out + (r * NV + v) * L::W, acc[r][v]);
#else
  for (int r = 0; r < R; ++r)
    for (std::int64_t j = 0; j < NV * L::W; ++j) {
      float acc = 0.f;
      for (std::int64_t kk = 0; kk < k; ++kk) acc = std::fma(a[r * lda + kk], bp[kk * NV * L::W + j], acc);
      out[r * NV * L::W + j] = acc;
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

template <class L, int NV>
void rows_range(const float* a, std::int64_t lda, const float* bp, std::int64_t n, std::int64_t k, float alpha,
                float beta, float* c, std::int64_t ldc, std::int64_t i0, std::int64_t i1) {
  constexpr int R = NV == 1 ? 8 : NV == 2 ? 4 : 2;
  alignas(64) float out[R * NV * L::W];
  std::int64_t i = i0;
  for (; i + R <= i1; i += R) {
    rows_block<L, NV, R>(a + i * lda, lda, bp, k, out);
    write_rows(out, R, NV * L::W, n, alpha, beta, c + i * ldc, ldc);
  }
  for (; i < i1; ++i) {  // the same sums, one row at a time
    rows_block<L, NV, 1>(a + i * lda, lda, bp, k, out);
    write_rows(out, 1, NV * L::W, n, alpha, beta, c + i * ldc, ldc);
  }
}

#if TOPO_SKINNY_SIMD
// p rows mm .. mm + MU += the products of b's `rows` rows (gv, from row kk on) with a's entries at those rows.
template <class L, int NV, int MU, int RS>
inline void tn_rows(const float* a, std::int64_t lda, std::int64_t kk, int rows, std::int64_t mm,
                    const typename L::Vec (&gv)[RS][NV], float* p) {
  typename L::Vec acc[MU][NV];
#pragma GCC unroll 8
  for (int u = 0; u < MU; ++u)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[u][v] = L::load(p + ((mm + u) * NV + v) * L::W);
#pragma GCC unroll 4
  for (int r = 0; r < RS; ++r) {
    if (r >= rows) break;
#pragma GCC unroll 8
    for (int u = 0; u < MU; ++u) {
      const typename L::Vec x = L::broadcast(a + (kk + r) * lda + mm + u);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[u][v] = L::fma(x, gv[r][v], acc[u][v]);
    }
  }
#pragma GCC unroll 8
  for (int u = 0; u < MU; ++u)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) L::store(p + ((mm + u) * NV + v) * L::W, acc[u][v]);
}
#endif

// p[mm * NV * W + j] += sum over kk in [kk0, kk1) ascending of a[kk * lda + mm] * b[kk * ldb + j].
template <class L, int NV>
void tn_block(const float* a, std::int64_t lda, const float* b, std::int64_t ldb, std::int64_t m, std::int64_t n,
              std::int64_t kk0, std::int64_t kk1, float* p) {
  // Rows of b per step, held in registers beside the MU * NV accumulators (16 ymm in all: more spill).
  constexpr int RS = NV == 1 ? 4 : NV == 2 ? 2 : 1;
  alignas(64) float g[RS][NV * L::W];
  for (std::int64_t kk = kk0; kk < kk1; kk += RS) {
    const int rows = static_cast<int>(std::min<std::int64_t>(RS, kk1 - kk));
    for (int r = 0; r < RS; ++r)
      for (std::int64_t j = 0; j < NV * L::W; ++j) g[r][j] = r < rows && j < n ? b[(kk + r) * ldb + j] : 0.f;
#if TOPO_SKINNY_SIMD
    typename L::Vec gv[RS][NV];
#pragma GCC unroll 4
    for (int r = 0; r < RS; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) gv[r][v] = L::load(&g[r][v * L::W]);
    // a's rows 16 ahead, every line: left to the hardware, each step waited on its broadcasts (40% of tn).
    for (int r = 0; r < rows; ++r)
      if (kk + r + 16 < kk1)
        for (std::int64_t mm = 0; mm < m; mm += 16)
          _mm_prefetch(reinterpret_cast<const char*>(a + (kk + r + 16) * lda + mm), _MM_HINT_T0);
    // MU outputs rows at once: MU * NV independent accumulator chains (one would wait on its own FMAs).
    constexpr int MU = NV == 1 ? 8 : NV == 2 ? 4 : 2;
    std::int64_t mm = 0;
    for (; mm + MU <= m; mm += MU) tn_rows<L, NV, MU, RS>(a, lda, kk, rows, mm, gv, p);
    for (; mm < m; ++mm) tn_rows<L, NV, 1, RS>(a, lda, kk, rows, mm, gv, p);
#else
    for (std::int64_t mm = 0; mm < m; ++mm)
      for (int r = 0; r < rows; ++r) {
        const float x = a[(kk + r) * lda + mm];
        for (std::int64_t j = 0; j < NV * L::W; ++j) p[mm * NV * L::W + j] = std::fma(x, g[r][j], p[mm * NV * L::W + j]);
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
  const auto run = [&]<class L>(L) {
    const std::int64_t nv = vectors_for<L>(n);
    const std::vector<float> bp = pack_b(trans_b, n, k, b, ldb, nv * L::W);
    parallel_for(m, k * nv * L::W, [&](std::int64_t i0, std::int64_t i1) {
      switch (nv) {
        case 1: rows_range<L, 1>(a, lda, bp.data(), n, k, alpha, beta, c, ldc, i0, i1); break;
        case 2: rows_range<L, 2>(a, lda, bp.data(), n, k, alpha, beta, c, ldc, i0, i1); break;
        case 3: rows_range<L, 3>(a, lda, bp.data(), n, k, alpha, beta, c, ldc, i0, i1); break;
        default: rows_range<L, 4>(a, lda, bp.data(), n, k, alpha, beta, c, ldc, i0, i1); break;
      }
    });
  };
  if (n <= Lanes8::W) run(Lanes8{});
  else run(Lanes16{});
}

void skinny_gemm_tn(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
                    const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  const auto run = [&]<class L>(L) {
    const std::int64_t nv = vectors_for<L>(n), width = nv * L::W;
    // Blocks of k fixed by the shape: kSkinnyBlockK rows, or more so that there are at most 64 partials.
    const std::int64_t block = std::max(kSkinnyBlockK, (k + 63) / 64), blocks = (k + block - 1) / block;
    std::vector<float> partials(static_cast<std::size_t>(blocks * m * width), 0.f);
    parallel_for(blocks, block * m * width, [&](std::int64_t q0, std::int64_t q1) {
      for (std::int64_t q = q0; q < q1; ++q) {
        const std::int64_t kk0 = q * block, kk1 = std::min(k, kk0 + block);
        float* p = partials.data() + q * m * width;
        switch (nv) {
          case 1: tn_block<L, 1>(a, lda, b, ldb, m, n, kk0, kk1, p); break;
          case 2: tn_block<L, 2>(a, lda, b, ldb, m, n, kk0, kk1, p); break;
          case 3: tn_block<L, 3>(a, lda, b, ldb, m, n, kk0, kk1, p); break;
          default: tn_block<L, 4>(a, lda, b, ldb, m, n, kk0, kk1, p); break;
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
  };
  if (n <= Lanes8::W) run(Lanes8{});
  else run(Lanes16{});
}

}  // namespace topo::cpu
