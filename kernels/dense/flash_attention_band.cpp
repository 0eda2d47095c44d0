// Banded attention micro-kernels (AVX-512): see flash_attention_band.hpp.
//
// Strategy. Queries go in blocks of kRows = 8 rows; block [i0, i0 + 8) needs the keys [i0 - r, i0 + 7 + r], a
// span of 2r + 8 of which each row uses its 2r + 1 (useful share 1/8 at r = 0, 53% at r = 8, 90% at r = 64 —
// against tiles of >= 32 rows, 35% at r = 8). A task's strided head slices are read once, by packing loops that
// prefetch the rows ahead (packed rows padded to whole vectors, K also transposed by 16 x 16 in-register
// transposes); every product then runs in registers with fixed shapes:
//  - block_product: 8 block rows x 32 columns of accumulators fed per step by two loads and eight broadcasts —
//    the scores S = scale Q K^T (over K transposed, steps over dk) and the weighted rows O = P V / l, dQ = dS K
//    (over packed value or key rows, steps over the span's keys);
//  - rank updates dV += P^T dO, dK += dS^T Q (backward): the block's 8 rows of dout (or q) stay in registers,
//    each key's dv (dk) row is loaded once, updated by 8 FMAs per vector, stored once; two keys at a time so
//    that four FMA chains are in flight.
// The softmax runs in vectors over each row's band columns only (the whole band is in the block, so no online
// rescaling), phase by phase over the block's rows; the columns outside are 0, so the wasted work is the
// masked share above, not calls. Radius 0 is copies; radii 1 ... kNarrowRadius go to flash_attention_narrow.cpp
// (positions in lanes). Results are written back per block (forward) or per head
// (backward) with whole-vector and 8/4/2/1-float stores, never masked stores into the tensors.
// Tasks (flash_attention.cpp): the forward per (sequence, chunk of queries), the backward per sequence, each
// over all of the sequence's banded heads one after another — a task owns its rows of out (dq, dk, dv), so no
// atomics, and results do not depend on the thread count.
#include "kernels/dense/flash_attention_band.hpp"

#if defined(__AVX512F__)
#include <algorithm>
#include <cmath>

#include "kernels/dense/flash_attention_band_simd.hpp"
#include "kernels/dense/flash_attention_math.hpp"

