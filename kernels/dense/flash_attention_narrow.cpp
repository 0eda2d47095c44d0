// Narrow bands (radius 1 ... kNarrowRadius: Multi-Scale's windows of 3 to 9 keys) with positions in lanes: see
// flash_attention_band.hpp.
//
// Strategy. A head's slices of q, k, v (and dout) are transposed once per task into feature-major rows — row c
// holds feature c of consecutive positions, with zero columns padding both ends — so a vector holds 16
// positions and every step is vertical: for a block of 16 queries t and each offset delta of the band, the
// score vector s_delta = sum_c q[c][t] k[c][t + delta] is dk FMAs over a load of q's row and an unaligned load
// of k's row shifted by delta; the softmax runs across the 2r + 1 score vectors (max, exps, sum: no horizontal
// reductions, no masked columns); o[c][t] = sum_delta p_delta v[c][t + delta]. Keys outside the sequence are
// masked per lane. The backward's dq comes the same way from the block's dS; dk and dv gather by key,
// dk[c][j] = sum_delta ds_delta[j - delta] q[c][j - delta], from dS and P kept per offset. Results go back to
// the tensors' head slices by 16 x 16 in-register transposes (stores that never touch a neighbouring head).
// Against the blocks of 8 queries (flash_attention_band.cpp), which at these widths padded a 3-9 key band to
// 16 columns and packed rows per block, this does only the band's arithmetic plus one transpose per operand.
#include "kernels/dense/flash_attention_band.hpp"

#if defined(__AVX512F__)
#include <algorithm>
#include <cmath>

#include "kernels/dense/flash_attention_band_simd.hpp"
#include "kernels/error.hpp"

namespace topo::flash_band {
namespace {

using namespace detail;

// Zero columns on each side of a transposed row: a whole vector (>= any narrow radius, keeps rows aligned).
constexpr std::int64_t kPad = kL;

// Feature-major rows of one head's positions: buf[c * ld + kPad + (p - p0)] = x[p * ldx + c] for positions p
// in [lo, hi) (p0 the buffer's first position), c < d; every other column of the d rows is zero. ld >= kPad +
// (hi - p0) rounded up to 16 + kPad; buf holds d * ld + ld floats (transpose_rows zero-fills past a row's end).
void transpose_in(const float* x, std::int64_t ldx, std::int64_t p0, std::int64_t lo, std::int64_t hi,
                  std::int64_t d, float* buf, std::int64_t ld) {
  const std::int64_t first = kPad + (lo - p0);
  transpose_rows(x, ldx, lo, hi - lo, d, buf + first, ld);  // also zeroes each next row's first `first` columns
  std::fill_n(buf, first, 0.f);
}

// Lanes whose query position (pos + lane) and key position (pos + lane + delta) both lie in [0, len).
template <int R>
void pair_masks(std::int64_t pos, std::int64_t len, __mmask16* valid) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i p = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(pos)), lane);
  const __m512i n = _mm512_set1_epi32(static_cast<int>(len));
  const __mmask16 query = _mm512_cmplt_epu32_mask(p, n);  // unsigned: also false below 0
  for (int d = 0; d < 2 * R + 1; ++d)
    valid[d] = query & _mm512_cmplt_epu32_mask(_mm512_add_epi32(p, _mm512_set1_epi32(d - R)), n);
}

// One query block's scores over the band: s[d] = sum_c a[c * ld + t] b[c * ld + t + d - R] for c < rows (a, b
// at the block's column t).
template <int R>
void band_dots(const float* a, const float* b, std::int64_t ld, std::int64_t rows, __m512* s) {
  for (int d = 0; d < 2 * R + 1; ++d) s[d] = _mm512_setzero_ps();
  for (std::int64_t c = 0; c < rows; ++c) {
    const __m512 x = _mm512_loadu_ps(a + c * ld);
#pragma GCC unroll 9
    for (int d = 0; d < 2 * R + 1; ++d) s[d] = _mm512_fmadd_ps(x, _mm512_loadu_ps(b + c * ld + d - R), s[d]);
  }
}

