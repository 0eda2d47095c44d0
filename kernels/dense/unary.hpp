#pragma once
// Elementwise unary ops on float32 tensors of any shape, on the tensor's device.
#include "kernels/dense/unary_math.hpp"
#include "kernels/tensor.hpp"

namespace topo {

Tensor unary(UnaryOp op, const Tensor& x, float alpha = 0.f);
// grad_x = grad * f'(x); `y` is the forward output (needed by Exp, Tanh, Sigmoid, Elu).
Tensor unary_backward(UnaryOp op, const Tensor& grad, const Tensor& x, const Tensor& y, float alpha = 0.f);

// What unary_backward reads of op's forward: its input x, its output y, or neither (Neg, Scale). The other
// argument may be any tensor of the grad's shape, so a forward keeps only this one for backward.
enum class UnaryReads : std::uint8_t { Input, Output, Neither };
inline UnaryReads unary_backward_reads(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp:
    case UnaryOp::Tanh:
    case UnaryOp::Sigmoid:
    case UnaryOp::Elu: return UnaryReads::Output;
    case UnaryOp::Neg:
    case UnaryOp::Scale: return UnaryReads::Neither;
    default: return UnaryReads::Input;  // Relu, LeakyRelu, Gelu, Log
  }
}

inline Tensor relu(const Tensor& x) { return unary(UnaryOp::Relu, x); }
inline Tensor leaky_relu(const Tensor& x, float slope = 0.01f) { return unary(UnaryOp::LeakyRelu, x, slope); }
inline Tensor gelu(const Tensor& x) { return unary(UnaryOp::Gelu, x); }
inline Tensor exp(const Tensor& x) { return unary(UnaryOp::Exp, x); }
inline Tensor log(const Tensor& x) { return unary(UnaryOp::Log, x); }
inline Tensor tanh(const Tensor& x) { return unary(UnaryOp::Tanh, x); }
inline Tensor sigmoid(const Tensor& x) { return unary(UnaryOp::Sigmoid, x); }
inline Tensor elu(const Tensor& x, float alpha = 1.f) { return unary(UnaryOp::Elu, x, alpha); }

}  // namespace topo