namespace topo::flash_band {
namespace {

using namespace detail;
constexpr std::int64_t kRows = 8;

// c[r * ldc + w] = mult[r] * sum_i a[r * lda + i] b[i * ldb + w] for r < kRows, i < k, w < cols (a multiple of
// 16): every product of a block that has its 8 rows on the left — the scores S = scale Q K^T (a = the queries,
// b = K packed transposed, i over dk) and the weighted rows O = P V / l, dQ = dS K (a = the block's p or dS
// rows, b = packed value or key rows, i over the span's keys). A GEMM micro-kernel: 8 rows x 32 columns of
// accumulators fed per i by two loads of b and eight broadcasts of a, then one vector of columns if 16 are left.
void block_product(const float* a, std::int64_t lda, const float* b, std::int64_t ldb, std::int64_t k,
                   std::int64_t cols, const float* mult, float* c, std::int64_t ldc) {
  std::int64_t w = 0;
  for (; w + 2 * kL <= cols; w += 2 * kL) {
    __m512 acc[kRows][2];
#pragma GCC unroll 8
    for (std::int64_t r = 0; r < kRows; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    for (std::int64_t i = 0; i < k; ++i) {
      const __m512 b0 = _mm512_loadu_ps(b + i * ldb + w), b1 = _mm512_loadu_ps(b + i * ldb + w + kL);
#pragma GCC unroll 8
      for (std::int64_t r = 0; r < kRows; ++r) {
        const __m512 x = _mm512_set1_ps(a[r * lda + i]);
        acc[r][0] = _mm512_fmadd_ps(x, b0, acc[r][0]);
        acc[r][1] = _mm512_fmadd_ps(x, b1, acc[r][1]);
      }
    }
#pragma GCC unroll 8
    for (std::int64_t r = 0; r < kRows; ++r) {
      const __m512 f = _mm512_set1_ps(mult[r]);
      _mm512_storeu_ps(c + r * ldc + w, _mm512_mul_ps(acc[r][0], f));
      _mm512_storeu_ps(c + r * ldc + w + kL, _mm512_mul_ps(acc[r][1], f));
    }
  }
  if (w < cols) {
    __m512 acc[kRows];
#pragma GCC unroll 8
    for (std::int64_t r = 0; r < kRows; ++r) acc[r] = _mm512_setzero_ps();
    for (std::int64_t i = 0; i < k; ++i) {
      const __m512 b0 = _mm512_loadu_ps(b + i * ldb + w);
#pragma GCC unroll 8
      for (std::int64_t r = 0; r < kRows; ++r) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(a[r * lda + i]), b0, acc[r]);
    }
#pragma GCC unroll 8
    for (std::int64_t r = 0; r < kRows; ++r) _mm512_storeu_ps(c + r * ldc + w, _mm512_mul_ps(acc[r], _mm512_set1_ps(mult[r])));
  }
}

// The scores of a block: s[r * lds + j] = scale * q_r . k_j for the span's keys j < n (round_up(n, 16) columns
// written; kt holds the span's keys transposed, its padding columns zero).
void block_scores(const float* q, std::int64_t ldq, std::int64_t d, const float* kt, std::int64_t ldt, std::int64_t n,
                  float scale, float* s, std::int64_t lds) {
  float mult[kRows];
  std::fill_n(mult, kRows, scale);
  block_product(q, ldq, kt, ldt, d, round_up(n, kL), mult, s, lds);
}

// y[j * ldy + c] += sum_r p[r * ldp + j] g[r * ldg + c] for j < n, c < ldg (packed rows, ldy = ldg a multiple of
// 16): dV += P^T dO, dK += dS^T Q. The block's 8 rows of g stay in registers, 32 columns at a time; two keys
// per step, so that four independent chains of 8 FMAs are in flight.
void block_rank_update(const float* p, std::int64_t ldp, const float* g, std::int64_t ldg, std::int64_t n, float* y) {
  for (std::int64_t c0 = 0; c0 < ldg; c0 += 2 * kL) {
    const bool two = c0 + 2 * kL <= ldg;  // else one vector left (its second half is not touched)
    __m512 gr[kRows][2];
#pragma GCC unroll 8
    for (std::int64_t r = 0; r < kRows; ++r) {
      gr[r][0] = _mm512_loadu_ps(g + r * ldg + c0);
      gr[r][1] = two ? _mm512_loadu_ps(g + r * ldg + c0 + kL) : _mm512_setzero_ps();
    }
    const __mmask16 m1 = two ? 0xFFFF : 0;
    std::int64_t j = 0;
    for (; j + 2 <= n; j += 2) {
      float *y0 = y + j * ldg + c0, *y1 = y0 + ldg;
      __m512 a0 = _mm512_loadu_ps(y0), a1 = _mm512_maskz_loadu_ps(m1, y0 + kL);
      __m512 b0 = _mm512_loadu_ps(y1), b1 = _mm512_maskz_loadu_ps(m1, y1 + kL);
#pragma GCC unroll 8
      for (std::int64_t r = 0; r < kRows; ++r) {
        const __m512 w0 = _mm512_set1_ps(p[r * ldp + j]), w1 = _mm512_set1_ps(p[r * ldp + j + 1]);
        a0 = _mm512_fmadd_ps(w0, gr[r][0], a0);
        a1 = _mm512_fmadd_ps(w0, gr[r][1], a1);
        b0 = _mm512_fmadd_ps(w1, gr[r][0], b0);
        b1 = _mm512_fmadd_ps(w1, gr[r][1], b1);
      }
      _mm512_storeu_ps(y0, a0);
      _mm512_mask_storeu_ps(y0 + kL, m1, a1);
      _mm512_storeu_ps(y1, b0);
      _mm512_mask_storeu_ps(y1 + kL, m1, b1);
    }
    if (j < n) {
      float* y0 = y + j * ldg + c0;
      __m512 a0 = _mm512_loadu_ps(y0), a1 = _mm512_maskz_loadu_ps(m1, y0 + kL);
#pragma GCC unroll 8
      for (std::int64_t r = 0; r < kRows; ++r) {
        const __m512 w0 = _mm512_set1_ps(p[r * ldp + j]);
        a0 = _mm512_fmadd_ps(w0, gr[r][0], a0);
        a1 = _mm512_fmadd_ps(w0, gr[r][1], a1);
      }
      _mm512_storeu_ps(y0, a0);
      _mm512_mask_storeu_ps(y0 + kL, m1, a1);
    }
  }
}

// The lanes of the vector at columns [j, j + 16) that lie in [c.begin, c.end).
__mmask16 band_lanes(BandColumns c, std::int64_t j) {
  return static_cast<__mmask16>(simd::first_lanes(c.end - j) & ~simd::first_lanes(c.begin - j));
}
// The score rows of a block in place, over their vectors [0, round_up(n, 16)): row r < nr gets p = exp(s - m_r)
// on its band's columns c[r] and 0 on the others, m_r the band's max; m[r], l[r] = sum p returned. Rows nr ..
// kRows are zeroed (they add nothing to the weighted rows). Phase by phase over the rows, not row by row: each
// row is a chain of dependent reductions (max, exps, sum), and eight independent chains side by side keep the
// core busy where one row at a time waited on each (flash_band_row_softmax's per-row lane folds cost more than
// a narrow band's scores).
void block_softmax(float* s, std::int64_t lds, std::int64_t n, const BandColumns* c, std::int64_t nr, float* m,
                   float* l) {
  const std::int64_t cols = round_up(n, kL);
  for (std::int64_t r = nr; r < kRows; ++r) std::fill_n(s + r * lds, cols, 0.f);
  for (std::int64_t r = 0; r < nr; ++r) {
    __m512 top = _mm512_set1_ps(-INFINITY);
    for (std::int64_t j = 0; j < cols; j += kL)
      top = _mm512_mask_max_ps(top, band_lanes(c[r], j), top, _mm512_loadu_ps(s + r * lds + j));
    m[r] = _mm512_reduce_max_ps(top);
  }
  for (std::int64_t r = 0; r < nr; ++r) {
    const __m512 mv = _mm512_set1_ps(m[r]);
    __m512 sum = _mm512_setzero_ps();
    for (std::int64_t j = 0; j < cols; j += kL) {
      float* x = s + r * lds + j;
      const __m512 p = _mm512_maskz_mov_ps(band_lanes(c[r], j), exp16(_mm512_sub_ps(_mm512_loadu_ps(x), mv)));
      _mm512_storeu_ps(x, p);
      sum = _mm512_add_ps(sum, p);
    }
    l[r] = _mm512_reduce_add_ps(sum);
  }
}

// The backward's score rows of a block in place, over their vectors [0, round_up(n, 16)): with s the scaled
// scores and dp = dout . v, row r < nr gets p = exp(s - lse_r) and ds = scale p (dp - delta_r) on its band's
// columns, 0 on the others (flash_score_backward's math, dS scaled once for dq and dk); rows past nr are zero.
void block_softmax_backward(float* s, float* dp, std::int64_t lds, std::int64_t n, const BandColumns* c,
                            std::int64_t nr, const float* lse, const float* delta, float scale) {
  const std::int64_t cols = round_up(n, kL);
  for (std::int64_t r = nr; r < kRows; ++r) {
    std::fill_n(s + r * lds, cols, 0.f);
    std::fill_n(dp + r * lds, cols, 0.f);
  }
  const __m512 sc = _mm512_set1_ps(scale);
  for (std::int64_t r = 0; r < nr; ++r) {
    const __m512 lv = _mm512_set1_ps(lse[r]), dv = _mm512_set1_ps(delta[r]);
    for (std::int64_t j = 0; j < cols; j += kL) {
      float *x = s + r * lds + j, *g = dp + r * lds + j;
      const __mmask16 band = band_lanes(c[r], j);
      const __m512 p = _mm512_maskz_mov_ps(band, exp16(_mm512_sub_ps(_mm512_loadu_ps(x), lv)));
      _mm512_storeu_ps(x, p);
      _mm512_storeu_ps(g, _mm512_mul_ps(_mm512_mul_ps(p, sc), _mm512_sub_ps(_mm512_loadu_ps(g), dv)));
    }
  }
}

// The keys [lo, hi) that block [i0, i0 + nr) sees: its rows' bands, clipped to the sequence.
struct Span {
  std::int64_t lo, hi;
  std::int64_t size() const { return hi - lo; }
};
Span block_span(const HeadView& h, std::int64_t i0, std::int64_t nr) {
  return {std::max<std::int64_t>(0, i0 - h.radius), std::min(h.len, i0 + nr + h.radius)};
}
// Row i's band as columns of its block's span.
BandColumns row_columns(const HeadView& h, std::int64_t i, Span span) {
  return {std::max(span.lo, i - h.radius) - span.lo, std::min(span.hi, i + h.radius + 1) - span.lo};
}
// Score rows of a block: wide enough for the rounded-up vectors of the widest span.
std::int64_t score_stride(const HeadView& h) { return round_up(std::min(h.len, 2 * h.radius + kRows), kL); }

// Radius 0 (Multi-Scale's scale-1 heads): each row attends to itself alone, p = 1, so out_i = v_i and
// lse_i = scale q_i . k_i; in the backward ds = p (dp - delta) = 0 (delta = dout_i . out_i = dp), so dq = dk = 0
// and dv = dout. Copies, where the blocked products would do 8-16 keys of work per row for one.
void forward_self(const HeadView& h, std::int64_t r0, std::int64_t rows, float scale, const float* q, const float* k,
                  const float* v, float* out, float* lse) {
  for (std::int64_t i = r0; i < r0 + rows; ++i) {
    std::copy_n(v + i * h.ldv, h.dv, out + i * h.ld_out);
    lse[i * h.ld_lse] = scale * simd::dot(q + i * h.ldk, k + i * h.ldk, h.dk);
  }
}
void backward_self(const HeadView& h, std::int64_t r0, std::int64_t rows, const float* dout, float* dq, float* dk,
                   float* dv) {
  for (std::int64_t i = r0; i < r0 + rows; ++i) {
    std::fill_n(dq + i * h.ldk, h.dk, 0.f);
    std::fill_n(dk + i * h.ldk, h.dk, 0.f);
    std::copy_n(dout + i * h.ld_out, h.dv, dv + i * h.ldv);
  }
}

}  // namespace

void forward(const HeadView& h, std::int64_t r0, std::int64_t rows, float scale, const float* q, const float* k,
             const float* v, float* out, float* lse, Scratch& w) {
  if (h.radius == 0) return forward_self(h, r0, rows, scale, q, k, v, out, lse);
  if (h.radius <= kNarrowRadius) return forward_narrow(h, r0, rows, scale, q, k, v, out, lse, w);
  const Span task = block_span(h, r0, rows);
  const std::int64_t n = task.size(), ldk = round_up(h.dk, kL), ldv = round_up(h.dv, kL);
  const std::int64_t ldt = round_up(n, kL) + kL, lds = score_stride(h);
  // Packed: the task's keys transposed and its values; a block's outputs go to ob, then into `out`.
  float *qp = sized(w.qp, kRows * ldk), *kt = sized(w.kt, h.dk * ldt), *vp = sized(w.vp, n * ldv);
  float *ob = sized(w.ob, kRows * ldv), *s = sized(w.s, kRows * lds);
  transpose_rows(k, h.ldk, task.lo, n, h.dk, kt, ldt);
  pack_rows(v, h.ldv, task.lo, n, h.dv, vp, ldv);
  float inv[kRows];
  for (std::int64_t i0 = r0; i0 < r0 + rows; i0 += kRows) {
    const std::int64_t nr = std::min(kRows, r0 + rows - i0);
    const Span span = block_span(h, i0, nr);
    // The block's queries straight from q (broadcast operands: any stride), a zero-padded copy for a last
    // block of fewer than kRows rows; the next block's rows prefetched.
    const float* qb = q + i0 * h.ldk;
    std::int64_t ldq = h.ldk;
    if (nr < kRows) {
      pack_rows(q, h.ldk, i0, nr, h.dk, qp, ldk);
      std::fill(qp + nr * ldk, qp + kRows * ldk, 0.f);
      qb = qp, ldq = ldk;
    }
    for (std::int64_t r = 0; r < kRows && i0 + kRows + r < r0 + rows; ++r) simd::prefetch_row(q + (i0 + kRows + r) * h.ldk, h.dk);
    block_scores(qb, ldq, h.dk, kt + (span.lo - task.lo), ldt, span.size(), scale, s, lds);
    BandColumns band[kRows];
    for (std::int64_t r = 0; r < nr; ++r) band[r] = row_columns(h, i0 + r, span);
    float m[kRows], l[kRows];
    block_softmax(s, lds, span.size(), band, nr, m, l);
    for (std::int64_t r = 0; r < kRows; ++r) inv[r] = r < nr ? 1.f / l[r] : 0.f;
    for (std::int64_t r = 0; r < nr; ++r) lse[(i0 + r) * h.ld_lse] = flash_row_lse(m[r], l[r]);
    block_product(s, lds, vp + (span.lo - task.lo) * ldv, ldv, span.size(), ldv, inv, ob, ldv);
    unpack_rows(ob, ldv, nr, h.dv, out, i0, h.ld_out);
  }
}

void backward(const HeadView& h, std::int64_t r0, std::int64_t rows, float scale, const float* q, const float* k,
              const float* v, const float* out, const float* lse_rows, const float* dout, float* dq, float* dk, float* dv,
              Scratch& w) {
  if (h.radius == 0) return backward_self(h, r0, rows, dout, dq, dk, dv);
  if (h.radius <= kNarrowRadius) return backward_narrow(h, r0, rows, scale, q, k, v, out, lse_rows, dout, dq, dk, dv, w);
  // The chunk's keys [r0, r0 + rows) were seen by the queries [qlo, qhi), which see the keys [lo, hi): blocks of
  // 8 of those queries run as over the whole head, and the chunk keeps dq of its queries and dk, dv of its keys.
  // A key's dk and dv take their queries' terms in ascending order (a zero term outside the band leaves a sum
  // alone), a query's dq its keys', wherever the blocks start, so the chunks' rows are the whole head's bits.
  const Span queries = {std::max<std::int64_t>(0, r0 - h.radius), std::min(h.len, r0 + rows + h.radius)};
  const Span keys = {std::max<std::int64_t>(0, queries.lo - h.radius), std::min(h.len, queries.hi + h.radius)};
  const std::int64_t nq = queries.size(), n = keys.size(), ldk = round_up(h.dk, kL), ldv = round_up(h.dv, kL);
  const std::int64_t ldt = round_up(n, kL) + kL, lds = score_stride(h), qrows = round_up(nq, kRows);
  // Packed (queries by row from queries.lo, keys from keys.lo): q and dout (rows past nq zero), k (rows for dq,
  // and transposed), v (transposed straight from the tensor: only the scores dout . v read it), and the dq, dk,
  // dv accumulators, the chunk's rows of which are written back into the tensors at the end.
  float *qp = sized(w.qp, qrows * ldk), *gp = sized(w.gp, qrows * ldv), *kp = sized(w.kp, n * ldk);
  float *kt = sized(w.kt, h.dk * ldt), *vt = sized(w.vt, h.dv * ldt);
  float *dqp = sized(w.dqp, qrows * ldk), *dkp = sized(w.dkp, n * ldk), *dvp = sized(w.dvp, n * ldv);
  float *s = sized(w.s, kRows * lds), *dp = sized(w.dp, kRows * lds);
  pack_rows(q, h.ldk, queries.lo, nq, h.dk, qp, ldk);
  pack_rows(dout, h.ld_out, queries.lo, nq, h.dv, gp, ldv);
  // Per query: the forward's lse, and delta_i = dout_i . out_i (out is read here only).
  float *lse = sized(w.lse, nq), *delta = sized(w.delta, nq);
  for (std::int64_t t = 0; t < nq; ++t) {
    const float* o = out + (queries.lo + t) * h.ld_out;
    if (t + kAhead < nq) simd::prefetch_row(o + kAhead * h.ld_out, h.dv);
    __m512 acc = _mm512_setzero_ps();
    for (std::int64_t c = 0; c < h.dv; c += kL)
      acc = _mm512_fmadd_ps(_mm512_loadu_ps(gp + t * ldv + c), _mm512_maskz_loadu_ps(simd::first_lanes(h.dv - c), o + c), acc);
    delta[t] = _mm512_reduce_add_ps(acc);
    lse[t] = lse_rows[(queries.lo + t) * h.ld_lse];
  }
  std::fill(qp + nq * ldk, qp + qrows * ldk, 0.f);
  std::fill(gp + nq * ldv, gp + qrows * ldv, 0.f);
  pack_rows(k, h.ldk, keys.lo, n, h.dk, kp, ldk);
  transpose_rows(kp, ldk, 0, n, h.dk, kt, ldt);
  transpose_rows(v, h.ldv, keys.lo, n, h.dv, vt, ldt);
  std::fill_n(dkp, n * ldk, 0.f);
  std::fill_n(dvp, n * ldv, 0.f);
  const float ones[kRows] = {1.f, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f};
  for (std::int64_t i0 = queries.lo; i0 < queries.hi; i0 += kRows) {
    const std::int64_t nr = std::min(kRows, queries.hi - i0), t0 = i0 - queries.lo;
    const Span span = block_span(h, i0, nr);
    const std::int64_t j0 = span.lo - keys.lo;  // the span's first key, packed
    const float *qb = qp + t0 * ldk, *gb = gp + t0 * ldv;
    block_scores(qb, ldk, h.dk, kt + j0, ldt, span.size(), scale, s, lds);
    block_scores(gb, ldv, h.dv, vt + j0, ldt, span.size(), 1.f, dp, lds);
    BandColumns band[kRows];
    for (std::int64_t r = 0; r < nr; ++r) band[r] = row_columns(h, i0 + r, span);
    block_softmax_backward(s, dp, lds, span.size(), band, nr, lse + t0, delta + t0, scale);
    block_product(dp, lds, kp + j0 * ldk, ldk, span.size(), ldk, ones, dqp + t0 * ldk, ldk);
    block_rank_update(s, lds, gb, ldv, span.size(), dvp + j0 * ldv);
    block_rank_update(dp, lds, qb, ldk, span.size(), dkp + j0 * ldk);
  }
  unpack_rows(dqp + (r0 - queries.lo) * ldk, ldk, rows, h.dk, dq, r0, h.ldk);
  unpack_rows(dkp + (r0 - keys.lo) * ldk, ldk, rows, h.dk, dk, r0, h.ldk);
  unpack_rows(dvp + (r0 - keys.lo) * ldv, ldv, rows, h.dv, dv, r0, h.ldv);
}

}  // namespace topo::flash_band
#else
#include "kernels/error.hpp"

namespace topo::flash_band {
// Not built without AVX-512 (kAvailable is false, so flash_attention.cpp never calls these); defined so that
// unoptimised builds, which keep the guarded calls, link.
void forward(const HeadView&, std::int64_t, std::int64_t, float, const float*, const float*, const float*, float*,
             float*, Scratch&) {
  TOPO_CHECK(false, "flash_band::forward: built without AVX-512");
}
void backward(const HeadView&, std::int64_t, std::int64_t, float, const float*, const float*, const float*, const float*,
              const float*, const float*, float*, float*, float*, Scratch&) {
  TOPO_CHECK(false, "flash_band::backward: built without AVX-512");
}
}  // namespace topo::flash_band
#endif