// y[c * ldy] = mult * sum_d w[d] b[c * ld + d - R] for c < rows: a block's weighted rows (o = P V / l, dq = dS K).
template <int R>
void band_combine(const __m512* w, const float* b, std::int64_t ld, std::int64_t rows, __m512 mult, float* y,
                  std::int64_t ldy) {
  for (std::int64_t c = 0; c < rows; ++c) {
    __m512 acc = _mm512_setzero_ps();
#pragma GCC unroll 9
    for (int d = 0; d < 2 * R + 1; ++d) acc = _mm512_fmadd_ps(w[d], _mm512_loadu_ps(b + c * ld + d - R), acc);
    _mm512_storeu_ps(y + c * ldy, _mm512_mul_ps(acc, mult));
  }
}

// y[c * ldy] = sum_d w[d * ldw - delta] a[c * ld - delta] (delta = d - R) for c < rows: gradients gathered by
// key j from the queries j - delta that saw it (dk from dS and q, dv from P and dout); w and a at the block's
// column.
template <int R>
void band_gather(const float* w, std::int64_t ldw, const float* a, std::int64_t ld, std::int64_t rows, float* y,
                 std::int64_t ldy) {
  __m512 ws[2 * R + 1];
  for (int d = 0; d < 2 * R + 1; ++d) ws[d] = _mm512_loadu_ps(w + d * ldw - (d - R));
  for (std::int64_t c = 0; c < rows; ++c) {
    __m512 acc = _mm512_setzero_ps();
#pragma GCC unroll 9
    for (int d = 0; d < 2 * R + 1; ++d) acc = _mm512_fmadd_ps(ws[d], _mm512_loadu_ps(a + c * ld - (d - R)), acc);
    _mm512_storeu_ps(y + c * ldy, acc);
  }
}

template <int R>
void forward_radius(const HeadView& h, std::int64_t r0, std::int64_t rows, float scale, const float* q,
                    const float* k, const float* v, float* out, float* lse, Scratch& w) {
  constexpr int T = 2 * R + 1;
  const std::int64_t cols = round_up(rows, kL), ld = cols + 2 * kPad;
  const std::int64_t lo = std::max<std::int64_t>(0, r0 - R), hi = std::min(h.len, r0 + rows + R);
  float *qt = sized(w.qp, h.dk * ld + ld), *kt = sized(w.kt, h.dk * ld + ld), *vt = sized(w.vt, h.dv * ld + ld);
  float *ot = sized(w.ob, h.dv * cols), *lse_lanes = sized(w.lse, cols);
  transpose_in(q, h.ldk, r0, r0, r0 + rows, h.dk, qt, ld);
  transpose_in(k, h.ldk, r0, lo, hi, h.dk, kt, ld);
  transpose_in(v, h.ldv, r0, lo, hi, h.dv, vt, ld);
  const __m512 neg_inf = _mm512_set1_ps(-INFINITY), sv = _mm512_set1_ps(scale);
  for (std::int64_t t0 = 0; t0 < rows; t0 += kL) {
    __mmask16 valid[T];
    pair_masks<R>(r0 + t0, h.len, valid);
    __m512 s[T];
    band_dots<R>(qt + kPad + t0, kt + kPad + t0, ld, h.dk, s);
    __m512 m = neg_inf;
    for (int d = 0; d < T; ++d) {
      s[d] = _mm512_mask_mul_ps(neg_inf, valid[d], s[d], sv);
      m = _mm512_max_ps(m, s[d]);
    }
    // Lanes past the sequence have no key (m = -inf): their columns are never written back.
    const __mmask16 outside = static_cast<__mmask16>(~valid[R]);
    m = _mm512_mask_mov_ps(m, outside, _mm512_setzero_ps());
    __m512 l = _mm512_setzero_ps();
    for (int d = 0; d < T; ++d) {
      s[d] = _mm512_maskz_mov_ps(valid[d], exp16(_mm512_sub_ps(s[d], m)));
      l = _mm512_add_ps(l, s[d]);
    }
    l = _mm512_mask_mov_ps(l, outside, _mm512_set1_ps(1.f));
    band_combine<R>(s, vt + kPad + t0, ld, h.dv, _mm512_div_ps(_mm512_set1_ps(1.f), l), ot + t0, cols);
    _mm512_storeu_ps(lse_lanes + t0, _mm512_add_ps(m, log16(l)));
  }
  transpose_out(ot, cols, rows, h.dv, out, r0, h.ld_out);
  for (std::int64_t t = 0; t < rows; ++t) lse[(r0 + t) * h.ld_lse] = lse_lanes[t];
}

