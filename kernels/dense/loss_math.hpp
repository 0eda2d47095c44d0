#pragma once
// Loss math shared by the CPU and CUDA backends: row log-sum-exp for cross entropy, and the per-element
// terms and gradients. Reductions over rows/elements are owned by the backends (fixed order on both, so
// each backend is deterministic; they agree to rounding).
#include <cmath>
#include <cstdint>
#if !defined(__CUDA_ARCH__)
#endif

#include "kernels/dense/fast_exp.hpp"
#include "kernels/hd.hpp"

namespace topo {

// Host loops that reduce floats: `omp simd reduction` lets the compiler reorder the sum/max into vector
// lanes, which it may not do on its own without -ffast-math. Absent (plain loop) in CUDA translation units.
#if defined(_OPENMP) && !defined(__CUDACC__)
#define TOPO_LOSS_PRAGMA(x) _Pragma(#x)
#define TOPO_LOSS_SIMD_REDUCE(clause) TOPO_LOSS_PRAGMA(omp simd reduction(clause))
#else
#define TOPO_LOSS_SIMD_REDUCE(clause)
#endif

// MSE partial sums cover fixed chunks of this many elements, so the summation tree depends only on n.
inline constexpr std::int64_t kMseChunk = 4096;

TOPO_HD float row_max(const float* x, std::int64_t c) {
  float m = -INFINITY;
  TOPO_LOSS_SIMD_REDUCE(max : m)
  for (std::int64_t j = 0; j < c; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

// sum_j exp(x_j - m).
TOPO_HD float row_sum_exp(const float* x, std::int64_t c, float m) {
  float s = 0.f;
  TOPO_LOSS_SIMD_REDUCE(+ : s)
  for (std::int64_t j = 0; j < c; ++j) s += exp_approx(x[j] - m);
  return s;
}

// -log softmax(x)[target] = max + log(sum exp(x - max)) - x[target].
TOPO_HD float ce_row_loss(float m, float sum_exp, float x_target) { return m + logf(sum_exp) - x_target; }

// d loss / d x_j for one row: (softmax_j - [j == target]) * scale, scale = grad / count.
TOPO_HD float ce_grad(float x, float m, float inv_sum_exp, bool is_target, float scale) {
  return (exp_approx(x - m) * inv_sum_exp - (is_target ? 1.f : 0.f)) * scale;
}
TOPO_HD float ce_grad_scale(float grad, std::int64_t count) { return grad / static_cast<float>(count); }

TOPO_HD float mse_term(float p, float t) {
  const float d = p - t;
  return d * d;
}
// d/dp of mean((p - t)^2) times grad: (p - t) * (2 * grad / n).
TOPO_HD float mse_grad_scale(float grad, std::int64_t n) { return 2.f * grad / static_cast<float>(n); }
TOPO_HD float mse_grad(float p, float t, float scale) { return (p - t) * scale; }

namespace cuda {
// Device launchers (loss_cuda.cu); pointers are device memory, `out` and `grad` hold one float.
// Targets were validated on the host side (scan_indices); `count` = rows whose target != ignore.
void cross_entropy(const float* logits, const std::int64_t* targets, std::int64_t n, std::int64_t c,
                   std::int64_t ignore, std::int64_t count, float* out);
void cross_entropy_backward(const float* grad, const float* logits, const std::int64_t* targets, float* dx,
                            std::int64_t n, std::int64_t c, std::int64_t ignore, std::int64_t count);
void mse(const float* pred, const float* target, std::int64_t n, float* out);
void mse_backward(const float* grad, const float* pred, const float* target, float* dx, std::int64_t n);
}  // namespace cuda

}  // namespace topo
