// Reductions on CUDA; math from reduce_math.hpp. x is viewed as [outer, n, inner].
//  - inner == 1: one warp per row of n contiguous floats (coalesced), warp-shuffle combine; Max carries the
//    (value, index) pair and prefers the lower index on ties so it matches the CPU's first-maximum rule.
//  - inner > 1: one thread per output (o, j), looping over n; neighbouring threads read neighbouring j.
//    With few outputs and a long n (bias gradients), n is cut into parts (reduce_parts) whose partials a
//    second kernel combines in order.
//  - sum_all: a fixed grid of kSumAllPartials blocks writes one partial each, then one block sums them in a
//    fixed order, in double: deterministic, no atomics.
#include <cmath>

#include "kernels/cuda_utils.cuh"
#include "kernels/dense/reduce_math.hpp"

namespace topo::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kRowThreads = 256;  // 8 rows (warps) per block

__global__ void reduce_rows_kernel(ReduceOp op, const float* x, float* y, std::int64_t* argmax, std::int64_t rows,
                                   std::int64_t n) {
  const int lane = threadIdx.x % kWarp;
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / kWarp);
  for (std::int64_t r = blockIdx.x * std::int64_t{blockDim.x / kWarp} + threadIdx.x / kWarp; r < rows; r += warps) {
    const float* row = x + r * n;
    float acc = op == ReduceOp::Max ? -INFINITY : 0.f;
    std::int64_t arg = n;  // "no index yet": loses every tie
    for (std::int64_t k = lane; k < n; k += kWarp) {
      if (op == ReduceOp::Max) {
        if (arg == n || row[k] > acc) {
          acc = row[k];
          arg = k;
        }
      } else {
        acc = topo::reduce_combine(op, acc, row[k]);
      }
    }
    for (int offset = kWarp / 2; offset > 0; offset /= 2) {
      const float other = __shfl_down_sync(0xffffffffu, acc, offset);
      const std::int64_t other_arg = __shfl_down_sync(0xffffffffu, arg, offset);
      if (op == ReduceOp::Max) {
        if (other_arg < n && (arg == n || other > acc || (other == acc && other_arg < arg))) {
          acc = other;
          arg = other_arg;
        }
      } else {
        acc = topo::reduce_combine(op, acc, other);
      }
    }
    if (lane == 0) {
      y[r] = topo::reduce_finish(op, acc, n);
      if (argmax) argmax[r] = arg < n ? arg : 0;
    }
  }
}

// One thread per (part, output): reduces k in [p * per_part, (p + 1) * per_part). With one part it writes
// the finished result; with several it writes raw partials [parts, outer * inner] for combine_parts_kernel.
__global__ void reduce_strided_kernel(ReduceOp op, const float* x, float* y, std::int64_t* argmax,
                                      std::int64_t outer, std::int64_t n, std::int64_t inner, std::int64_t parts,
                                      std::int64_t per_part) {
  const std::int64_t outputs = outer * inner, total = outputs * parts;
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; t < total;
       t += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t p = t / outputs, i = t % outputs;
    const std::int64_t o = i / inner, j = i % inner;
    const std::int64_t k0 = p * per_part < n ? p * per_part : n;
    const std::int64_t k1 = k0 + per_part < n ? k0 + per_part : n;
    const float* base = x + o * n * inner + j;
    float acc = op == ReduceOp::Max ? (k0 < k1 ? base[k0 * inner] : -INFINITY) : 0.f;
    std::int64_t arg = k0;
    for (std::int64_t k = op == ReduceOp::Max ? k0 + 1 : k0; k < k1; ++k) {
      const float v = base[k * inner];
      if (op == ReduceOp::Max && v > acc) arg = k;
      acc = topo::reduce_combine(op, acc, v);
    }
    y[t] = parts > 1 ? acc : topo::reduce_finish(op, acc, n);
    if (argmax) argmax[t] = arg;
  }
}

