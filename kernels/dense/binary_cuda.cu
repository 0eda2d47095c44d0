// Binary ops on CUDA: one thread per result element, grid-stride loops; math from binary_math.hpp.
// The broadcast plan travels by value (kernel parameter space); a one-dim plan (equal shapes, or a scalar
// operand) takes a kernel without index arithmetic.
#include "kernels/cuda_utils.cuh"
#include "kernels/dense/binary_math.hpp"

namespace topo::cuda {
namespace {

__global__ void binary_flat_kernel(BinaryOp op, const float* a, std::int64_t sa, const float* b, std::int64_t sb,
                                   float* c, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    c[i] = topo::binary_apply(op, a[i * sa], b[i * sb]);
}

__global__ void binary_plan_kernel(BinaryOp op, BroadcastPlan plan, const float* a, const float* b, float* c,
                                   std::int64_t n) {
  const int last = plan.ndim - 1;
  const std::int64_t inner = plan.shape[last];
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    std::int64_t oa, ob;
    const std::int64_t j = i % inner;
    topo::broadcast_row_offsets(plan, i / inner, oa, ob);
    c[i] = topo::binary_apply(op, a[oa + j * plan.stride_a[last]], b[ob + j * plan.stride_b[last]]);
  }
}

__global__ void binary_scalar_kernel(BinaryOp op, const float* x, float s, float* y, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    y[i] = topo::binary_apply(op, x[i], s);
}

__global__ void axpy_kernel(float* dst, float alpha, const float* src, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    dst[i] = topo::axpy_apply(dst[i], alpha, src[i]);
}

__global__ void fill_kernel(float* dst, float value, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    dst[i] = value;
}

}  // namespace

void binary(BinaryOp op, const BroadcastPlan& plan, const float* a, const float* b, float* c, std::int64_t n) {
  if (n == 0) return;
  if (plan.ndim == 1)
    binary_flat_kernel<<<blocks_for(n, 256), 256>>>(op, a, plan.stride_a[0], b, plan.stride_b[0], c, n);
  else
    binary_plan_kernel<<<blocks_for(n, 256), 256>>>(op, plan, a, b, c, n);
  check_launch("binary");
}

void binary_scalar(BinaryOp op, const float* x, float c, float* y, std::int64_t n) {
  if (n == 0) return;
  binary_scalar_kernel<<<blocks_for(n, 256), 256>>>(op, x, c, y, n);
  check_launch("binary_scalar");
}

void axpy(float* dst, float alpha, const float* src, std::int64_t n) {
  if (n == 0) return;
  axpy_kernel<<<blocks_for(n, 256), 256>>>(dst, alpha, src, n);
  check_launch("axpy");
}

void fill(float* dst, float value, std::int64_t n) {
  if (n == 0) return;
  fill_kernel<<<blocks_for(n, 256), 256>>>(dst, value, n);
  check_launch("fill");
}

}  // namespace topo::cuda
