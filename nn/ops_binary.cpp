// Broadcasting elementwise ops. Backward: each side's gradient is summed back to its own shape
// (sum_to_shape), so [N, D] + [D] gives the bias the column sums.
#include "kernels/dense/binary.hpp"
#include "kernels/dense/unary.hpp"
#include "nn/ops.hpp"

namespace topo::nn {

namespace {
Tensor to_shape(const Tensor& g, const Shape& shape) { return g.shape() == shape ? g : sum_to_shape(g, shape); }
}  // namespace

Var add(const Var& a, const Var& b) {
  return make_output(
      topo::add(a.data(), b.data()), {a, b},
      [sa = a.shape(), sb = b.shape()](const Tensor& g, const std::vector<bool>& needs) {
        return std::vector<Tensor>{needs[0] ? to_shape(g, sa) : Tensor(), needs[1] ? to_shape(g, sb) : Tensor()};
      },
      "add");
}

Var sub(const Var& a, const Var& b) {
  return make_output(
      topo::sub(a.data(), b.data()), {a, b},
      [sa = a.shape(), sb = b.shape()](const Tensor& g, const std::vector<bool>& needs) {
        return std::vector<Tensor>{needs[0] ? to_shape(g, sa) : Tensor(),
                                   needs[1] ? to_shape(topo::unary(UnaryOp::Neg, g), sb) : Tensor()};
      },
      "sub");
}

Var mul(const Var& a, const Var& b) {
  // Each side's gradient reads the other side: keep a only when b will want a gradient, and b when a will (a
  // scale by a constant keeps the constant, not the scaled tensor).
  const bool keep_a = b.defined() && b.requires_grad(), keep_b = a.defined() && a.requires_grad();
  return make_output(
      topo::mul(a.data(), b.data()), {a, b},
      [ad = keep_a ? a.data() : Tensor(), bd = keep_b ? b.data() : Tensor(), sa = a.shape(), sb = b.shape()](
          const Tensor& g, const std::vector<bool>& needs) {
        return std::vector<Tensor>{needs[0] ? to_shape(topo::mul(g, bd), sa) : Tensor(),
                                   needs[1] ? to_shape(topo::mul(g, ad), sb) : Tensor()};
      },
      "mul");
}

Var div(const Var& a, const Var& b) {
  Tensor y = topo::div(a.data(), b.data());
  return make_output(
      y, {a, b},
      [sa = a.shape(), bd = b.data(), y](const Tensor& g, const std::vector<bool>& needs) {
        // d(a/b)/da = 1/b; d(a/b)/db = -a/b^2 = -y/b.
        Tensor ga = needs[0] ? to_shape(topo::div(g, bd), sa) : Tensor();
        Tensor gb;
        if (needs[1]) gb = to_shape(topo::unary(UnaryOp::Neg, topo::mul(g, topo::div(y, bd))), bd.shape());
        return std::vector<Tensor>{ga, gb};
      },
      "div");
}

Var add_scalar(const Var& x, float c) {
  return make_output(
      topo::add_scalar(x.data(), c), {x},
      [](const Tensor& g, const std::vector<bool>&) { return std::vector<Tensor>{g}; }, "add_scalar");
}

Var operator+(const Var& a, const Var& b) { return add(a, b); }
Var operator-(const Var& a, const Var& b) { return sub(a, b); }
Var operator*(const Var& a, const Var& b) { return mul(a, b); }
Var operator/(const Var& a, const Var& b) { return div(a, b); }
Var operator+(const Var& a, float c) { return add_scalar(a, c); }
Var operator+(float c, const Var& a) { return add_scalar(a, c); }
Var operator-(const Var& a, float c) { return add_scalar(a, -c); }
Var operator-(float c, const Var& a) { return add_scalar(neg(a), c); }
Var operator/(float c, const Var& a) { return div(Var(Tensor::full({}, c, a.device())), a); }

}  // namespace topo::nn
