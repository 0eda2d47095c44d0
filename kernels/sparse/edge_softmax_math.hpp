#pragma once
// Edge softmax over the entries of one CSR row (one destination's in-edges for norm_by = dst), one column
// (head) at a time: y[e, c] = exp(x[e, c] - max) / sum. Shared by the CPU and CUDA backends.
#include <cmath>
#include <cstdint>

#include "kernels/dense/fast_exp.hpp"
#include "kernels/hd.hpp"

namespace topo {

// x, y: [E, cols] by edge id; the row's entries are eids[begin, end).
template <class Id>
TOPO_HD void edge_softmax_group(const Id* eids, std::int64_t begin, std::int64_t end, const float* x, float* y,
                                std::int64_t cols, std::int64_t c) {
  float m = -INFINITY;
  for (std::int64_t k = begin; k < end; ++k) m = fmaxf(m, x[eids[k] * cols + c]);
  float s = 0.f;
  for (std::int64_t k = begin; k < end; ++k) {
    const float p = exp_approx(x[eids[k] * cols + c] - m);  // vectorizable; glibc expf was 1% of triad
    y[eids[k] * cols + c] = p;
    s += p;
  }
  const float inv = 1.f / s;
  for (std::int64_t k = begin; k < end; ++k) y[eids[k] * cols + c] *= inv;
}

// Backward of one group and column: dx = y * (dy - sum_k dy_k y_k).
template <class Id>
TOPO_HD void edge_softmax_group_backward(const Id* eids, std::int64_t begin, std::int64_t end, const float* y,
                                         const float* dy, float* dx, std::int64_t cols, std::int64_t c) {
  float dot = 0.f;
  for (std::int64_t k = begin; k < end; ++k) dot += dy[eids[k] * cols + c] * y[eids[k] * cols + c];
  for (std::int64_t k = begin; k < end; ++k) {
    const std::int64_t i = eids[k] * cols + c;
    dx[i] = y[i] * (dy[i] - dot);
  }
}

namespace cuda {
void edge_softmax(const std::int32_t* indptr, const std::int32_t* eids, std::int64_t rows, const float* x, float* y,
                  std::int64_t cols);
void edge_softmax(const std::int64_t* indptr, const std::int64_t* eids, std::int64_t rows, const float* x, float* y,
                  std::int64_t cols);
void edge_softmax_backward(const std::int32_t* indptr, const std::int32_t* eids, std::int64_t rows, const float* y,
                           const float* dy, float* dx, std::int64_t cols);
void edge_softmax_backward(const std::int64_t* indptr, const std::int64_t* eids, std::int64_t rows, const float* y,
                           const float* dy, float* dx, std::int64_t cols);
}  // namespace cuda

}  // namespace topo
