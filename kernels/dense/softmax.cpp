// Softmax and log-softmax over the last dim D. CPU strategy: rows split in contiguous chunks across threads;
// each row is read from memory once (max pass), then revisited while it sits in L1 (exp + sum, then scale),
// every pass a simd loop. The per-element math (including a vectorizable exp) is softmax_math.hpp.
#include "kernels/profile.hpp"
#include "kernels/dense/softmax.hpp"

#include <cmath>

#include "kernels/dense/reduce_math.hpp"
#include "kernels/dense/softmax_math.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/parallel.hpp"

namespace topo {
namespace {

float row_max(const float* x, std::int64_t d) {
  return lane_max(d, [&](std::int64_t k) { return x[k]; });
}

void softmax_cpu(bool log, const float* x, float* y, std::int64_t rows, std::int64_t d) {
  parallel_for(rows, 8 * d, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const float* xr = x + r * d;
      float* yr = y + r * d;
      const float m = row_max(xr, d);
      // exp into y (log_softmax overwrites it below), then sum it while it is in L1: two simple loops
      // vectorize where one fused loop with a reduction did not.
#pragma omp simd
      for (std::int64_t k = 0; k < d; ++k) yr[k] = softmax_numerator(xr[k], m);
      const float s = lane_sum(d, [&](std::int64_t k) { return yr[k]; });
      if (log) {
        const float ls = std::log(s);
#pragma omp simd
        for (std::int64_t k = 0; k < d; ++k) yr[k] = log_softmax_value(xr[k], m, ls);
      } else {
        const float inv = 1.f / s;
#pragma omp simd
        for (std::int64_t k = 0; k < d; ++k) yr[k] *= inv;
      }
    }
  });
}

void softmax_backward_cpu(bool log, const float* g, const float* y, float* dx, std::int64_t rows, std::int64_t d) {
  parallel_for(rows, 6 * d, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const float* gr = g + r * d;
      const float* yr = y + r * d;
      float* dr = dx + r * d;
      if (log) {
        const float s = lane_sum(d, [&](std::int64_t k) { return gr[k]; });
#pragma omp simd
        for (std::int64_t k = 0; k < d; ++k) dr[k] = log_softmax_grad(gr[k], yr[k], s);
      } else {
        const float s = lane_sum(d, [&](std::int64_t k) { return gr[k] * yr[k]; });
#pragma omp simd
        for (std::int64_t k = 0; k < d; ++k) dr[k] = softmax_grad(gr[k], yr[k], s);
      }
    }
  });
}

Tensor forward(bool log, const Tensor& x, const char* name) {
  TOPO_PROFILE(Softmax);
  check_dtype(x, DType::F32, name, "x");
  TOPO_CHECK(x.ndim() >= 1, "{}: needs at least one dim, got {}", name, x.str());
  Tensor y = Tensor::empty(x.shape(), DType::F32, x.device());
  const std::int64_t d = x.size(-1);
  if (x.numel() == 0) return y;
  const std::int64_t rows = x.numel() / d;
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  TOPO_ON_DEVICE(x.device(), softmax_cpu(log, xp, yp, rows, d), cuda::softmax_forward(log, xp, yp, rows, d));
  return y;
}

Tensor backward(bool log, const Tensor& grad, const Tensor& y, const char* name) {
  TOPO_PROFILE(Softmax);
  check_dtype(grad, DType::F32, name, "grad");
  check_dtype(y, DType::F32, name, "y");
  check_same_shape(grad, y, name);
  check_same_device(grad, y, name);
  TOPO_CHECK(y.ndim() >= 1, "{}: needs at least one dim, got {}", name, y.str());
  Tensor dx = Tensor::empty(y.shape(), DType::F32, y.device());
  const std::int64_t d = y.size(-1);
  if (y.numel() == 0) return dx;
  const std::int64_t rows = y.numel() / d;
  const float *gp = grad.data<float>(), *yp = y.data<float>();
  float* dp = dx.data<float>();
  TOPO_ON_DEVICE(y.device(), softmax_backward_cpu(log, gp, yp, dp, rows, d),
                 cuda::softmax_backward(log, gp, yp, dp, rows, d));
  return dx;
}

}  // namespace

Tensor softmax(const Tensor& x) { return forward(false, x, "softmax"); }
Tensor log_softmax(const Tensor& x) { return forward(true, x, "log_softmax"); }
Tensor softmax_backward(const Tensor& grad, const Tensor& y) { return backward(false, grad, y, "softmax_backward"); }
Tensor log_softmax_backward(const Tensor& grad, const Tensor& y) {
  return backward(true, grad, y, "log_softmax_backward");
}

}  // namespace topo
