#pragma once
// Reduction math shared by the CPU and CUDA backends. A reduction views x as [outer, n, inner] and reduces n.
// Max ignores NaN (a NaN never compares greater) and keeps the first index of the maximum.
#include <cstdint>

#include "kernels/hd.hpp"

namespace topo {

enum class ReduceOp : std::uint8_t { Sum, Mean, Max };

// Sum and Mean accumulate from 0; Max starts from the first element (n >= 1 is checked at the API).
TOPO_HD float reduce_combine(ReduceOp op, float acc, float x) {
  return op == ReduceOp::Max ? (x > acc ? x : acc) : acc + x;
}
TOPO_HD float reduce_finish(ReduceOp op, float acc, std::int64_t n) {
  return op == ReduceOp::Mean ? (n > 0 ? acc / static_cast<float>(n) : 0.f) : acc;
}
// d(result)/d(x at position k along n) times g; `arg` is the argmax index (Max only).
TOPO_HD float reduce_grad(ReduceOp op, float g, std::int64_t n, std::int64_t k, std::int64_t arg) {
  switch (op) {
    case ReduceOp::Sum: return g;
    case ReduceOp::Mean: return g / static_cast<float>(n);
    case ReduceOp::Max: return k == arg ? g : 0.f;
  }
  return 0.f;
}

namespace cuda {
// Device launchers (reduce_cuda.cu); pointers are device memory. y, argmax: [outer, inner]; argmax may be null.
void reduce_dim(ReduceOp op, const float* x, float* y, std::int64_t* argmax, std::int64_t outer, std::int64_t n,
                std::int64_t inner);
// dx: [outer, n, inner] from grad [outer, inner] (argmax needed for Max).
void reduce_dim_backward(ReduceOp op, const float* grad, const std::int64_t* argmax, float* dx, std::int64_t outer,
                         std::int64_t n, std::int64_t inner);
// out[0] = sum of x[0..n); `partials` is device scratch of kSumAllPartials floats.
inline constexpr int kSumAllPartials = 512;
void sum_all(const float* x, std::int64_t n, float* partials, float* out);
}  // namespace cuda

}  // namespace topo
