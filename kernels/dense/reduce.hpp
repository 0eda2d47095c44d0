#pragma once
// Reductions along one dimension. dim may be negative (counts from the end).
#include "kernels/dense/reduce_math.hpp"
#include "kernels/tensor.hpp"

namespace topo {

// ReduceOp lives in reduce_math.hpp (shared with the CUDA kernels).

// Reduces `dim`; keepdim keeps it as size 1. For Max, `argmax` (when non-null) receives int64 indices
// along `dim`, shaped like the result. Max over an empty dim is a topo::Error.
Tensor reduce(ReduceOp op, const Tensor& x, int dim, bool keepdim = false, Tensor* argmax = nullptr);
inline Tensor sum(const Tensor& x, int dim, bool keepdim = false) { return reduce(ReduceOp::Sum, x, dim, keepdim); }
inline Tensor mean(const Tensor& x, int dim, bool keepdim = false) { return reduce(ReduceOp::Mean, x, dim, keepdim); }
inline Tensor max(const Tensor& x, int dim, bool keepdim = false, Tensor* argmax = nullptr) {
  return reduce(ReduceOp::Max, x, dim, keepdim, argmax);
}
// Sum of every element as a 0-d tensor (shape {}).
Tensor sum_all(const Tensor& x);

// Gradient of reduce() w.r.t. x: `grad` is shaped like the result (keepdim or not), `argmax` is needed for Max.
Tensor reduce_backward(ReduceOp op, const Tensor& grad, const Shape& input_shape, int dim, bool keepdim,
                       const Tensor& argmax = Tensor());

}  // namespace topo
