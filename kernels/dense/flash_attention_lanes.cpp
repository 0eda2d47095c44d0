// Full attention with positions in lanes: see flash_attention_lanes.hpp.
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
// The backward runs the same two micro-kernels with keys in lanes, and dq from dS transposed.
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

// out[g * ldo + 16 i] = sum_c a[c * lda + 16 i] b[g * ldb + c] for g < G, i < kQv, c < depth: G rows of b
// (broadcast, any row stride) against 4 vectors of a feature-major operand a (scores: a = the block's
// queries, b = keys; the backward's S and dP with keys in lanes: a = keys or values, b = queries or dout).
// Forced inline (as lanes_axpy): called out of line from its several call sites, the two passes ran 4-7%
// slower.
template <int G>
[[gnu::always_inline]] inline void lanes_dot(const float* a, std::int64_t lda, std::int64_t depth, const float* b,
                                             std::int64_t ldb, float* out, std::int64_t ldo) {
  __m512 acc[G][kQv];
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < kQv; ++i) acc[g][i] = _mm512_setzero_ps();
  for (std::int64_t c = 0; c < depth; ++c) {
    __m512 x[kQv];
    for (int i = 0; i < kQv; ++i) x[i] = _mm512_loadu_ps(a + c * lda + i * kL);
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      const __m512 y = _mm512_set1_ps(b[g * ldb + c]);
      for (int i = 0; i < kQv; ++i) acc[g][i] = _mm512_fmadd_ps(y, x[i], acc[g][i]);
    }
  }
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < kQv; ++i) _mm512_storeu_ps(out + g * ldo + i * kL, acc[g][i]);
}

// lanes_dot over n rows of b: groups of kKeys, then one at a time.
void lanes_dots(const float* a, std::int64_t lda, std::int64_t depth, const float* b, std::int64_t ldb,
                std::int64_t n, float* out, std::int64_t ldo) {
  std::int64_t g = 0;
  for (; g + kKeys <= n; g += kKeys) lanes_dot<kKeys>(a, lda, depth, b + g * ldb, ldb, out + g * ldo, ldo);
  for (; g < n; ++g) lanes_dot<1>(a, lda, depth, b + g * ldb, ldb, out + g * ldo, ldo);
}

// y[f * ldy + 16 i] = alpha_i y[f * ldy + 16 i] + sum_j t[j * ldt + 16 i] b[j * ldb + f] for f < F, i < kQv,
// j < n: F columns of b (broadcast, any row stride) weighting n rows of 4 vectors of t (the forward's o += P V
// with t = P, b = v; the backward's dv += P^T dout, dk += dS^T q with keys in lanes, dq += dS k with queries).
template <int F>
[[gnu::always_inline]] inline void lanes_axpy(const float* t, std::int64_t ldt, std::int64_t n, const float* b,
                                              std::int64_t ldb, const __m512* alpha, float* y, std::int64_t ldy) {
  __m512 acc[F][kQv];
  for (int f = 0; f < F; ++f)
    for (int i = 0; i < kQv; ++i) acc[f][i] = _mm512_mul_ps(_mm512_loadu_ps(y + f * ldy + i * kL), alpha[i]);
  for (std::int64_t j = 0; j < n; ++j) {
    __m512 p[kQv];
    for (int i = 0; i < kQv; ++i) p[i] = _mm512_loadu_ps(t + j * ldt + i * kL);
#pragma GCC unroll 5
    for (int f = 0; f < F; ++f) {
      const __m512 x = _mm512_set1_ps(b[j * ldb + f]);
      for (int i = 0; i < kQv; ++i) acc[f][i] = _mm512_fmadd_ps(x, p[i], acc[f][i]);
    }
  }
  for (int f = 0; f < F; ++f)
    for (int i = 0; i < kQv; ++i) _mm512_storeu_ps(y + f * ldy + i * kL, acc[f][i]);
}

template <int F>
void lanes_axpy_tail(int f_left, const float* t, std::int64_t ldt, std::int64_t n, const float* b, std::int64_t ldb,
                     const __m512* alpha, float* y, std::int64_t ldy) {
  if constexpr (F > 0) {
    if (f_left == F) return lanes_axpy<F>(t, ldt, n, b, ldb, alpha, y, ldy);
    lanes_axpy_tail<F - 1>(f_left, t, ldt, n, b, ldb, alpha, y, ldy);
  }
}

// lanes_axpy over the `width` columns of b: groups of kFeatures, then the rest.
void lanes_axpys(const float* t, std::int64_t ldt, std::int64_t n, const float* b, std::int64_t ldb,
                 std::int64_t width, const __m512* alpha, float* y, std::int64_t ldy) {
  std::int64_t c = 0;
  for (; c + kFeatures <= width; c += kFeatures) lanes_axpy<kFeatures>(t, ldt, n, b + c, ldb, alpha, y + c * ldy, ldy);
  if (c < width)
    lanes_axpy_tail<kFeatures - 1>(static_cast<int>(width - c), t, ldt, n, b + c, ldb, alpha, y + c * ldy, ldy);
}

