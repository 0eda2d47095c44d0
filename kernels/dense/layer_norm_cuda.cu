// Layer norm on CUDA. Math from layer_norm_math.hpp.
//  - forward and dx: one warp per row (8 rows per 256-thread block), warp-shuffle sums for the row statistics;
//    the row is re-read from L1/L2 for the second and third passes.
//  - dgamma/dbeta: deterministic two-stage column sums, no atomics: block (column tile, row chunk) writes one
//    partial per column into partials [chunks, 2, d], then one thread per column adds the chunks in order.
#include "kernels/cuda_utils.cuh"
#include "kernels/dense/layer_norm_math.hpp"

namespace topo::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kThreads = 256;
constexpr int kColumnThreads = 128;

__device__ float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__global__ void forward_kernel(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                               float* rstd, std::int64_t rows, std::int64_t d, float eps) {
  const int lane = threadIdx.x % kWarp;
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / kWarp);
  for (std::int64_t r = blockIdx.x * std::int64_t{blockDim.x / kWarp} + threadIdx.x / kWarp; r < rows; r += warps) {
    const float* xr = x + r * d;
    float* yr = y + r * d;
    float s = 0.f;
    for (std::int64_t k = lane; k < d; k += kWarp) s += xr[k];
    const float m = warp_sum(s) / static_cast<float>(d);
    float v = 0.f;
    for (std::int64_t k = lane; k < d; k += kWarp) v += (xr[k] - m) * (xr[k] - m);
    const float rs = topo::layer_norm_rstd(warp_sum(v) / static_cast<float>(d), eps);
    for (std::int64_t k = lane; k < d; k += kWarp)
      yr[k] = topo::layer_norm_apply(xr[k], m, rs, gamma ? gamma[k] : 1.f, beta ? beta[k] : 0.f);
    if (lane == 0) {
      mean[r] = m;
      rstd[r] = rs;
    }
  }
}

__global__ void dx_kernel(const float* g, const float* x, const float* gamma, const float* mean, const float* rstd,
                          float* dx, std::int64_t rows, std::int64_t d) {
  const int lane = threadIdx.x % kWarp;
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / kWarp);
  for (std::int64_t r = blockIdx.x * std::int64_t{blockDim.x / kWarp} + threadIdx.x / kWarp; r < rows; r += warps) {
    const float* gr = g + r * d;
    const float* xr = x + r * d;
    const float m = mean[r], rs = rstd[r];
    float sd = 0.f, sdx = 0.f;
    for (std::int64_t k = lane; k < d; k += kWarp) {
      const float dxhat = gr[k] * (gamma ? gamma[k] : 1.f);
      sd += dxhat;
      sdx += dxhat * (xr[k] - m) * rs;
    }
    const float md = warp_sum(sd) / static_cast<float>(d), mdx = warp_sum(sdx) / static_cast<float>(d);
    for (std::int64_t k = lane; k < d; k += kWarp)
      dx[r * d + k] = topo::layer_norm_dx(gr[k] * (gamma ? gamma[k] : 1.f), (xr[k] - m) * rs, rs, md, mdx);
  }
}

// grid (column tiles, chunks); partials [chunks, 2, d].
__global__ void param_partials_kernel(const float* g, const float* x, const float* mean, const float* rstd,
                                      float* partials, std::int64_t rows, std::int64_t d, std::int64_t per_chunk) {
  const std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  const std::int64_t c = blockIdx.y;
  if (k >= d) return;
  const std::int64_t r_end = (c + 1) * per_chunk < rows ? (c + 1) * per_chunk : rows;
  float sg = 0.f, sb = 0.f;
  for (std::int64_t r = c * per_chunk; r < r_end; ++r) {
    const float gv = g[r * d + k];
    sg += gv * (x[r * d + k] - mean[r]) * rstd[r];
    sb += gv;
  }
  partials[c * 2 * d + k] = sg;
  partials[c * 2 * d + d + k] = sb;
}

__global__ void param_final_kernel(const float* partials, float* dgamma, float* dbeta, std::int64_t chunks,
                                   std::int64_t d) {
  const std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  if (k < d) layer_norm_param_combine(partials, dgamma, dbeta, chunks, d, k);
}

}  // namespace

void layer_norm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                        std::int64_t rows, std::int64_t d, float eps) {
  if (rows == 0 || d == 0) return;
  forward_kernel<<<blocks_for(rows * kWarp, kThreads), kThreads>>>(x, gamma, beta, y, mean, rstd, rows, d, eps);
  check_launch("layer_norm_forward");
}

void layer_norm_backward(const float* grad, const float* x, const float* gamma, const float* mean, const float* rstd,
                         float* dx, float* dgamma, float* dbeta, float* partials, std::int64_t rows, std::int64_t d) {
  if (rows == 0 || d == 0) return;
  dx_kernel<<<blocks_for(rows * kWarp, kThreads), kThreads>>>(grad, x, gamma, mean, rstd, dx, rows, d);
  check_launch("layer_norm_backward dx");
  if (!dgamma && !dbeta) return;
  const std::int64_t chunks = layer_norm_partial_count(rows);
  const std::int64_t per_chunk = (rows + chunks - 1) / chunks;
  const dim3 grid(blocks_for(d, kColumnThreads), static_cast<unsigned>(chunks));
  param_partials_kernel<<<grid, kColumnThreads>>>(grad, x, mean, rstd, partials, rows, d, per_chunk);
  check_launch("layer_norm_backward partials");
  param_final_kernel<<<blocks_for(d, kColumnThreads), kColumnThreads>>>(partials, dgamma, dbeta, chunks, d);
  check_launch("layer_norm_backward params");
}

}  // namespace topo::cuda
