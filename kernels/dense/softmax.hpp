#pragma once
// Softmax and log-softmax along the last dimension, numerically stable (max subtracted), with backward.
#include "kernels/tensor.hpp"

namespace topo {

Tensor softmax(const Tensor& x);
Tensor log_softmax(const Tensor& x);
// grad_x given grad_y and the forward output y = softmax(x).
Tensor softmax_backward(const Tensor& grad, const Tensor& y);
// grad_x given grad_y and the forward output y = log_softmax(x).
Tensor log_softmax_backward(const Tensor& grad, const Tensor& y);

}  // namespace topo