// One block of nq <= kBlock queries starting at row b0.
void forward_block(const flash_band::HeadView& h, std::int64_t b0, std::int64_t nq, float scale, const float* q,
                   const float* k, const float* v, float* out, float* lse, Scratch& w) {
  const std::int64_t ldq = kBlock + kL;  // transpose_rows zero-fills up to ld, which must exceed the block by 16
  float *qt = sized(w.qt, h.dk * ldq + ldq), *st = sized(w.s, kKeyTile * kBlock), *ot = sized(w.ot, h.dv * kBlock);
  float* lanes = sized(w.lse, kBlock);
  transpose_rows(q, h.ldk, b0, nq, h.dk, qt, ldq);
  const __m512 sv = _mm512_set1_ps(scale);
  for (std::int64_t c = 0; c < h.dk; ++c)
    for (int i = 0; i < kQv; ++i) {
      float* x = qt + c * ldq + i * kL;
      _mm512_storeu_ps(x, _mm512_mul_ps(_mm512_loadu_ps(x), sv));
    }
  std::fill_n(ot, h.dv * kBlock, 0.f);
  __m512 m[kQv], l[kQv];
  for (int i = 0; i < kQv; ++i) m[i] = _mm512_set1_ps(-INFINITY), l[i] = _mm512_setzero_ps();
  for (std::int64_t j0 = 0; j0 < h.len; j0 += kKeyTile) {
    const std::int64_t nk = std::min(kKeyTile, h.len - j0);
    lanes_dots(qt, ldq, h.dk, k + j0 * h.ldk, h.ldk, nk, st, kBlock);
    __m512 top[kQv], alpha[kQv], sum[kQv];
    for (int i = 0; i < kQv; ++i) top[i] = m[i];
    for (std::int64_t j = 0; j < nk; ++j)
      for (int i = 0; i < kQv; ++i) top[i] = _mm512_max_ps(top[i], _mm512_loadu_ps(st + j * kBlock + i * kL));
    for (int i = 0; i < kQv; ++i) {
      alpha[i] = exp16(_mm512_sub_ps(m[i], top[i]));  // 0 on the first tile (m = -inf)
      m[i] = top[i];
      sum[i] = _mm512_setzero_ps();
    }
    for (std::int64_t j = 0; j < nk; ++j)
      for (int i = 0; i < kQv; ++i) {
        float* x = st + j * kBlock + i * kL;
        const __m512 p = exp16(_mm512_sub_ps(_mm512_loadu_ps(x), m[i]));
        _mm512_storeu_ps(x, p);
        sum[i] = _mm512_add_ps(sum[i], p);
      }
    for (int i = 0; i < kQv; ++i) l[i] = _mm512_fmadd_ps(l[i], alpha[i], sum[i]);
    lanes_axpys(st, kBlock, nk, v + j0 * h.ldv, h.ldv, h.dv, alpha, ot, kBlock);
  }
  __m512 inv[kQv];
  for (int i = 0; i < kQv; ++i) {
    inv[i] = _mm512_div_ps(_mm512_set1_ps(1.f), l[i]);
    _mm512_storeu_ps(lanes + i * kL, _mm512_add_ps(m[i], log16(l[i])));
  }
  for (std::int64_t c = 0; c < h.dv; ++c)
    for (int i = 0; i < kQv; ++i) {
      float* x = ot + c * kBlock + i * kL;
      _mm512_storeu_ps(x, _mm512_mul_ps(_mm512_loadu_ps(x), inv[i]));
    }
  transpose_out(ot, kBlock, nq, h.dv, out, b0, h.ld_out);
  for (std::int64_t t = 0; t < nq; ++t) lse[(b0 + t) * h.ld_lse] = lanes[t];
}

}  // namespace

