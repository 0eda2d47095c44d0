#include "kernels/sparse/edge_softmax.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "kernels/dispatch.hpp"
#include "kernels/profile.hpp"
#include "kernels/sparse/csr_checks.hpp"
#include "kernels/sparse/edge_softmax_math.hpp"
#include "kernels/sparse/index_dispatch.hpp"
#include "kernels/sparse/row_partition.hpp"
#include "kernels/sparse/simd_rows.hpp"

namespace topo {
namespace {

// CPU strategy. Rows are short (5 in-edges x 6 heads for Star satellites, 9 x 6 for a window), so any loop
// over one row's edges or one row's heads is too short to vectorize: per-row scalar sweeps (the earlier
// design) took 1.4-1.6 ms for the satellites' 491,520 values on 2 threads. Instead, consecutive rows of EQUAL degree d are taken together as a
// tile of R rows and gathered (through eids) into a stack buffer laid out [d][R][cols]: for a fixed edge
// slot k the R * cols values are contiguous, so the max, exp, sum and scale sweeps run over full-width
// contiguous vectors across rows and heads, and the tile (<= kTile floats) stays in L1 between sweeps.
// Per value, each row's reduction runs over k = 0..d-1 in order whatever the tiling; the forward's path for a
// row (row tile, column tile for heavy rows, direct sweep beyond a tile) depends only on its degree, and the
// backward's direct sweeps do the same k-ordered arithmetic as its tiles, so results do not depend on the
// partition or thread count. The forward needs no special case for consecutive
// edge ids: the gather then reads x rows in ascending order anyway. The backward (no exp to vectorize)
// sweeps rows in place when a range's ids are consecutive; see softmax_backward_rows_cpu.
constexpr std::int64_t kTile = 4096;  // floats per tile buffer (16 KiB)

// Copies of one edge's value row (cols floats). A loop over a runtime count of 6 becomes a memcpy call per
// edge (38% of the forward time), so small counts are dispatched to compile-time ones.
template <std::int64_t C>
void copy_cols(float* dst, const float* src, std::int64_t cols) {
  if constexpr (C == 0) {
    std::copy(src, src + cols, dst);
  } else {
    std::memcpy(dst, src, C * sizeof(float));  // a fixed size: inlined as one or two vector moves
  }
}

// Rows [r, r + R) all of degree d starting at CSR position p: value rows eid * cols.. are copied into the
// [d][R][cols] tile (gather) or out of it (scatter).
template <std::int64_t C, class Id>
void gather_tile_as(const Id* eids, std::int64_t p, std::int64_t R, std::int64_t d, std::int64_t cols,
                    const float* values, float* tile) {
  for (std::int64_t r = 0; r < R; ++r)
    for (std::int64_t k = 0; k < d; ++k)
      copy_cols<C>(tile + (k * R + r) * cols, values + static_cast<std::int64_t>(eids[p + r * d + k]) * cols, cols);
}
template <std::int64_t C, class Id>
void scatter_tile_as(const Id* eids, std::int64_t p, std::int64_t R, std::int64_t d, std::int64_t cols,
                     const float* tile, float* values) {
  for (std::int64_t r = 0; r < R; ++r)
    for (std::int64_t k = 0; k < d; ++k)
      copy_cols<C>(values + static_cast<std::int64_t>(eids[p + r * d + k]) * cols, tile + (k * R + r) * cols, cols);
}
// f.template operator()<C>() with C = cols for the common head counts, else C = 0 (runtime count).
template <class F>
void with_cols(std::int64_t cols, F&& f) {
  switch (cols) {
    case 1: return f.template operator()<1>();
    case 2: return f.template operator()<2>();
    case 4: return f.template operator()<4>();
    case 6: return f.template operator()<6>();
    case 8: return f.template operator()<8>();
    case 12: return f.template operator()<12>();
    case 16: return f.template operator()<16>();
    default: return f.template operator()<0>();
  }
}
template <class Id>
void gather_tile(const Id* eids, std::int64_t p, std::int64_t R, std::int64_t d, std::int64_t cols, const float* src,
                 float* tile) {
  with_cols(cols, [&]<std::int64_t C>() { gather_tile_as<C>(eids, p, R, d, cols, src, tile); });
}
template <class Id>
void scatter_tile(const Id* eids, std::int64_t p, std::int64_t R, std::int64_t d, std::int64_t cols, const float* tile,
                  float* dst) {
  with_cols(cols, [&]<std::int64_t C>() { scatter_tile_as<C>(eids, p, R, d, cols, tile, dst); });
}

// Softmax over k of a [d][n] tile, in place (n = R * cols independent columns).
void softmax_tile(float* t, std::int64_t d, std::int64_t n, float* m, float* s) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) m[i] = t[i], s[i] = 0.f;
  for (std::int64_t k = 1; k < d; ++k) {
    const float* tk = t + k * n;
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) m[i] = std::max(m[i], tk[i]);
  }
  for (std::int64_t k = 0; k < d; ++k) {
    float* tk = t + k * n;
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) {
      const float p = exp_approx(tk[i] - m[i]);
      tk[i] = p;
      s[i] += p;
    }
  }
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) s[i] = 1.f / s[i];
  for (std::int64_t k = 0; k < d; ++k) {
    float* tk = t + k * n;
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) tk[i] *= s[i];
  }
}