// The chunk [r0, r0 + rows) of one head: dq of its queries, dk and dv of its keys. Those keys were seen by the
// queries [qlo, qhi) (r of them on either side), whose P and dS are made here too (4r rows of halo per chunk);
// every buffer's column kPad + (p - qlo) holds position p. Each lane's arithmetic depends on its position
// alone, not on where a chunk or a block of 16 starts, so the chunks' rows are bit for bit the whole head's.
template <int R>
void backward_radius(const HeadView& h, std::int64_t r0, std::int64_t rows, float scale, const float* q,
                     const float* k, const float* v, const float* out, const float* lse, const float* dout, float* dq,
                     float* dk, float* dv, Scratch& w) {
  constexpr int T = 2 * R + 1;
  const std::int64_t n = h.len, qlo = std::max<std::int64_t>(0, r0 - R), qhi = std::min(n, r0 + rows + R);
  const std::int64_t lo = std::max<std::int64_t>(0, qlo - R), hi = std::min(n, qhi + R);  // their keys
  const std::int64_t span = qhi - qlo, cols = round_up(span, kL), ld = cols + 2 * kPad, own = r0 - qlo;
  float *qt = sized(w.qp, h.dk * ld + ld), *kt = sized(w.kt, h.dk * ld + ld);
  float *vt = sized(w.vt, h.dv * ld + ld), *gt = sized(w.gp, h.dv * ld + ld);
  transpose_in(q, h.ldk, qlo, qlo, qhi, h.dk, qt, ld);
  transpose_in(k, h.ldk, qlo, lo, hi, h.dk, kt, ld);
  transpose_in(v, h.ldv, qlo, lo, hi, h.dv, vt, ld);
  transpose_in(dout, h.ld_out, qlo, qlo, qhi, h.dv, gt, ld);
  // Per query: the forward's lse, and delta = dout . out (out is read here only); lanes past qhi zero.
  float *lse_lanes = sized(w.lse, cols), *delta = sized(w.delta, cols);
  for (std::int64_t t = 0; t < cols; ++t) {
    const std::int64_t i = qlo + t;
    const bool row = i < qhi;
    lse_lanes[t] = row ? lse[i * h.ld_lse] : 0.f;
    delta[t] = row ? simd::dot(dout + i * h.ld_out, out + i * h.ld_out, h.dv) : 0.f;
  }
  // P and dS per offset d (row d), by query column; the padding columns zero, as are invalid pairs. dq by query
  // column (a vector of slack: the chunk's rows start `own` columns in); dk, dv by the chunk's key column.
  float *p = sized(w.s, T * ld), *ds = sized(w.dp, T * ld);
  float *dqt = sized(w.dqp, h.dk * cols + kL), *dkt = sized(w.dkp, h.dk * cols), *dvt = sized(w.dvp, h.dv * cols);
  for (float* x : {p, ds})
    for (int d = 0; d < T; ++d) {
      std::fill_n(x + d * ld, kPad, 0.f);
      std::fill(x + d * ld + kPad + cols, x + (d + 1) * ld, 0.f);
    }
  const __m512 sv = _mm512_set1_ps(scale), one = _mm512_set1_ps(1.f);
  for (std::int64_t t0 = 0; t0 < span; t0 += kL) {  // by query: P, dS, dq
    __mmask16 valid[T];
    pair_masks<R>(qlo + t0, n, valid);
    __m512 s[T], g[T];
    band_dots<R>(qt + kPad + t0, kt + kPad + t0, ld, h.dk, s);
    band_dots<R>(gt + kPad + t0, vt + kPad + t0, ld, h.dv, g);
    const __m512 l = _mm512_loadu_ps(lse_lanes + t0), dl = _mm512_loadu_ps(delta + t0);
    for (int d = 0; d < T; ++d) {
      s[d] = _mm512_maskz_mov_ps(valid[d], exp16(_mm512_fmsub_ps(s[d], sv, l)));
      g[d] = _mm512_mul_ps(_mm512_mul_ps(s[d], sv), _mm512_sub_ps(g[d], dl));
      _mm512_storeu_ps(p + d * ld + kPad + t0, s[d]);
      _mm512_storeu_ps(ds + d * ld + kPad + t0, g[d]);
    }
    band_combine<R>(g, kt + kPad + t0, ld, h.dk, one, dqt + t0, cols);
  }
  for (std::int64_t j0 = 0; j0 < rows; j0 += kL) {  // by key: dk, dv
    const std::int64_t c = kPad + own + j0;
    band_gather<R>(ds + c, ld, qt + c, ld, h.dk, dkt + j0, cols);
    band_gather<R>(p + c, ld, gt + c, ld, h.dv, dvt + j0, cols);
  }
  transpose_out(dqt + own, cols, rows, h.dk, dq, r0, h.ldk);
  transpose_out(dkt, cols, rows, h.dk, dk, r0, h.ldk);
  transpose_out(dvt, cols, rows, h.dv, dv, r0, h.ldv);
}

}  // namespace

