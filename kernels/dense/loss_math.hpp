#pragma once
// Loss math shared by the CPU and CUDA backends: row log-sum-exp for cross entropy, and the per-element
// terms and gradients. Reductions over rows/elements are owned by the backends (fixed order on both, so
// each backend is deterministic; they agree to rounding).
#include <cmath>
#include <cstdint>

#include "kernels/hd.hpp"

namespace topo {

// Partial lanes: independent accumulators let the host compiler vectorize float reductions that it may
// not reorder on its own (no -ffast-math).
inline constexpr int kLossLanes = 16;
// MSE partial sums cover fixed chunks of this many elements, so the summation tree depends only on n.
inline constexpr std::int64_t kMseChunk = 4096;

TOPO_HD float row_max(const float* x, std::int64_t c) {
  float lanes[kLossLanes];
  for (int l = 0; l < kLossLanes; ++l) lanes[l] = -INFINITY;
  std::int64_t j = 0;
  for (; j + kLossLanes <= c; j += kLossLanes)
    for (int l = 0; l < kLossLanes; ++l) lanes[l] = x[j + l] > lanes[l] ? x[j + l] : lanes[l];
  float m = -INFINITY;
  for (; j < c; ++j) m = x[j] > m ? x[j] : m;
  for (int l = 0; l < kLossLanes; ++l) m = lanes[l] > m ? lanes[l] : m;
  return m;
}

// sum_j exp(x_j - m).
TOPO_HD float row_sum_exp(const float* x, std::int64_t c, float m) {
  float lanes[kLossLanes] = {};
  std::int64_t j = 0;
  for (; j + kLossLanes <= c; j += kLossLanes)
    for (int l = 0; l < kLossLanes; ++l) lanes[l] += expf(x[j + l] - m);
  float s = 0.f;
  for (; j < c; ++j) s += expf(x[j] - m);
  for (int l = 0; l < kLossLanes; ++l) s += lanes[l];
  return s;
}

// -log softmax(x)[target] = max + log(sum exp(x - max)) - x[target].
TOPO_HD float ce_row_loss(float m, float sum_exp, float x_target) { return m + logf(sum_exp) - x_target; }

// d loss / d x_j for one row: (softmax_j - [j == target]) * scale, scale = grad / count.
TOPO_HD float ce_grad(float x, float m, float inv_sum_exp, bool is_target, float scale) {
  return (expf(x - m) * inv_sum_exp - (is_target ? 1.f : 0.f)) * scale;
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