// dx = y * (dy - sum_k dy * y) over k of [d][n] tiles; dx may alias dy.
void softmax_backward_tile(const float* y, float* dy, std::int64_t d, std::int64_t n, float* dot) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) dot[i] = 0.f;
  for (std::int64_t k = 0; k < d; ++k) {
    const float *yk = y + k * n, *gk = dy + k * n;
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) dot[i] += gk[i] * yk[i];
  }
  for (std::int64_t k = 0; k < d; ++k) {
    const float* yk = y + k * n;
    float* gk = dy + k * n;
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) gk[i] = yk[i] * (gk[i] - dot[i]);
  }
}

// A heavy row (d >= kColumnDegree, e.g. a relay node's n + 1 in-edges) is too long for the [d][R][cols]
// tiles to gain from (R * cols would be 12 values per slot for one 6-head row): softmax_periodic takes it.
constexpr std::int64_t kColumnDegree = 32;

// A heavy row gathered as a [d][cols] tile (gather_tile with R = 1): a flat run of d * cols values in which
// column c recurs every cols floats. In blocks of P floats (lcm(cols, 16) up to 16 columns, else cols), lane j
// of every block holds column j % cols, so max, exp and sum run over whole vectors of the flat run with
// per-lane partial results, folded to columns once per row. (A transposed [cols][d] tile, the earlier design,
// spent its time in transposing copies and a max reduction GCC left scalar: 2.6x the exp bound on the relay
// block on Skylake-SP.) The sum's order depends only on d and cols, and a heavy row always takes this path,
// so results do not depend on the partition.
constexpr std::int64_t kMaxPeriod = 16 * simd::kLanes;  // lcm(cols, 16) <= 240; a heavy row has cols <= 128

template <std::int64_t C>
void softmax_periodic_as(float* t, std::int64_t d, std::int64_t runtime_cols) {
  const std::int64_t cols = C > 0 ? C : runtime_cols;  // compile-time for the common head counts
  const std::int64_t period = cols <= simd::kLanes ? std::lcm(cols, simd::kLanes) : cols;
  const std::int64_t n = d * cols, full = n - n % period;
  TOPO_CHECK(period <= kMaxPeriod, "edge_softmax: {} columns on a row of {} (for_each_tile keeps d * cols <= {})", cols,
             d, kTile);
  float lane[kMaxPeriod], column[kMaxPeriod], m[kMaxPeriod], sum[kMaxPeriod];
  for (std::int64_t j = 0; j < period; ++j) lane[j] = -INFINITY, sum[j] = 0.f;
  for (std::int64_t i = 0; i < full; i += period) {
#pragma omp simd
    for (std::int64_t j = 0; j < period; ++j) lane[j] = std::max(lane[j], t[i + j]);
  }
  for (std::int64_t i = full; i < n; ++i) lane[i - full] = std::max(lane[i - full], t[i]);
  // Lane j's partial max -> column j % cols -> back to every lane of that column (max is exact in any order).
  for (std::int64_t c = 0; c < cols; ++c) column[c] = -INFINITY;
  for (std::int64_t j = 0; j < period; ++j) column[j % cols] = std::max(column[j % cols], lane[j]);
  for (std::int64_t j = 0; j < period; ++j) m[j] = column[j % cols];
  for (std::int64_t i = 0; i < full; i += period) {
#pragma omp simd
    for (std::int64_t j = 0; j < period; ++j) {
      const float p = exp_approx(t[i + j] - m[j]);
      t[i + j] = p;
      sum[j] += p;
    }
  }
  for (std::int64_t i = full; i < n; ++i) {
    const float p = exp_approx(t[i] - m[i - full]);
    t[i] = p;
    sum[i - full] += p;
  }
  for (std::int64_t c = 0; c < cols; ++c) column[c] = 0.f;
  for (std::int64_t j = 0; j < period; ++j) column[j % cols] += sum[j];
  for (std::int64_t c = 0; c < cols; ++c) column[c] = 1.f / column[c];
  for (std::int64_t j = 0; j < period; ++j) m[j] = column[j % cols];
  for (std::int64_t i = 0; i < full; i += period) {
#pragma omp simd
    for (std::int64_t j = 0; j < period; ++j) t[i + j] *= m[j];
  }
  for (std::int64_t i = full; i < n; ++i) t[i] *= m[i - full];
}

