#pragma once
// A layer's epilogue in one pass, y = act(s_r * x + b): a per-row scale s (a graph convolution's degree
// norm), a per-column bias b and a monotone activation, shared by the CPU and CUDA backends per element.
// The activations are those whose derivative follows from their output alone, so the backward keeps y (which
// the next layer keeps anyway) and nothing else.
#include <cstdint>

#include "kernels/dense/unary_math.hpp"
#include "kernels/hd.hpp"

namespace topo {

// LeakyRelu needs a positive slope (then y > 0 exactly where the input was); Elu saturates at -1 (alpha 1).
enum class EpilogueAct : std::uint8_t { Identity, Relu, LeakyRelu, Tanh, Sigmoid, Elu };

TOPO_HD float epilogue_act(EpilogueAct act, float z, float slope) {
  switch (act) {
    case EpilogueAct::Identity: return z;
    case EpilogueAct::Relu: return unary_forward(UnaryOp::Relu, z, 0.f);
    case EpilogueAct::LeakyRelu: return unary_forward(UnaryOp::LeakyRelu, z, slope);
    case EpilogueAct::Tanh: return unary_forward(UnaryOp::Tanh, z, 0.f);
    case EpilogueAct::Sigmoid: return unary_forward(UnaryOp::Sigmoid, z, 0.f);
    case EpilogueAct::Elu: return unary_forward(UnaryOp::Elu, z, 1.f);
  }
  return z;
}

// grad * act'(z) from the output y = act(z).
TOPO_HD float epilogue_act_grad(EpilogueAct act, float grad, float y, float slope) {
  switch (act) {
    case EpilogueAct::Identity: return grad;
    case EpilogueAct::Relu: return y > 0.f ? grad : 0.f;
    case EpilogueAct::LeakyRelu: return grad * (y > 0.f ? 1.f : slope);  // a product, not a branch (unary_math.hpp)
    case EpilogueAct::Tanh: return grad * (1.f - y * y);
    case EpilogueAct::Sigmoid: return grad * y * (1.f - y);
    case EpilogueAct::Elu: return unary_backward(UnaryOp::Elu, grad, 0.f, y, 1.f);
  }
  return grad;
}

namespace cuda {
// Device launchers (scale_bias_act_cuda.cu). x, y, grad, dz, dx: [rows, cols]; scale: [rows] or null (1);
// bias: [cols] or null (0). The backward writes dz = grad * act'(y) and dx = s * dz, each where non-null.
void scale_bias_act_forward(const float* x, const float* scale, const float* bias, float* y, std::int64_t rows,
                            std::int64_t cols, EpilogueAct act, float slope);
void scale_bias_act_backward(const float* grad, const float* y, const float* scale, float* dz, float* dx,
                             std::int64_t rows, std::int64_t cols, EpilogueAct act, float slope);
}  // namespace cuda

}  // namespace topo
