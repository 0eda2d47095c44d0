// Losses: 0-d outputs; the kernels provide the backward given the 0-d output gradient.
#include "kernels/dense/loss.hpp"
#include "nn/ops.hpp"

namespace topo::nn {

Var cross_entropy(const Var& logits, const Tensor& targets, std::int64_t ignore_index) {
  return make_output(
      topo::cross_entropy(logits.data(), targets, ignore_index), {logits},
      [ld = logits.data(), targets, ignore_index](const Tensor& g, const std::vector<bool>&) {
        return std::vector<Tensor>{cross_entropy_backward(g, ld, targets, ignore_index)};
      },
      "cross_entropy");
}

Var mse(const Var& pred, const Var& target) {
  return make_output(
      topo::mse(pred.data(), target.data()), {pred, target},
      [pd = pred.data(), td = target.data()](const Tensor& g, const std::vector<bool>& needs) {
        // d/dtarget = -d/dpred: one kernel call serves both (swapping the arguments flips the sign).
        return std::vector<Tensor>{needs[0] ? mse_backward(g, pd, td) : Tensor(),
                                   needs[1] ? mse_backward(g, td, pd) : Tensor()};
      },
      "mse");
}

}  // namespace topo::nn