void softmax_periodic(float* t, std::int64_t d, std::int64_t cols) {
  with_cols(cols, [&]<std::int64_t C>() { softmax_periodic_as<C>(t, d, cols); });
}

// One long row (d * cols > kTile) straight through eids, columns in blocks of kTile.
template <class Id>
void softmax_long_row(const Id* eids, std::int64_t kb, std::int64_t ke, const float* x, float* y, std::int64_t cols,
                      float* m, float* s) {
  for (std::int64_t c0 = 0; c0 < cols; c0 += kTile) {
    const std::int64_t w = std::min(kTile, cols - c0);
    for (std::int64_t c = 0; c < w; ++c) m[c] = -INFINITY, s[c] = 0.f;
    for (std::int64_t k = kb; k < ke; ++k) {
      const float* xr = x + static_cast<std::int64_t>(eids[k]) * cols + c0;
#pragma omp simd
      for (std::int64_t c = 0; c < w; ++c) m[c] = std::max(m[c], xr[c]);
    }
    for (std::int64_t k = kb; k < ke; ++k) {
      const std::int64_t o = static_cast<std::int64_t>(eids[k]) * cols + c0;
#pragma omp simd
      for (std::int64_t c = 0; c < w; ++c) {
        const float p = exp_approx(x[o + c] - m[c]);
        y[o + c] = p;
        s[c] += p;
      }
    }
    for (std::int64_t c = 0; c < w; ++c) s[c] = 1.f / s[c];
    for (std::int64_t k = kb; k < ke; ++k) {
      float* yr = y + static_cast<std::int64_t>(eids[k]) * cols + c0;
#pragma omp simd
      for (std::int64_t c = 0; c < w; ++c) yr[c] *= s[c];
    }
  }
}

// Backward of one row straight through eids (no exp to vectorize, so no tile): dot per column over the
// row's entries in order, then dx. C > 0 (without AVX-512, which takes softmax_row_backward's masked vectors):
// the column count at compile time (head counts), each entry's C FMAs kept in registers; C = 0: any count, in blocks of
// kColBlock. The C > 0 loops carry no `omp simd`: with it GCC 12 vectorized C = 6 as two vgatherqps per
// entry (Skylake-SP: 3.9 ns per value, 94% of the relay block's backward in perf). The dot lives in a
// local array so the compiler need not assume it aliases dx.
constexpr std::int64_t kColBlock = 64;

template <std::int64_t C, class Id>
void softmax_row_backward_as(const Id* eids, std::int64_t kb, std::int64_t ke, const float* y, const float* dy,
                             float* dx, std::int64_t cols) {
  if constexpr (C > 0) {
    float dot[C] = {};
    for (std::int64_t k = kb; k < ke; ++k) {
      const float *yk = y + static_cast<std::int64_t>(eids[k]) * C, *gk = dy + static_cast<std::int64_t>(eids[k]) * C;
      for (std::int64_t c = 0; c < C; ++c) dot[c] += gk[c] * yk[c];
    }
    for (std::int64_t k = kb; k < ke; ++k) {
      const std::int64_t o = static_cast<std::int64_t>(eids[k]) * C;
      for (std::int64_t c = 0; c < C; ++c) dx[o + c] = y[o + c] * (dy[o + c] - dot[c]);
    }
  } else {
    float dot[kColBlock];
    for (std::int64_t c0 = 0; c0 < cols; c0 += kColBlock) {
      const std::int64_t w = std::min(kColBlock, cols - c0);
      for (std::int64_t c = 0; c < w; ++c) dot[c] = 0.f;
      for (std::int64_t k = kb; k < ke; ++k) {
        const std::int64_t o = static_cast<std::int64_t>(eids[k]) * cols + c0;
#pragma omp simd
        for (std::int64_t c = 0; c < w; ++c) dot[c] += dy[o + c] * y[o + c];
      }
      for (std::int64_t k = kb; k < ke; ++k) {
        const std::int64_t o = static_cast<std::int64_t>(eids[k]) * cols + c0;
#pragma omp simd
        for (std::int64_t c = 0; c < w; ++c) dx[o + c] = y[o + c] * (dy[o + c] - dot[c]);
      }
    }
  }
}

