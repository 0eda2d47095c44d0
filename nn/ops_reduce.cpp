// Reductions, softmax and layer norm: thin wrappers over the kernels' own backward functions.
#include "kernels/dense/layer_norm.hpp"
#include "kernels/dense/reduce.hpp"
#include "kernels/dense/softmax.hpp"
#include "nn/ops.hpp"

namespace topo::nn {

namespace {
Var reduce_op(ReduceOp op, const Var& x, int dim, bool keepdim, const char* name) {
  Tensor argmax;
  Tensor y = reduce(op, x.data(), dim, keepdim, op == ReduceOp::Max ? &argmax : nullptr);
  return make_output(
      y, {x},
      [op, in_shape = x.shape(), dim, keepdim, argmax](const Tensor& g, const std::vector<bool>&) {
        return std::vector<Tensor>{reduce_backward(op, g, in_shape, dim, keepdim, argmax)};
      },
      name);
}

// Whole-tensor reductions run as a reduction of the flattened [numel] view along dim 0 (result shape {}).
Var reduce_all(ReduceOp op, const Var& x, const char* name) {
  const Shape flat{x.numel()};
  Tensor y = op == ReduceOp::Sum ? topo::sum_all(x.data()) : reduce(op, x.data().reshape(flat), 0, false);
  return make_output(
      y, {x},
      [op, flat, in_shape = x.shape()](const Tensor& g, const std::vector<bool>&) {
        return std::vector<Tensor>{reduce_backward(op, g, flat, 0, false).reshape(in_shape)};
      },
      name);
}
}  // namespace

Var sum(const Var& x, int dim, bool keepdim) { return reduce_op(ReduceOp::Sum, x, dim, keepdim, "sum"); }
Var mean(const Var& x, int dim, bool keepdim) { return reduce_op(ReduceOp::Mean, x, dim, keepdim, "mean"); }
Var max(const Var& x, int dim, bool keepdim) { return reduce_op(ReduceOp::Max, x, dim, keepdim, "max"); }
Var sum_all(const Var& x) { return reduce_all(ReduceOp::Sum, x, "sum_all"); }
Var mean_all(const Var& x) { return reduce_all(ReduceOp::Mean, x, "mean_all"); }

Var softmax(const Var& x) {
  Tensor y = topo::softmax(x.data());
  return make_output(
      y, {x},
      [y](const Tensor& g, const std::vector<bool>&) { return std::vector<Tensor>{softmax_backward(g, y)}; },
      "softmax");
}

Var log_softmax(const Var& x) {
  Tensor y = topo::log_softmax(x.data());
  return make_output(
      y, {x},
      [y](const Tensor& g, const std::vector<bool>&) { return std::vector<Tensor>{log_softmax_backward(g, y)}; },
      "log_softmax");
}

Var layer_norm(const Var& x, const Var& gamma, const Var& beta, float eps) {
  const Tensor gd = gamma.defined() ? gamma.data() : Tensor(), bd = beta.defined() ? beta.data() : Tensor();
  LayerNormOutput out = topo::layer_norm(x.data(), gd, bd, eps);
  return make_output(
      out.y, {x, gamma, beta},
      [xd = x.data(), gd, bd, mean = out.mean, rstd = out.rstd](const Tensor& g, const std::vector<bool>& needs) {
        LayerNormGrads grads = layer_norm_backward(g, xd, gd, bd, mean, rstd);
        return std::vector<Tensor>{needs[0] ? grads.dx : Tensor(), needs[1] ? grads.dgamma : Tensor(),
                                   needs[2] ? grads.dbeta : Tensor()};
      },
      "layer_norm");
}

Var residual_relu_layer_norm(const Var& h, const Var& x, const Var& gamma, const Var& beta, float eps) {
  const Tensor gd = gamma.defined() ? gamma.data() : Tensor(), bd = beta.defined() ? beta.data() : Tensor();
  LayerNormOutput out = topo::residual_relu_layer_norm(h.data(), x.data(), gd, bd, eps);
  return make_output(
      out.y, {h, x, gamma, beta},
      [hd = h.data(), xd = x.data(), gd, bd, mean = out.mean, rstd = out.rstd](const Tensor& g,
                                                                                const std::vector<bool>& needs) {
        ResidualLayerNormGrads grads = residual_relu_layer_norm_backward(g, hd, xd, gd, bd, mean, rstd);
        return std::vector<Tensor>{needs[0] ? grads.dh : Tensor(), needs[1] ? grads.dx : Tensor(),
                                   needs[2] ? grads.dgamma : Tensor(), needs[3] ? grads.dbeta : Tensor()};
      },
      "residual_relu_layer_norm");
}

}  // namespace topo::nn
