// Elementwise unary ops and reshape. Backward: unary_backward from the saved input and output.
#include <optional>

#include "kernels/dense/scale_bias_act.hpp"
#include "kernels/dense/unary.hpp"
#include "nn/ops.hpp"

namespace topo::nn {

namespace {
// The backward keeps the one of x and y its derivative reads (relu its input, exp its output, a scale
// neither), so a relu's output consumed by an op that keeps nothing of it goes with its last handle.
Var unary_op(UnaryOp op, const Var& x, float alpha, const char* name) {
  Tensor y = unary(op, x.data(), alpha);
  const UnaryReads reads = unary_backward_reads(op);
  return make_output(
      y, {x},
      [op, alpha, kept = reads == UnaryReads::Input ? x.data() : reads == UnaryReads::Output ? y : Tensor()](
          const Tensor& g, const std::vector<bool>&) {
        const Tensor& read = kept.defined() ? kept : g;  // the argument unary_backward does not read: any of g's shape
        return std::vector<Tensor>{unary_backward(op, g, read, read, alpha)};
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
Var elu(const Var& x, float alpha) { return unary_op(UnaryOp::Elu, x, alpha, "elu"); }

Var scale_bias_act(const Var& x, const Tensor& row_scale, const Var& bias, EpilogueAct act, float slope) {
  Tensor y = topo::scale_bias_act(x.data(), row_scale, bias.defined() ? bias.data() : Tensor(), act, slope);
  std::optional<Shape> bias_shape;
  if (bias.defined()) bias_shape = bias.shape();
  return make_output(
      y, {x, bias},
      // Identity's gradient does not read y: then nothing of the forward is kept but the scale.
      [row_scale, bias_shape, act, slope, y = act == EpilogueAct::Identity ? Tensor() : y](
          const Tensor& g, const std::vector<bool>& needs) {
        ScaleBiasActGrads grads = scale_bias_act_backward(g, y.defined() ? y : g, row_scale, needs[0],
                                                          needs[1] ? bias_shape : std::nullopt, act, slope);
        return std::vector<Tensor>{grads.dx, grads.dbias};
      },
      "scale_bias_act");
}

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
