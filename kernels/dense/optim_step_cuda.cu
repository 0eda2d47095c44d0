// Fused optimizer steps on CUDA: one thread per element, grid-stride loop; math from optim_step_math.hpp.
// The config travels by value as a kernel argument (a few floats).
#include "kernels/cuda_utils.cuh"
#include "kernels/dense/optim_step_math.hpp"

namespace topo::cuda {
namespace {

__global__ void adam_kernel(AdamStepConfig c, float* p, const float* g, float* m, float* v, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    topo::adam_update(c, p[i], g[i], m[i], v[i]);
}

__global__ void sgd_kernel(SgdStepConfig c, float* p, const float* g, float* buf, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    float unused = 0.f;
    topo::sgd_update(c, p[i], g[i], buf ? buf[i] : unused);
  }
}

__global__ void scale_kernel(float* x, float s, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    x[i] *= s;
}

__global__ void ema_kernel(float* avg, const float* p, float weight, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    topo::ema_update(avg[i], p[i], weight);
}

}  // namespace

void adam_step(const AdamStepConfig& c, float* p, const float* g, float* m, float* v, std::int64_t n) {
  if (n == 0) return;
  adam_kernel<<<blocks_for(n, 256), 256>>>(c, p, g, m, v, n);
  check_launch("adam_step");
}

void sgd_step(const SgdStepConfig& c, float* p, const float* g, float* buf, std::int64_t n) {
  if (n == 0) return;
  sgd_kernel<<<blocks_for(n, 256), 256>>>(c, p, g, buf, n);
  check_launch("sgd_step");
}

void scale_inplace(float* x, float s, std::int64_t n) {
  if (n == 0) return;
  scale_kernel<<<blocks_for(n, 256), 256>>>(x, s, n);
  check_launch("scale_inplace");
}

void ema_step(float* avg, const float* p, float weight, std::int64_t n) {
  if (n == 0) return;
  ema_kernel<<<blocks_for(n, 256), 256>>>(avg, p, weight, n);
  check_launch("ema_step");
}

}  // namespace topo::cuda
