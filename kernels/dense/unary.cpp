// Unary ops. CPU strategy: one flat loop over elements, split in contiguous chunks across OpenMP threads
// (serial for small tensors); the per-element math is unary_math.hpp, shared with the CUDA kernels.
#include "kernels/dense/unary.hpp"

#include "kernels/profile.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/parallel.hpp"

namespace topo {
namespace {

// The op is a template parameter so each loop body is one constant case of unary_forward/backward: with the
// switch inside the loop gcc kept relu scalar (15% of triad); instantiated per op it vectorizes.
template <UnaryOp Op>
void forward_loop(const float* x, float* y, std::int64_t n, float alpha) {
  parallel_for(n, 4, [&](std::int64_t b, std::int64_t e) {
#pragma omp simd
    for (std::int64_t i = b; i < e; ++i) y[i] = unary_forward(Op, x[i], alpha);
  });
}

template <UnaryOp Op>
void backward_loop(const float* g, const float* x, const float* y, float* dx, std::int64_t n, float alpha) {
  parallel_for(n, 4, [&](std::int64_t b, std::int64_t e) {
#pragma omp simd
    for (std::int64_t i = b; i < e; ++i) dx[i] = unary_backward(Op, g[i], x[i], y[i], alpha);
  });
}

#define TOPO_UNARY_CASES(CALL)                       \
  switch (op) {                                      \
    case UnaryOp::Relu: CALL(UnaryOp::Relu); break;  \
    case UnaryOp::LeakyRelu: CALL(UnaryOp::LeakyRelu); break; \
    case UnaryOp::Gelu: CALL(UnaryOp::Gelu); break;  \
    case UnaryOp::Exp: CALL(UnaryOp::Exp); break;    \
    case UnaryOp::Log: CALL(UnaryOp::Log); break;    \
    case UnaryOp::Tanh: CALL(UnaryOp::Tanh); break;  \
    case UnaryOp::Sigmoid: CALL(UnaryOp::Sigmoid); break; \
    case UnaryOp::Neg: CALL(UnaryOp::Neg); break;    \
    case UnaryOp::Scale: CALL(UnaryOp::Scale); break; \
    case UnaryOp::Elu: CALL(UnaryOp::Elu); break;    \
  }

void forward_cpu(UnaryOp op, const float* x, float* y, std::int64_t n, float alpha) {
#define TOPO_CALL(OP) forward_loop<OP>(x, y, n, alpha)
  TOPO_UNARY_CASES(TOPO_CALL)
#undef TOPO_CALL
}

void backward_cpu(UnaryOp op, const float* g, const float* x, const float* y, float* dx, std::int64_t n, float alpha) {
#define TOPO_CALL(OP) backward_loop<OP>(g, x, y, dx, n, alpha)
  TOPO_UNARY_CASES(TOPO_CALL)
#undef TOPO_CALL
}
#undef TOPO_UNARY_CASES

}  // namespace

Tensor unary(UnaryOp op, const Tensor& x, float alpha) {
  TOPO_PROFILE(Elementwise);
  check_dtype(x, DType::F32, "unary", "x");
  // Elu's gradient is read from its output, which holds only when alpha > 0 (then y > 0 exactly where x was).
  TOPO_CHECK(op != UnaryOp::Elu || alpha > 0.f, "elu: alpha must be > 0, got {}", alpha);
  Tensor y = Tensor::empty(x.shape(), DType::F32, x.device());
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  const std::int64_t n = x.numel();
  TOPO_ON_DEVICE(x.device(), forward_cpu(op, xp, yp, n, alpha), cuda::unary_forward(op, xp, yp, n, alpha));
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
  TOPO_ON_DEVICE(x.device(), backward_cpu(op, gp, xp, yp, dp, n, alpha),
                 cuda::unary_backward(op, gp, xp, yp, dp, n, alpha));
  return dx;
}

}  // namespace topo