// Keys in lanes: per block of 64 keys, their k and v transposed; per tile of kQueryTile queries, S and dP by
// lanes_dot (queries broadcast), P and dS elementwise, dv and dk accumulated by lanes_axpy; dS transposed
// (queries in lanes) for dq, accumulated feature-major over all key blocks and written back at the end.
void backward(const flash_band::HeadView& h, float scale, const float* q, const float* k, const float* v,
              const float* lse, const float* delta, const float* dout, float* dq, float* dk, float* dv, Scratch& w) {
  constexpr std::int64_t kQueryTile = 4 * kBlock;  // a whole number of query blocks (dq's lanes)
  const std::int64_t n = h.len, ldt = kBlock + kL, ldqt = round_up(n, kBlock) + kL, ldst = kQueryTile + kL;
  float *kt = sized(w.kt, h.dk * ldt + ldt), *vt = sized(w.vt, h.dv * ldt + ldt);
  float *dkt = sized(w.dkt, h.dk * kBlock), *dvt = sized(w.dvt, h.dv * kBlock), *dqt = sized(w.dqt, h.dk * ldqt);
  float *p = sized(w.s, kQueryTile * kBlock), *ds = sized(w.ds, kQueryTile * kBlock);
  float* ds_t = sized(w.ds_t, kBlock * ldst + ldst);
  std::fill_n(dqt, h.dk * ldqt, 0.f);
  const __m512 ones[kQv] = {_mm512_set1_ps(1.f), _mm512_set1_ps(1.f), _mm512_set1_ps(1.f), _mm512_set1_ps(1.f)};
  const __m512 sv = _mm512_set1_ps(scale);
  for (std::int64_t k0 = 0; k0 < n; k0 += kBlock) {
    const std::int64_t nk = std::min(kBlock, n - k0);
    transpose_rows(k, h.ldk, k0, nk, h.dk, kt, ldt);
    transpose_rows(v, h.ldv, k0, nk, h.dv, vt, ldt);
    std::fill_n(dkt, h.dk * kBlock, 0.f);
    std::fill_n(dvt, h.dv * kBlock, 0.f);
    // Lanes past the sequence's last key (a last block of nk < 64) hold p and dS of zero-padded keys: never
    // stored (dk, dv write nk rows) nor read (dq sums over nk keys), so they are left unmasked.
    for (std::int64_t q0 = 0; q0 < n; q0 += kQueryTile) {
      const std::int64_t nq = std::min(kQueryTile, n - q0);
      lanes_dots(kt, ldt, h.dk, q + q0 * h.ldk, h.ldk, nq, p, kBlock);
      lanes_dots(vt, ldt, h.dv, dout + q0 * h.ld_out, h.ld_out, nq, ds, kBlock);
      for (std::int64_t r = 0; r < nq; ++r) {
        const __m512 l = _mm512_set1_ps(lse[q0 + r]), dl = _mm512_set1_ps(delta[q0 + r]);
        for (int i = 0; i < kQv; ++i) {
          float *x = p + r * kBlock + i * kL, *g = ds + r * kBlock + i * kL;
          const __m512 pr = exp16(_mm512_fmsub_ps(_mm512_loadu_ps(x), sv, l));
          _mm512_storeu_ps(x, pr);
          _mm512_storeu_ps(g, _mm512_mul_ps(_mm512_mul_ps(pr, sv), _mm512_sub_ps(_mm512_loadu_ps(g), dl)));
        }
      }
      lanes_axpys(p, kBlock, nq, dout + q0 * h.ld_out, h.ld_out, h.dv, ones, dvt, kBlock);
      lanes_axpys(ds, kBlock, nq, q + q0 * h.ldk, h.ldk, h.dk, ones, dkt, kBlock);
      // dq[q][c] += sum_j ds[q][j] k[j][c]: dS transposed (queries in lanes, columns past nq zero).
      transpose_rows(ds, kBlock, 0, nq, kBlock, ds_t, ldst);
      for (std::int64_t b = 0; b < nq; b += kBlock)
        lanes_axpys(ds_t + b, ldst, nk, k + k0 * h.ldk, h.ldk, h.dk, ones, dqt + q0 + b, ldqt);
    }
    transpose_out(dkt, kBlock, nk, h.dk, dk, k0, h.ldk);
    transpose_out(dvt, kBlock, nk, h.dv, dv, k0, h.ldv);
  }
  transpose_out(dqt, ldqt, n, h.dk, dq, 0, h.ldk);
}

void forward(const flash_band::HeadView& h, std::int64_t r0, std::int64_t rows, float scale, const float* q,
             const float* k, const float* v, float* out, float* lse, Scratch& w) {
  for (std::int64_t b0 = r0; b0 < r0 + rows; b0 += kBlock)
    forward_block(h, b0, std::min(kBlock, r0 + rows - b0), scale, q, k, v, out, lse, w);
}

}  // namespace topo::flash_lanes
#else
#include "kernels/error.hpp"

namespace topo::flash_lanes {
// Not built without AVX-512 (kAvailable is false, so flash_attention.cpp never calls these).
void forward(const flash_band::HeadView&, std::int64_t, std::int64_t, float, const float*, const float*, const float*,
             float*, float*, Scratch&) {
  TOPO_CHECK(false, "flash_lanes::forward: built without AVX-512");
}
void backward(const flash_band::HeadView&, float, const float*, const float*, const float*, const float*,
              const float*, const float*, float*, float*, float*, Scratch&) {
  TOPO_CHECK(false, "flash_lanes::backward: built without AVX-512");
}
}  // namespace topo::flash_lanes
#endif