// Combines partials [parts, outputs] in part order (the earlier part wins ties, as on the CPU).
__global__ void combine_parts_kernel(ReduceOp op, const float* part_val, const std::int64_t* part_arg, float* y,
                                     std::int64_t* argmax, std::int64_t outputs, std::int64_t parts, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < outputs;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    float acc = part_val[i];
    std::int64_t arg = part_arg ? part_arg[i] : 0;
    for (std::int64_t p = 1; p < parts; ++p) {
      const float v = part_val[p * outputs + i];
      if (op == ReduceOp::Max && part_arg && v > acc) arg = part_arg[p * outputs + i];
      acc = topo::reduce_combine(op, acc, v);
    }
    y[i] = topo::reduce_finish(op, acc, n);
    if (argmax) argmax[i] = arg;
  }
}

__global__ void reduce_backward_kernel(ReduceOp op, const float* g, const std::int64_t* argmax, float* dx,
                                       std::int64_t outer, std::int64_t n, std::int64_t inner) {
  const std::int64_t total = outer * n * inner;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < total;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t j = i % inner, k = (i / inner) % n, o = i / (inner * n);
    const std::int64_t out = o * inner + j;
    dx[i] = topo::reduce_grad(op, g[out], n, k, argmax ? argmax[out] : 0);
  }
}

// Block-wide sum of one value per thread (blockDim.x a multiple of 32, at most 1024); result in thread 0.
template <class T>
__device__ T block_sum(T v) {
  __shared__ T warp_sums[32];
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<int>(blockDim.x / kWarp) ? warp_sums[lane] : T(0);
    for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  return v;
}

__global__ void sum_partials_kernel(const float* x, std::int64_t n, float* partials) {
  float acc = 0.f;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    acc += x[i];
  acc = block_sum(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

// In double: the partials of a million-term sum reach ~600 in magnitude, where a float tree sum loses a few ulps
// (6e-5 each; 1.8e-4 measured on an H200 against the CPU's double combine).
__global__ void sum_final_kernel(const float* partials, int count, float* out) {
  double acc = 0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) acc += partials[i];
  acc = block_sum(acc);
  if (threadIdx.x == 0) out[0] = static_cast<float>(acc);
}

}  // namespace

void reduce_dim(ReduceOp op, const float* x, float* y, std::int64_t* argmax, std::int64_t outer, std::int64_t n,
                std::int64_t inner, float* part_val, std::int64_t* part_arg) {
  const std::int64_t outputs = outer * inner;
  if (outputs == 0) return;
  if (inner == 1) {
    reduce_rows_kernel<<<blocks_for(outer * kWarp, kRowThreads), kRowThreads>>>(op, x, y, argmax, outer, n);
    check_launch("reduce_dim rows");
    return;
  }
  const std::int64_t parts = reduce_parts(outer, n, inner);
  if (parts == 1) {
    reduce_strided_kernel<<<blocks_for(outputs, 256), 256>>>(op, x, y, argmax, outer, n, inner, 1, n);
    check_launch("reduce_dim strided");
    return;
  }
  const std::int64_t per_part = (n + parts - 1) / parts;
  reduce_strided_kernel<<<blocks_for(outputs * parts, 256), 256>>>(op, x, part_val, argmax ? part_arg : nullptr,
                                                                   outer, n, inner, parts, per_part);
  check_launch("reduce_dim parts");
  combine_parts_kernel<<<blocks_for(outputs, 256), 256>>>(op, part_val, argmax ? part_arg : nullptr, y, argmax,
                                                          outputs, parts, n);
  check_launch("reduce_dim combine");
}

void reduce_dim_backward(ReduceOp op, const float* grad, const std::int64_t* argmax, float* dx, std::int64_t outer,
                         std::int64_t n, std::int64_t inner) {
  const std::int64_t total = outer * n * inner;
  if (total == 0) return;
  reduce_backward_kernel<<<blocks_for(total, 256), 256>>>(op, grad, argmax, dx, outer, n, inner);
  check_launch("reduce_dim_backward");
}

void sum_all(const float* x, std::int64_t n, float* partials, float* out) {
  sum_partials_kernel<<<kSumAllPartials, 256>>>(x, n, partials);
  check_launch("sum_all partials");
  sum_final_kernel<<<1, kSumAllPartials>>>(partials, kSumAllPartials, out);
  check_launch("sum_all final");
}

}  // namespace topo::cuda
