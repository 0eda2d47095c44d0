// Elementwise unary ops and reshape. Backward: unary_backward from the saved input and output.
#include "kernels/dense/unary.hpp"
#include "nn/ops.hpp"

namespace topo::nn {

namespace {
Var unary_op(UnaryOp op, const Var& x, float alpha, const char* name) {
  Tensor y = unary(op, x.data(), alpha);
  return make_output(
      y, {x},
      [op, alpha, xd = x.data(), y](const Tensor& g, const std::vector<bool>&) {
        return std::vector<Tensor>{unary_backward(op, g, xd, y, alpha)};
      },
      name);
}
}  // namespace

Var mul_scalar(const Var& x, float c) { return unary_op(UnaryOp::Scale, x, c, "mul_scalar"); }
Var neg(const Var& x) { return unary_op(UnaryOp::Neg, x, 0.f, "neg"); }
Var relu(const Var& x) { return unary_op(UnaryOp::Relu, x, 0.f, "relu"); }
Var leaky_relu(const Var& x, float slope) { return unary_op(UnaryOp::LeakyRelu, x, slope, "leaky_relu"); }
Var gelu(const Var& x) { return unary_op(UnaryOp::Gelu, x, 0.f, "gelu"); }
Var exp(const Var& x) { return unary_op(UnaryOp::Exp, x, 0.f, "exp"); }
Var log(const Var& x) { return unary_op(UnaryOp::Log, x, 0.f, "log"); }
Var tanh(const Var& x) { return unary_op(UnaryOp::Tanh, x, 0.f, "tanh"); }
Var sigmoid(const Var& x) { return unary_op(UnaryOp::Sigmoid, x, 0.f, "sigmoid"); }

Var operator*(const Var& a, float c) { return mul_scalar(a, c); }
Var operator*(float c, const Var& a) { return mul_scalar(a, c); }
// Division by c is multiplication by 1/c: one rounding more than a true division, kept for speed.
Var operator/(const Var& a, float c) { return mul_scalar(a, 1.f / c); }
Var operator-(const Var& a) { return neg(a); }

Var reshape(const Var& x, const Shape& shape) {
  return make_output(
      x.data().reshape(shape), {x},
      [in_shape = x.shape()](const Tensor& g, const std::vector<bool>&) {
        return std::vector<Tensor>{g.reshape(in_shape)};
      },
      "reshape");
}

}  // namespace topo::nn