void forward_narrow(const HeadView& h, std::int64_t r0, std::int64_t rows, float scale, const float* q,
                    const float* k, const float* v, float* out, float* lse, Scratch& w) {
  switch (h.radius) {
    case 1: return forward_radius<1>(h, r0, rows, scale, q, k, v, out, lse, w);
    case 2: return forward_radius<2>(h, r0, rows, scale, q, k, v, out, lse, w);
    case 3: return forward_radius<3>(h, r0, rows, scale, q, k, v, out, lse, w);
    case 4: return forward_radius<4>(h, r0, rows, scale, q, k, v, out, lse, w);
    default: TOPO_CHECK(false, "flash_band::forward_narrow: radius {} is not in 1 ... {}", h.radius, kNarrowRadius);
  }
}

void backward_narrow(const HeadView& h, std::int64_t r0, std::int64_t rows, float scale, const float* q,
                     const float* k, const float* v, const float* out, const float* lse, const float* dout, float* dq,
                     float* dk, float* dv, Scratch& w) {
  switch (h.radius) {
    case 1: return backward_radius<1>(h, r0, rows, scale, q, k, v, out, lse, dout, dq, dk, dv, w);
    case 2: return backward_radius<2>(h, r0, rows, scale, q, k, v, out, lse, dout, dq, dk, dv, w);
    case 3: return backward_radius<3>(h, r0, rows, scale, q, k, v, out, lse, dout, dq, dk, dv, w);
    case 4: return backward_radius<4>(h, r0, rows, scale, q, k, v, out, lse, dout, dq, dk, dv, w);
    default: TOPO_CHECK(false, "flash_band::backward_narrow: radius {} is not in 1 ... {}", h.radius, kNarrowRadius);
  }
}

}  // namespace topo::flash_band
#else
#include "kernels/error.hpp"

namespace topo::flash_band {
// Not built without AVX-512 (see flash_attention_band.cpp's stubs).
void forward_narrow(const HeadView&, std::int64_t, std::int64_t, float, const float*, const float*, const float*,
                    float*, float*, Scratch&) {
  TOPO_CHECK(false, "flash_band::forward_narrow: built without AVX-512");
}
void backward_narrow(const HeadView&, std::int64_t, std::int64_t, float, const float*, const float*, const float*,
                     const float*, const float*, const float*, float*, float*, float*, Scratch&) {
  TOPO_CHECK(false, "flash_band::backward_narrow: built without AVX-512");
}
}  // namespace topo::flash_band
#endif
