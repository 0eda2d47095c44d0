// Softmax on CUDA: one warp per row (8 rows per 256-thread block), lanes stride over the row so loads are
// coalesced; max and sum are warp-shuffle reductions. Rows of a few hundred floats (the attention/feature
// widths here) give each lane ~10 elements. Math from softmax_math.hpp.
#include <cmath>

#include "kernels/cuda_utils.cuh"
#include "kernels/dense/softmax_math.hpp"

namespace topo::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kThreads = 256;

__device__ float warp_max(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}
__device__ float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__global__ void softmax_kernel(bool log, const float* x, float* y, std::int64_t rows, std::int64_t d) {
  const int lane = threadIdx.x % kWarp;
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / kWarp);
  for (std::int64_t r = blockIdx.x * std::int64_t{blockDim.x / kWarp} + threadIdx.x / kWarp; r < rows; r += warps) {
    const float* xr = x + r * d;
    float* yr = y + r * d;
    float m = -INFINITY;
    for (std::int64_t k = lane; k < d; k += kWarp) m = fmaxf(m, xr[k]);
    m = warp_max(m);
    float s = 0.f;
    for (std::int64_t k = lane; k < d; k += kWarp) s += topo::softmax_numerator(xr[k], m);
    s = warp_sum(s);
    if (log) {
      const float ls = logf(s);
      for (std::int64_t k = lane; k < d; k += kWarp) yr[k] = topo::log_softmax_value(xr[k], m, ls);
    } else {
      const float inv = 1.f / s;
      for (std::int64_t k = lane; k < d; k += kWarp) yr[k] = topo::softmax_numerator(xr[k], m) * inv;
    }
  }
}

__global__ void softmax_backward_kernel(bool log, const float* g, const float* y, float* dx, std::int64_t rows,
                                        std::int64_t d) {
  const int lane = threadIdx.x % kWarp;
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / kWarp);
  for (std::int64_t r = blockIdx.x * std::int64_t{blockDim.x / kWarp} + threadIdx.x / kWarp; r < rows; r += warps) {
    const float* gr = g + r * d;
    const float* yr = y + r * d;
    float* dr = dx + r * d;
    float s = 0.f;
    for (std::int64_t k = lane; k < d; k += kWarp) s += log ? gr[k] : gr[k] * yr[k];
    s = warp_sum(s);
    for (std::int64_t k = lane; k < d; k += kWarp)
      dr[k] = log ? topo::log_softmax_grad(gr[k], yr[k], s) : topo::softmax_grad(gr[k], yr[k], s);
  }
}

}  // namespace

void softmax_forward(bool log, const float* x, float* y, std::int64_t rows, std::int64_t d) {
  if (rows == 0 || d == 0) return;
  softmax_kernel<<<blocks_for(rows * kWarp, kThreads), kThreads>>>(log, x, y, rows, d);
  check_launch("softmax_forward");
}

void softmax_backward(bool log, const float* grad, const float* y, float* dx, std::int64_t rows, std::int64_t d) {
  if (rows == 0 || d == 0) return;
  softmax_backward_kernel<<<blocks_for(rows * kWarp, kThreads), kThreads>>>(log, grad, y, dx, rows, d);
  check_launch("softmax_backward");
}

}  // namespace topo::cuda
