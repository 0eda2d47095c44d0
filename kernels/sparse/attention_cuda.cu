// Fused sparse attention on CUDA. Parallel strategy: one warp per (row, head). Lanes split the head
// dimension: dot products are lane-partial sums combined with warp shuffles, and each lane owns its slice of
// the output accumulators, so no shared memory or atomics are needed. Online-softmax math from
// attention_math.hpp. Backward: a destination pass (dq, per-edge p and ds) and a source pass over the
// reverse CSR (dk, dv): one writer per output row, as on the CPU.
#include "kernels/cuda_utils.cuh"
#include "kernels/sparse/attention_math.hpp"

namespace topo::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarp = 32;

__device__ float warp_dot(const float* a, const float* b, std::int64_t n, int lane) {
  float s = 0.f;
  for (std::int64_t i = lane; i < n; i += kWarp) s += a[i] * b[i];
  for (int offset = kWarp / 2; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
  return s;  // every lane holds the full sum
}

template <class Id>
__global__ void forward_kernel(const Id* indptr, const Id* indices, std::int64_t rows, std::int64_t heads,
                               std::int64_t dk, std::int64_t dv, float scale, const float* q, const float* k,
                               const float* v, float* out, float* lse) {
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / kWarp);
  const int lane = threadIdx.x % kWarp;
  for (std::int64_t w = blockIdx.x * std::int64_t{blockDim.x / kWarp} + threadIdx.x / kWarp; w < rows * heads;
       w += warps) {
    const std::int64_t r = w / heads, h = w % heads;
    const float* qr = q + w * dk;
    float* o = out + w * dv;
    for (std::int64_t i = lane; i < dv; i += kWarp) o[i] = 0.f;
    float m = -INFINITY, l = 0.f;
    for (std::int64_t j = indptr[r]; j < indptr[r + 1]; ++j) {
      const std::int64_t u = indices[j];
      float rescale;
      const float p = online_softmax_push(m, l, scale * warp_dot(qr, k + (u * heads + h) * dk, dk, lane), rescale);
      const float* vr = v + (u * heads + h) * dv;
      for (std::int64_t i = lane; i < dv; i += kWarp) o[i] = o[i] * rescale + p * vr[i];
    }
    const float inv = l > 0.f ? 1.f / l : 0.f;
    for (std::int64_t i = lane; i < dv; i += kWarp) o[i] *= inv;
    if (lane == 0) lse[w] = online_softmax_lse(m, l);
  }
}

template <class Id>
__global__ void backward_dst_kernel(const Id* indptr, const Id* indices, const Id* eids, std::int64_t rows,
                                    std::int64_t heads, std::int64_t dk, std::int64_t dv, float scale, const float* q,
                                    const float* k, const float* v, const float* out, const float* lse,
                                    const float* dout, float* dq, float* p, float* ds) {
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / kWarp);
  const int lane = threadIdx.x % kWarp;
  for (std::int64_t w = blockIdx.x * std::int64_t{blockDim.x / kWarp} + threadIdx.x / kWarp; w < rows * heads;
       w += warps) {
    const std::int64_t r = w / heads, h = w % heads;
    const float* qr = q + w * dk;
    const float* gr = dout + w * dv;
    float* dqr = dq + w * dk;
    for (std::int64_t i = lane; i < dk; i += kWarp) dqr[i] = 0.f;
    const float delta = warp_dot(gr, out + w * dv, dv, lane);
    for (std::int64_t j = indptr[r]; j < indptr[r + 1]; ++j) {
      const std::int64_t u = indices[j], e = eids[j];
      const float* kr = k + (u * heads + h) * dk;
      const float pe = exp_approx(scale * warp_dot(qr, kr, dk, lane) - lse[w]);
      const float dse = pe * (warp_dot(gr, v + (u * heads + h) * dv, dv, lane) - delta);
      if (lane == 0) {
        p[e * heads + h] = pe;
        ds[e * heads + h] = dse;
      }
      for (std::int64_t i = lane; i < dk; i += kWarp) dqr[i] += scale * dse * kr[i];
    }
  }
}