template <class Id>
void softmax_row_backward(const Id* eids, std::int64_t kb, std::int64_t ke, const float* y, const float* dy, float* dx,
                          std::int64_t cols) {
#if defined(__AVX512F__)
  // Up to 16 columns (any head count a model uses): one masked vector per entry holds all its columns, so
  // each entry is two loads and an FMA, then two loads, a subtract, a multiply and a store. Per column the
  // same k-ordered FMAs from 0 as the tiles' `dot += g * y` (contracted), so the bits do not change.
  if (cols <= simd::kLanes) {
    const __mmask16 m = simd::first_lanes(cols);
    __m512 dot = _mm512_setzero_ps();
    for (std::int64_t k = kb; k < ke; ++k) {
      const std::int64_t o = static_cast<std::int64_t>(eids[k]) * cols;
      dot = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, dy + o), _mm512_maskz_loadu_ps(m, y + o), dot);
    }
    for (std::int64_t k = kb; k < ke; ++k) {
      const std::int64_t o = static_cast<std::int64_t>(eids[k]) * cols;
      const __m512 g = _mm512_maskz_loadu_ps(m, dy + o);
      _mm512_mask_storeu_ps(dx + o, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, y + o), _mm512_sub_ps(g, dot)));
    }
    return;
  }
#endif
  with_cols(cols, [&]<std::int64_t C>() { softmax_row_backward_as<C>(eids, kb, ke, y, dy, dx, cols); });
}

// Walks rows [begin, end): rows(p, R, d) for R consecutive rows of degree d from CSR position p (a
// [d][R][cols] tile), column(p, d) for one heavy row that fits a [d][cols] tile, long_row(kb, ke) for a
// row that fits no tile. Rows without entries are skipped.
template <class Id, class Rows, class Column, class LongRow>
void for_each_tile(const Id* indptr, std::int64_t begin, std::int64_t end, std::int64_t cols, Rows&& rows,
                   Column&& column, LongRow&& long_row) {
  std::int64_t r = begin;
  while (r < end) {
    const std::int64_t p = indptr[r], d = static_cast<std::int64_t>(indptr[r + 1]) - p;
    if (d == 0 || d * cols > kTile || d >= kColumnDegree) {
      if (d * cols > kTile) long_row(p, p + d); else if (d > 0) column(p, d);
      ++r;
      continue;
    }
    const std::int64_t max_rows = kTile / (d * cols);
    std::int64_t R = 1;
    while (R < max_rows && r + R < end && static_cast<std::int64_t>(indptr[r + R + 1]) - indptr[r + R] == d) ++R;
    // Whole vectors: R * cols a multiple of simd::kLanes where that leaves rows (the rest start the next tile).
    const std::int64_t step = simd::kLanes / std::gcd(simd::kLanes, cols);
    if (R > step) R -= R % step;
    rows(p, R, d);
    r += R;
  }
}

// Whether eids[kb, ke) are consecutive ids: one sequential read of the ids, cheap next to the values.
template <class Id>
bool contiguous_ids(const Id* eids, std::int64_t kb, std::int64_t ke) {
  bool ok = true;
  for (std::int64_t k = kb + 1; k < ke; ++k) ok &= eids[k] == eids[k - 1] + 1;
  return ok;
}

template <class Id>
void softmax_rows_cpu(const Id* indptr, const Id* eids, std::int64_t begin, std::int64_t end, const float* x, float* y,
                      std::int64_t cols) {
  float t[kTile], m[kTile], s[kTile];
  for_each_tile(
      indptr, begin, end, cols,
      [&](std::int64_t p, std::int64_t R, std::int64_t d) {
        gather_tile(eids, p, R, d, cols, x, t);
        softmax_tile(t, d, R * cols, m, s);
        scatter_tile(eids, p, R, d, cols, t, y);
      },
      [&](std::int64_t p, std::int64_t d) {
        gather_tile(eids, p, 1, d, cols, x, t);
        softmax_periodic(t, d, cols);
        scatter_tile(eids, p, 1, d, cols, t, y);
      },
      [&](std::int64_t kb, std::int64_t ke) { softmax_long_row(eids, kb, ke, x, y, cols, m, s); });
}

