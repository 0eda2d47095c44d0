// Losses on CUDA.
// - cross entropy: one warp per row (grid-stride over rows); lanes stride the row for the max and the sum of
//   exp, combined with shuffles; per-row losses go to scratch and one block sums them in double in a fixed
//   tree, so repeated runs give identical results.
// - mse: block b owns the fixed chunk [b * kMseChunk, (b + 1) * kMseChunk) and writes a double partial;
//   one block sums the partials. Backward passes are elementwise; grad is read on the device (no sync).
#include "kernels/cuda_utils.cuh"
#include "kernels/dense/loss_math.hpp"
#include "kernels/storage.hpp"

namespace topo::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / 32;

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// m and sum of exp(x - m) over one row, computed by a whole warp (every lane gets both).
__device__ __forceinline__ void warp_row_stats(const float* row, std::int64_t c, int lane, float& m, float& s) {
  m = -INFINITY;
  for (std::int64_t j = lane; j < c; j += 32) m = fmaxf(m, row[j]);
  m = warp_max(m);
  s = 0.f;
  for (std::int64_t j = lane; j < c; j += 32) s += topo::exp_approx(row[j] - m);
  s = warp_sum(s);
}

__global__ void ce_rows_kernel(const float* x, const std::int64_t* targets, std::int64_t n, std::int64_t c,
                               std::int64_t ignore, float* row_loss) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t{gridDim.x} * kWarpsPerBlock;
  for (std::int64_t r = blockIdx.x * std::int64_t{kWarpsPerBlock} + threadIdx.x / 32; r < n; r += warps) {
    const std::int64_t t = targets[r];  // same for the whole warp: the branch is uniform
    if (t == ignore) {
      if (lane == 0) row_loss[r] = 0.f;
      continue;
    }
    const float* row = x + r * c;
    float m, s;
    warp_row_stats(row, c, lane, m, s);
    if (lane == 0) row_loss[r] = topo::ce_row_loss(m, s, row[t]);
  }
}

__global__ void ce_backward_kernel(const float* grad, const float* x, const std::int64_t* targets, float* dx,
                                   std::int64_t n, std::int64_t c, std::int64_t ignore, std::int64_t count) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t{gridDim.x} * kWarpsPerBlock;
  const float scale = count > 0 ? topo::ce_grad_scale(grad[0], count) : 0.f;
  for (std::int64_t r = blockIdx.x * std::int64_t{kWarpsPerBlock} + threadIdx.x / 32; r < n; r += warps) {
    const std::int64_t t = targets[r];
    float* drow = dx + r * c;
    if (t == ignore) {
      for (std::int64_t j = lane; j < c; j += 32) drow[j] = 0.f;
      continue;
    }
    const float* row = x + r * c;
    float m, s;
    warp_row_stats(row, c, lane, m, s);
    const float inv = 1.f / s;
    for (std::int64_t j = lane; j < c; j += 32) drow[j] = topo::ce_grad(row[j], m, inv, j == t, scale);
  }
}

// Block-wide double sum in a fixed tree; result valid in thread 0.
__device__ double block_sum(double v) {
  __shared__ double shared[kThreads];
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
    __syncthreads();
  }
  return shared[0];
}

// One block: out[0] = sum(v) / divisor (0 when divisor is 0).
template <class T>
__global__ void final_mean_kernel(const T* v, std::int64_t n, std::int64_t divisor, float* out) {
  double s = 0;
  for (std::int64_t i = threadIdx.x; i < n; i += kThreads) s += static_cast<double>(v[i]);
  s = block_sum(s);
  if (threadIdx.x == 0) out[0] = divisor > 0 ? static_cast<float>(s / static_cast<double>(divisor)) : 0.f;
}

__global__ void mse_chunks_kernel(const float* p, const float* t, std::int64_t n, double* partial) {
  const std::int64_t begin = blockIdx.x * kMseChunk;
  const std::int64_t end = begin + kMseChunk < n ? begin + kMseChunk : n;
  double s = 0;
  for (std::int64_t i = begin + threadIdx.x; i < end; i += kThreads) s += topo::mse_term(p[i], t[i]);
  s = block_sum(s);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

__global__ void mse_backward_kernel(const float* grad, const float* p, const float* t, float* dx, std::int64_t n) {
  const float scale = topo::mse_grad_scale(grad[0], n);
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    dx[i] = topo::mse_grad(p[i], t[i], scale);
}

// Scratch from the caching allocator; released after the launches (stream order keeps reuse safe).
struct Scratch {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  int device = 0;
  explicit Scratch(std::size_t b) : bytes(b) {
    check(cudaGetDevice(&device), "cudaGetDevice");
    ptr = topo::cuda_memory::allocate(bytes, device);
  }
  ~Scratch() { topo::cuda_memory::release(ptr, bytes, device); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

unsigned row_blocks(std::int64_t n) { return blocks_for(n, kWarpsPerBlock); }

}  // namespace

void cross_entropy(const float* logits, const std::int64_t* targets, std::int64_t n, std::int64_t c,
                   std::int64_t ignore, std::int64_t count, float* out) {
  if (n == 0 || c == 0) {
    check(cudaMemset(out, 0, sizeof(float)), "cross_entropy");
    return;
  }
  Scratch row_loss(static_cast<std::size_t>(n) * sizeof(float));
  auto* rl = static_cast<float*>(row_loss.ptr);
  ce_rows_kernel<<<row_blocks(n), kThreads>>>(logits, targets, n, c, ignore, rl);
  check_launch("cross_entropy");
  final_mean_kernel<float><<<1, kThreads>>>(rl, n, count, out);
  check_launch("cross_entropy (mean)");
}

void cross_entropy_backward(const float* grad, const float* logits, const std::int64_t* targets, float* dx,
                            std::int64_t n, std::int64_t c, std::int64_t ignore, std::int64_t count) {
  if (n == 0 || c == 0) return;
  ce_backward_kernel<<<row_blocks(n), kThreads>>>(grad, logits, targets, dx, n, c, ignore, count);
  check_launch("cross_entropy_backward");
}

void mse(const float* pred, const float* target, std::int64_t n, float* out) {
  if (n == 0) {
    check(cudaMemset(out, 0, sizeof(float)), "mse");
    return;
  }
  const std::int64_t chunks = (n + kMseChunk - 1) / kMseChunk;
  Scratch partial(static_cast<std::size_t>(chunks) * sizeof(double));
  auto* pp = static_cast<double*>(partial.ptr);
  mse_chunks_kernel<<<static_cast<unsigned>(chunks), kThreads>>>(pred, target, n, pp);
  check_launch("mse");
  final_mean_kernel<double><<<1, kThreads>>>(pp, chunks, n, out);
  check_launch("mse (mean)");
}

void mse_backward(const float* grad, const float* pred, const float* target, float* dx, std::int64_t n) {
  if (n == 0) return;
  mse_backward_kernel<<<blocks_for(n, kThreads), kThreads>>>(grad, pred, target, dx, n);
  check_launch("mse_backward");
}

}  // namespace topo::cuda
