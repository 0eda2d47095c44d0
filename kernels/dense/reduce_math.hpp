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

#if !defined(__CUDACC__)
// CPU row helpers: sum / max of term(k) for k in [0, d) in 16 independent lanes, so the loop vectorizes
// without `omp simd reduction` (which gcc 12 lowers to gathers through a per-lane stack array when a loop
// has several reductions or inlined calls). Used by softmax and layer_norm rows.
template <class F>
inline float lane_sum(std::int64_t d, F term) {
  float lanes[16] = {};
  std::int64_t k = 0;
  for (; k + 16 <= d; k += 16) {
#pragma omp simd
    for (int l = 0; l < 16; ++l) lanes[l] += term(k + l);
  }
  float s = 0.f;
  for (; k < d; ++k) s += term(k);
  for (int l = 0; l < 16; ++l) s += lanes[l];
  return s;
}
template <class F>
inline float lane_max(std::int64_t d, F term) {
  float lanes[16];
  for (int l = 0; l < 16; ++l) lanes[l] = -__builtin_inff();
  std::int64_t k = 0;
  for (; k + 16 <= d; k += 16) {
#pragma omp simd
    for (int l = 0; l < 16; ++l) {
      const float v = term(k + l);
      lanes[l] = v > lanes[l] ? v : lanes[l];
    }
  }
  float m = -__builtin_inff();
  for (; k < d; ++k) m = term(k) > m ? term(k) : m;
  for (int l = 0; l < 16; ++l) m = lanes[l] > m ? lanes[l] : m;
  return m;
}
#endif

namespace cuda {
// How many parts of n the CUDA strided reduction (inner > 1) splits into: one thread per output is enough
// when there are many outputs, but a bias gradient [R, D] -> [D] has only D of them, so long reduced dims are
// cut into parts reduced in parallel and combined in order (deterministic). 1 = no split.
inline std::int64_t reduce_parts(std::int64_t outer, std::int64_t n, std::int64_t inner) {
  if (inner == 1 || outer * inner >= 32768 || n < 256) return 1;
  const std::int64_t parts = n / 64;
  return parts < 256 ? parts : 256;
}
// Device launchers (reduce_cuda.cu); pointers are device memory. y, argmax: [outer, inner]; argmax may be null.
// part_val / part_arg: scratch of reduce_parts(...) * outer * inner floats / int64s when that is > 1 (part_arg
// only with argmax), else null.
void reduce_dim(ReduceOp op, const float* x, float* y, std::int64_t* argmax, std::int64_t outer, std::int64_t n,
                std::int64_t inner, float* part_val, std::int64_t* part_arg);
// dx: [outer, n, inner] from grad [outer, inner] (argmax needed for Max).
void reduce_dim_backward(ReduceOp op, const float* grad, const std::int64_t* argmax, float* dx, std::int64_t outer,
                         std::int64_t n, std::int64_t inner);
// out[0] = sum of x[0..n); `partials` is device scratch of kSumAllPartials floats.
inline constexpr int kSumAllPartials = 512;
void sum_all(const float* x, std::int64_t n, float* partials, float* out);
}  // namespace cuda

}  // namespace topo