template <class Id>
void softmax_backward_rows_cpu(const Id* indptr, const Id* eids, std::int64_t begin, std::int64_t end, const float* y,
                               const float* dy, float* dx, std::int64_t cols) {
  float ty[kTile], tg[kTile], dot[kTile];
  auto row = [&](std::int64_t kb, std::int64_t ke) { softmax_row_backward(eids, kb, ke, y, dy, dx, cols); };
  if (contiguous_ids(eids, indptr[begin], indptr[end])) {
    // In-edges stored in edge-id order (e.g. the window block): every row is one contiguous run, and sweeping
    // it in place beat gathering it into tiles. Same k-ordered arithmetic per value as a [d][R][cols] tile,
    // so a row's result never depends on which range (thread count) it fell in.
    for (std::int64_t r = begin; r < end; ++r) row(indptr[r], indptr[r + 1]);
    return;
  }
  // Heavy rows (d >= kColumnDegree) are swept directly too: with no exp to vectorize, a tile's copies cost
  // more than they save.
  for_each_tile(
      indptr, begin, end, cols,
      [&](std::int64_t p, std::int64_t R, std::int64_t d) {
        gather_tile(eids, p, R, d, cols, y, ty);
        gather_tile(eids, p, R, d, cols, dy, tg);
        softmax_backward_tile(ty, tg, d, R * cols, dot);
        scatter_tile(eids, p, R, d, cols, tg, dx);
      },
      [&](std::int64_t p, std::int64_t d) { row(p, p + d); }, row);
}

}  // namespace

Tensor edge_softmax(const CsrView& csr, const Tensor& logits) {
  TOPO_PROFILE(Sparse);
  check_csr(csr, logits.device(), "edge_softmax");
  check_rows(logits, csr.nnz(), logits.device(), "edge_softmax", "logits");
  // Every entry is written: each edge belongs to exactly one row (nnz == number of logits rows).
  Tensor y = Tensor::empty(logits.shape(), DType::F32, logits.device());
  const std::int64_t cols = logits.row_numel();
  if (y.numel() == 0) return y;  // no edges or [E, 0] logits: nothing to do (the tiles divide by cols)
  const float* x = logits.data<float>();
  float* yp = y.data<float>();
  TOPO_DISPATCH_INDEX(csr.dtype(), Id, {
    const Id* indptr = csr.indptr.data<Id>();
    const Id* eids = csr.eids.data<Id>();
    TOPO_ON_DEVICE(logits.device(),
                   parallel_rows(indptr, csr.num_rows, 4 * cols,
                                 [&](std::int64_t b, std::int64_t e) {
                                   softmax_rows_cpu(indptr, eids, b, e, x, yp, cols);
                                 }),
                   cuda::edge_softmax(indptr, eids, csr.num_rows, x, yp, cols));
  });
  return y;
}

Tensor edge_softmax_backward(const CsrView& csr, const Tensor& y, const Tensor& grad_y) {
  TOPO_PROFILE(Sparse);
  check_csr(csr, y.device(), "edge_softmax_backward");
  check_rows(y, csr.nnz(), y.device(), "edge_softmax_backward", "y");
  check_same_shape(y, grad_y, "edge_softmax_backward");
  check_same_device(y, grad_y, "edge_softmax_backward");
  // Every entry is written (each edge lies in exactly one row), so no zero fill.
  Tensor dx = Tensor::empty(y.shape(), DType::F32, y.device());
  const std::int64_t cols = y.row_numel();
  if (dx.numel() == 0) return dx;
  const float *yp = y.data<float>(), *dyp = grad_y.data<float>();
  float* dxp = dx.data<float>();
  TOPO_DISPATCH_INDEX(csr.dtype(), Id, {
    const Id* indptr = csr.indptr.data<Id>();
    const Id* eids = csr.eids.data<Id>();
    // Work per entry as the forward's: at 2 per column the relay block's backward (128 rows, 16,512
    // entries x 6) fell below the parallel grain and ran on one thread, 67 us; on two, 36 us.
    TOPO_ON_DEVICE(y.device(),
                   parallel_rows(indptr, csr.num_rows, 4 * cols,
                                 [&](std::int64_t b, std::int64_t e) {
                                   softmax_backward_rows_cpu(indptr, eids, b, e, yp, dyp, dxp, cols);
                                 }),
                   cuda::edge_softmax_backward(indptr, eids, csr.num_rows, yp, dyp, dxp, cols));
  });
  return dx;
}

}  // namespace topo
