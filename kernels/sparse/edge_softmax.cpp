#include "kernels/sparse/edge_softmax.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/profile.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/sparse/csr_checks.hpp"
#include "kernels/sparse/edge_softmax_math.hpp"
#include "kernels/sparse/index_dispatch.hpp"
#include "kernels/sparse/row_partition.hpp"

namespace topo {
namespace {

// CPU forward in three sweeps, so the exp (the expensive part) runs as one flat, contiguous, vectorized loop:
//   1. per row (a destination's in-edges), per column: y = x - max over the row's edges;
//   2. flat over all nnz * cols values: y = exp(y)  (every edge belongs to exactly one row);
//   3. per row, per column: y /= sum over the row's edges.
// Rows and columns are short (5 in-edges, 6 heads for Star satellites), too short to vectorize within a row;
// sweeps 1 and 3 are cheap scalar passes over data sweep 2 leaves in cache. Columns are taken in blocks of
// kBlock to bound the stack arrays (no heap allocation inside the parallel loop).
constexpr std::int64_t kBlock = 64;

template <class Id>
void subtract_row_max_cpu(const Id* indptr, const Id* eids, std::int64_t begin, std::int64_t end, const float* x,
                          float* y, std::int64_t cols) {
  float m[kBlock];
  for (std::int64_t r = begin; r < end; ++r)
    for (std::int64_t c0 = 0; c0 < cols; c0 += kBlock) {
      const std::int64_t w = std::min(kBlock, cols - c0);
      for (std::int64_t c = 0; c < w; ++c) m[c] = -INFINITY;
      for (std::int64_t k = indptr[r]; k < indptr[r + 1]; ++k)
        for (std::int64_t c = 0; c < w; ++c) m[c] = std::max(m[c], x[eids[k] * cols + c0 + c]);
      for (std::int64_t k = indptr[r]; k < indptr[r + 1]; ++k)
        for (std::int64_t c = 0; c < w; ++c) y[eids[k] * cols + c0 + c] = x[eids[k] * cols + c0 + c] - m[c];
    }
}

template <class Id>
void normalize_rows_cpu(const Id* indptr, const Id* eids, std::int64_t begin, std::int64_t end, float* y,
                        std::int64_t cols) {
  float sum[kBlock];
  for (std::int64_t r = begin; r < end; ++r)
    for (std::int64_t c0 = 0; c0 < cols; c0 += kBlock) {
      const std::int64_t w = std::min(kBlock, cols - c0);
      for (std::int64_t c = 0; c < w; ++c) sum[c] = 0.f;
      for (std::int64_t k = indptr[r]; k < indptr[r + 1]; ++k)
        for (std::int64_t c = 0; c < w; ++c) sum[c] += y[eids[k] * cols + c0 + c];
      for (std::int64_t c = 0; c < w; ++c) sum[c] = 1.f / sum[c];
      for (std::int64_t k = indptr[r]; k < indptr[r + 1]; ++k)
        for (std::int64_t c = 0; c < w; ++c) y[eids[k] * cols + c0 + c] *= sum[c];
    }
}

template <class Id>
void softmax_cpu(const Id* indptr, const Id* eids, std::int64_t rows, std::int64_t nnz, const float* x, float* y,
                 std::int64_t cols) {
  parallel_rows(indptr, rows, cols, [&](std::int64_t b, std::int64_t e) {
    subtract_row_max_cpu(indptr, eids, b, e, x, y, cols);
  });
  parallel_for(nnz * cols, 8, [&](std::int64_t b, std::int64_t e) {
#pragma omp simd
    for (std::int64_t i = b; i < e; ++i) y[i] = exp_approx(y[i]);
  });
  parallel_rows(indptr, rows, cols, [&](std::int64_t b, std::int64_t e) { normalize_rows_cpu(indptr, eids, b, e, y, cols); });
}

template <class Id>
void softmax_backward_rows_cpu(const Id* indptr, const Id* eids, std::int64_t begin, std::int64_t end, const float* y,
                               const float* dy, float* dx, std::int64_t cols) {
  float dot[kBlock];
  for (std::int64_t r = begin; r < end; ++r) {
    const std::int64_t kb = indptr[r], ke = indptr[r + 1];
    for (std::int64_t c0 = 0; c0 < cols; c0 += kBlock) {
      const std::int64_t w = std::min(kBlock, cols - c0);
      for (std::int64_t c = 0; c < w; ++c) dot[c] = 0.f;
      for (std::int64_t k = kb; k < ke; ++k) {
        const std::int64_t o = eids[k] * cols + c0;
#pragma omp simd
        for (std::int64_t c = 0; c < w; ++c) dot[c] += dy[o + c] * y[o + c];
      }
      for (std::int64_t k = kb; k < ke; ++k) {
        const std::int64_t o = eids[k] * cols + c0;
#pragma omp simd
        for (std::int64_t c = 0; c < w; ++c) dx[o + c] = y[o + c] * (dy[o + c] - dot[c]);
      }
    }
  }
}

}  // namespace

Tensor edge_softmax(const CsrView& csr, const Tensor& logits) {
  TOPO_PROFILE(Sparse);
  check_csr(csr, logits.device(), "edge_softmax");
  check_rows(logits, csr.nnz(), logits.device(), "edge_softmax", "logits");
  // Every entry is written: each edge belongs to exactly one row (nnz == number of logits rows).
  Tensor y = Tensor::empty(logits.shape(), DType::F32, logits.device());
  const std::int64_t cols = logits.row_numel();
  const float* x = logits.data<float>();
  float* yp = y.data<float>();
  TOPO_DISPATCH_INDEX(csr.dtype(), Id, {
    const Id* indptr = csr.indptr.data<Id>();
    const Id* eids = csr.eids.data<Id>();
    TOPO_ON_DEVICE(logits.device(),
                   softmax_cpu(indptr, eids, csr.num_rows, csr.nnz(), x, yp, cols),
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
  Tensor dx = Tensor::zeros(y.shape(), DType::F32, y.device());
  const std::int64_t cols = y.row_numel();
  const float *yp = y.data<float>(), *dyp = grad_y.data<float>();
  float* dxp = dx.data<float>();
  TOPO_DISPATCH_INDEX(csr.dtype(), Id, {
    const Id* indptr = csr.indptr.data<Id>();
    const Id* eids = csr.eids.data<Id>();
    TOPO_ON_DEVICE(y.device(),
                   parallel_rows(indptr, csr.num_rows, 2 * cols,
                                 [&](std::int64_t b, std::int64_t e) {
                                   softmax_backward_rows_cpu(indptr, eids, b, e, yp, dyp, dxp, cols);
                                 }),
                   cuda::edge_softmax_backward(indptr, eids, csr.num_rows, yp, dyp, dxp, cols));
  });
  return dx;
}

}  // namespace topo
