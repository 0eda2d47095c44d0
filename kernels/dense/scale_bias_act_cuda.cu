// The fused epilogue on CUDA: one thread per element, grid-stride; the row and column of element i are
// i / cols and i % cols. Math from scale_bias_act_math.hpp; the bias gradient's column sums are the reduce
// kernel's (scale_bias_act.cpp).
#include "kernels/cuda_utils.cuh"
#include "kernels/dense/scale_bias_act_math.hpp"

namespace topo::cuda {
namespace {

__global__ void forward_kernel(const float* x, const float* scale, const float* bias, float* y, std::int64_t n,
                               std::int64_t cols, EpilogueAct act, float slope) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const float s = scale ? scale[i / cols] : 1.f;
    const float b = bias ? bias[i % cols] : 0.f;
    y[i] = topo::epilogue_act(act, s * x[i] + b, slope);
  }
}

__global__ void backward_kernel(const float* g, const float* y, const float* scale, float* dz, float* dx,
                                std::int64_t n, std::int64_t cols, EpilogueAct act, float slope) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const float d = topo::epilogue_act_grad(act, g[i], y[i], slope);
    if (dz) dz[i] = d;
    if (dx) dx[i] = (scale ? scale[i / cols] : 1.f) * d;
  }
}

}  // namespace

void scale_bias_act_forward(const float* x, const float* scale, const float* bias, float* y, std::int64_t rows,
                            std::int64_t cols, EpilogueAct act, float slope) {
  const std::int64_t n = rows * cols;
  if (n == 0) return;
  forward_kernel<<<blocks_for(n, 256), 256>>>(x, scale, bias, y, n, cols, act, slope);
  check_launch("scale_bias_act_forward");
}

void scale_bias_act_backward(const float* grad, const float* y, const float* scale, float* dz, float* dx,
                             std::int64_t rows, std::int64_t cols, EpilogueAct act, float slope) {
  const std::int64_t n = rows * cols;
  if (n == 0) return;
  backward_kernel<<<blocks_for(n, 256), 256>>>(grad, y, scale, dz, dx, n, cols, act, slope);
  check_launch("scale_bias_act_backward");
}

}  // namespace topo::cuda
