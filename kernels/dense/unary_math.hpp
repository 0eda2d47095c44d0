#pragma once
// Elementwise unary functions and their derivatives: the math the CPU and CUDA backends share.
#include <cmath>
#include <cstdint>

#include "kernels/dense/fast_exp.hpp"
#include "kernels/hd.hpp"

namespace topo {

enum class UnaryOp : std::uint8_t { Relu, LeakyRelu, Gelu, Exp, Log, Tanh, Sigmoid, Neg, Scale, Elu };

// GELU's tanh approximation: 0.5 x (1 + tanh u) with u = sqrt(2/pi) (x + 0.044715 x^3).
inline constexpr float kGeluC = 0.7978845608f;  // sqrt(2/pi)
inline constexpr float kGeluA = 0.044715f;
TOPO_HD float gelu_inner(float x) { return kGeluC * (x + kGeluA * x * x * x); }

// `alpha`: negative slope for LeakyRelu, factor for Scale, the negative saturation for Elu (> 0; 1 in DGL's GAT
// and torch's default); ignored otherwise.
TOPO_HD float unary_forward(UnaryOp op, float x, float alpha) {
  switch (op) {
    case UnaryOp::Relu: return x > 0.f ? x : 0.f;
    // A product by the chosen slope, not a select of x or alpha * x: GCC (-ftrapping-math) keeps a product
    // inside a branch, and the branch kept the loop scalar. Bitwise the same (x * 1 is exact).
    case UnaryOp::LeakyRelu: return x * (x > 0.f ? 1.f : alpha);
    // The tanh approximation (GPT-2, llm.c, torch's approximate="tanh"), written as x sigmoid(2u) = 0.5 x (1 +
    // tanh u): the same function without 1 + tanh u's cancellation on the negative side, and vectorized.
    case UnaryOp::Gelu: return x * sigmoid_approx(2.f * gelu_inner(x));
    case UnaryOp::Exp: return expf(x);
    case UnaryOp::Log: return logf(x);
    case UnaryOp::Tanh: return tanh_approx(x);
    case UnaryOp::Sigmoid: return sigmoid_approx(x);
    case UnaryOp::Neg: return -x;
    case UnaryOp::Scale: return alpha * x;
    case UnaryOp::Elu: {  // x > 0 ? x : alpha (e^x - 1); the exp of min(x, 0) for every lane, then a select.
      // A compare, not fminf: GCC calls libm's fminf (its NaN rule), which kept the loop scalar. NaN stays NaN.
      const float negative = alpha * expm1_approx(x > 0.f ? 0.f : x);
      return x > 0.f ? x : negative;
    }
  }
  return 0.f;
}

// d(out)/d(x) times `grad`, given the input x and the forward output y (whichever is cheaper is used).
TOPO_HD float unary_backward(UnaryOp op, float grad, float x, float y, float alpha) {
  switch (op) {
    case UnaryOp::Relu: return x > 0.f ? grad : 0.f;
    case UnaryOp::LeakyRelu: return grad * (x > 0.f ? 1.f : alpha);
    case UnaryOp::Gelu: {  // with s = sigmoid(2u): d/dx [x s] = s + 2 x s (1 - s) du/dx
      const float s = sigmoid_approx(2.f * gelu_inner(x));
      return grad * (s + 2.f * x * s * (1.f - s) * kGeluC * (1.f + 3.f * kGeluA * x * x));
    }
    case UnaryOp::Exp: return grad * y;
    case UnaryOp::Log: return grad / x;
    case UnaryOp::Tanh: return grad * (1.f - y * y);
    case UnaryOp::Sigmoid: return grad * y * (1.f - y);
    case UnaryOp::Neg: return -grad;
    case UnaryOp::Scale: return alpha * grad;
    case UnaryOp::Elu: return grad * (y > 0.f ? 1.f : y + alpha);  // alpha e^x = y + alpha below 0
  }
  return 0.f;
}

namespace cuda {
// Device launchers (unary_cuda.cu); pointers are device memory, n elements.
void unary_forward(UnaryOp op, const float* x, float* y, std::int64_t n, float alpha);
void unary_backward(UnaryOp op, const float* grad, const float* x, const float* y, float* dx, std::int64_t n,
                    float alpha);
}  // namespace cuda

}  // namespace topo
