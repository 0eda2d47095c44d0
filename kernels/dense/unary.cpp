// Unary ops. CPU strategy: one flat loop over elements, split in contiguous chunks across OpenMP threads
// (serial for small tensors); the per-element math is unary_math.hpp, shared with the CUDA kernels.
#include "kernels/profile.hpp"
#include "kernels/dense/unary.hpp"

#include "kernels/dispatch.hpp"
#include "kernels/parallel.hpp"

namespace topo {

Tensor unary(UnaryOp op, const Tensor& x, float alpha) {
  TOPO_PROFILE(Elementwise);
  check_dtype(x, DType::F32, "unary", "x");
  Tensor y = Tensor::empty(x.shape(), DType::F32, x.device());
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  const std::int64_t n = x.numel();
  TOPO_ON_DEVICE(
      x.device(),
      parallel_for(n, 4,
                   [&](std::int64_t b, std::int64_t e) {
                     for (std::int64_t i = b; i < e; ++i) yp[i] = unary_forward(op, xp[i], alpha);
                   }),
      cuda::unary_forward(op, xp, yp, n, alpha));
  return y;
}

Tensor unary_backward(UnaryOp op, const Tensor& grad, const Tensor& x, const Tensor& y, float alpha) {
  TOPO_PROFILE(Elementwise);
  check_same_shape(grad, x, "unary_backward");
  check_same_shape(grad, y, "unary_backward");
  check_same_device(grad, x, "unary_backward");
  check_same_device(grad, y, "unary_backward");
  Tensor dx = Tensor::empty(x.shape(), DType::F32, x.device());
  const float *gp = grad.data<float>(), *xp = x.data<float>(), *yp = y.data<float>();
  float* dp = dx.data<float>();
  const std::int64_t n = x.numel();
  TOPO_ON_DEVICE(
      x.device(),
      parallel_for(n, 4,
                   [&](std::int64_t b, std::int64_t e) {
                     for (std::int64_t i = b; i < e; ++i) dp[i] = unary_backward(op, gp[i], xp[i], yp[i], alpha);
                   }),
      cuda::unary_backward(op, gp, xp, yp, dp, n, alpha));
  return dx;
}

}  // namespace topo
