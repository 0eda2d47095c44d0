// Unary ops on CUDA: one thread per element, grid-stride loop; math from unary_math.hpp.
#include "kernels/cuda_utils.cuh"
#include "kernels/dense/unary_math.hpp"

namespace topo::cuda {
namespace {

__global__ void unary_forward_kernel(UnaryOp op, const float* x, float* y, std::int64_t n, float alpha) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    y[i] = topo::unary_forward(op, x[i], alpha);
}

__global__ void unary_backward_kernel(UnaryOp op, const float* g, const float* x, const float* y, float* dx,
                                      std::int64_t n, float alpha) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    dx[i] = topo::unary_backward(op, g[i], x[i], y[i], alpha);
}

}  // namespace

void unary_forward(UnaryOp op, const float* x, float* y, std::int64_t n, float alpha) {
  if (n == 0) return;
  unary_forward_kernel<<<blocks_for(n, 256), 256>>>(op, x, y, n, alpha);
  check_launch("unary_forward");
}

void unary_backward(UnaryOp op, const float* grad, const float* x, const float* y, float* dx, std::int64_t n,
                    float alpha) {
  if (n == 0) return;
  unary_backward_kernel<<<blocks_for(n, 256), 256>>>(op, grad, x, y, dx, n, alpha);
  check_launch("unary_backward");
}

}  // namespace topo::cuda
