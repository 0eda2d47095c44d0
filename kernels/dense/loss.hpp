#pragma once
// Losses, each returning a 0-d tensor (shape {}), with backward.
#include "kernels/tensor.hpp"

namespace topo {

// logits [N, C], targets int64 [N]: mean over rows whose target != ignore_index of -log softmax(logits)[target].
// All rows ignored gives 0. A target outside [0, C) (and not ignore_index) is a topo::Error naming the row.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, std::int64_t ignore_index = -100);
// grad: 0-d. Returns grad_logits [N, C].
Tensor cross_entropy_backward(const Tensor& grad, const Tensor& logits, const Tensor& targets,
                              std::int64_t ignore_index = -100);

// Mean over all elements of (pred - target)^2.
Tensor mse(const Tensor& pred, const Tensor& target);
// grad: 0-d. Returns grad_pred.
Tensor mse_backward(const Tensor& grad, const Tensor& pred, const Tensor& target);

}  // namespace topo