template <class Id>
__global__ void backward_src_kernel(const Id* indptr, const Id* indices, const Id* eids, std::int64_t rows,
                                    std::int64_t heads, std::int64_t dk, std::int64_t dv, float scale, const float* q,
                                    const float* dout, const float* p, const float* ds, float* dkey, float* dval) {
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / kWarp);
  const int lane = threadIdx.x % kWarp;
  for (std::int64_t w = blockIdx.x * std::int64_t{blockDim.x / kWarp} + threadIdx.x / kWarp; w < rows * heads;
       w += warps) {
    const std::int64_t u = w / heads, h = w % heads;
    float* dkr = dkey + w * dk;
    float* dvr = dval + w * dv;
    for (std::int64_t i = lane; i < dk; i += kWarp) dkr[i] = 0.f;
    for (std::int64_t i = lane; i < dv; i += kWarp) dvr[i] = 0.f;
    for (std::int64_t j = indptr[u]; j < indptr[u + 1]; ++j) {
      const std::int64_t t = indices[j], e = eids[j];
      const float pe = p[e * heads + h], dse = scale * ds[e * heads + h];
      const float* qr = q + (t * heads + h) * dk;
      const float* gr = dout + (t * heads + h) * dv;
      for (std::int64_t i = lane; i < dk; i += kWarp) dkr[i] += dse * qr[i];
      for (std::int64_t i = lane; i < dv; i += kWarp) dvr[i] += pe * gr[i];
    }
  }
}

unsigned warp_blocks(std::int64_t warps) { return blocks_for(warps * kWarp, kThreads); }

}  // namespace

#define TOPO_ATTENTION_LAUNCHERS(Id)                                                                                  \
  void sparse_attention(const Id* indptr, const Id* indices, std::int64_t rows, std::int64_t heads, std::int64_t dk,  \
                        std::int64_t dv, float scale, const float* q, const float* k, const float* v, float* out,     \
                        float* lse) {                                                                                 \
    if (rows * heads == 0) return;                                                                                    \
    forward_kernel<Id><<<warp_blocks(rows * heads), kThreads>>>(indptr, indices, rows, heads, dk, dv, scale, q, k, v, \
                                                                out, lse);                                            \
    check_launch("sparse_attention");                                                                                 \
  }                                                                                                                   \
  void sparse_attention_backward_dst(const Id* indptr, const Id* indices, const Id* eids, std::int64_t rows,          \
                                     std::int64_t heads, std::int64_t dk, std::int64_t dv, float scale, const float* q, \
                                     const float* k, const float* v, const float* out, const float* lse,              \
                                     const float* dout, float* dq, float* p, float* ds) {                             \
    if (rows * heads == 0) return;                                                                                    \
    backward_dst_kernel<Id><<<warp_blocks(rows * heads), kThreads>>>(indptr, indices, eids, rows, heads, dk, dv,      \
                                                                     scale, q, k, v, out, lse, dout, dq, p, ds);      \
    check_launch("sparse_attention_backward_dst");                                                                    \
  }                                                                                                                   \
  void sparse_attention_backward_src(const Id* indptr, const Id* indices, const Id* eids, std::int64_t rows,          \
                                     std::int64_t heads, std::int64_t dk, std::int64_t dv, float scale, const float* q, \
                                     const float* dout, const float* p, const float* ds, float* dkey, float* dval) {  \
    if (rows * heads == 0) return;                                                                                    \
    backward_src_kernel<Id><<<warp_blocks(rows * heads), kThreads>>>(indptr, indices, eids, rows, heads, dk, dv,      \
                                                                     scale, q, dout, p, ds, dkey, dval);              \
    check_launch("sparse_attention_backward_src");                                                                    \
  }

TOPO_ATTENTION_LAUNCHERS(std::int32_t)
TOPO_ATTENTION_LAUNCHERS(std::int64_t)
#undef TOPO_ATTENTION_LAUNCHERS

}  // namespace topo::cuda
