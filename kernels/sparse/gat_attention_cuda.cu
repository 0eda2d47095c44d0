// GAT's fused edge attention on CUDA. Parallel strategy: one warp per (row, head). The forward takes the row's
// max over its in-edges with lanes over edges, then walks the edges in chunks of 32: each lane makes one edge's
// weight (and its dropout keep), and the chunk's weights are broadcast by shuffles while lanes split the F
// features of the accumulated source rows. Backward: a destination pass (lanes over edges: D_v and der_v by warp
// sums) and a source pass over the reverse CSR (lanes over edges for the weights and del, then lanes over
// features for dz): one writer per output row, no atomics, as on the CPU. Per-edge math: gat_attention_math.hpp.
#include "kernels/cuda_utils.cuh"
#include "kernels/sparse/attention_math.hpp"
#include "kernels/sparse/gat_attention_math.hpp"

namespace topo::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarp = 32;

__device__ float warp_sum(float s) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
  return s;
}
__device__ float warp_max(float s) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) s = fmaxf(s, __shfl_xor_sync(0xffffffffu, s, offset));
  return s;
}

// g . z over F floats by one lane (F is a head's width: 8 in GAT's layers).
__device__ float row_dot(const float* a, const float* b, std::int64_t n) {
  float s = 0.f;
  for (std::int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// o[i] = sum over the row's entries j in [begin, end) of weight_j rows[(indices[j] H + h) F + i], lanes over F:
// the entries go in chunks of 32, each lane making one entry's weight (`weight_of(j)`, which may also fold
// lane-local sums of its own) and reading its row id; both are broadcast by shuffles while the lanes split the
// F features of the rows.
template <class Id, class WeightOf>
__device__ void weighted_rows(const Id* indices, std::int64_t begin, std::int64_t end, const float* rows,
                              std::int64_t heads, std::int64_t h, std::int64_t F, int lane, float* o,
                              WeightOf&& weight_of) {
  for (std::int64_t i = lane; i < F; i += kWarp) o[i] = 0.f;
  for (std::int64_t j0 = begin; j0 < end; j0 += kWarp) {
    const std::int64_t j = j0 + lane;
    long long row = 0;
    float weight = 0.f;
    if (j < end) {
      row = indices[j];
      weight = weight_of(j);
    }
    const int n = static_cast<int>(end - j0 < kWarp ? end - j0 : kWarp);
    for (int c = 0; c < n; ++c) {
      const float wc = __shfl_sync(0xffffffffu, weight, c);
      const long long rc = __shfl_sync(0xffffffffu, row, c);
      const float* r = rows + (rc * heads + h) * F;
      for (std::int64_t i = lane; i < F; i += kWarp) o[i] += wc * r[i];
    }
  }
}

template <class Id>
__global__ void forward_kernel(const Id* indptr, const Id* indices, const Id* eids, std::int64_t rows,
                               std::int64_t heads, std::int64_t F, float slope, GatDropout drop, const float* el,
                               const float* er, const float* z, float* out, float* lse) {
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / kWarp);
  const int lane = threadIdx.x % kWarp;
  for (std::int64_t w = blockIdx.x * std::int64_t{blockDim.x / kWarp} + threadIdx.x / kWarp; w < rows * heads;
       w += warps) {
    const std::int64_t r = w / heads, h = w % heads, begin = indptr[r], end = indptr[r + 1];
    const float erv = er[w];
    float m = -INFINITY;
    for (std::int64_t j = begin + lane; j < end; j += kWarp)
      m = fmaxf(m, gat_leaky(el[static_cast<std::int64_t>(indices[j]) * heads + h] + erv, slope));
    m = warp_max(m);
    float* o = out + w * F;
    float l = 0.f;
    weighted_rows(indices, begin, end, z, heads, h, F, lane, o, [&](std::int64_t j) {
      const float p = exp_approx(gat_leaky(el[static_cast<std::int64_t>(indices[j]) * heads + h] + erv, slope) - m);
      l += p;
      return p * gat_keep(drop, static_cast<std::uint64_t>(eids[j]) * heads + h);
    });
    l = warp_sum(l);
    const float inv = l > 0.f ? 1.f / l : 0.f;
    for (std::int64_t i = lane; i < F; i += kWarp) o[i] *= inv;
    if (lane == 0) lse[w] = online_softmax_lse(m, l);
  }
}

template <class Id>
__global__ void backward_dst_kernel(const Id* indptr, const Id* indices, const Id* eids, std::int64_t rows,
                                    std::int64_t heads, std::int64_t F, float slope, GatDropout drop, const float* el,
                                    const float* er, const float* z, const float* lse, const float* dout,
                                    float* row_term, float* der) {
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / kWarp);
  const int lane = threadIdx.x % kWarp;
  for (std::int64_t w = blockIdx.x * std::int64_t{blockDim.x / kWarp} + threadIdx.x / kWarp; w < rows * heads;
       w += warps) {
    const std::int64_t r = w / heads, h = w % heads;
    const float erv = er[w], lv = lse[w];
    const float* g = dout + w * F;
    float A = 0.f, B = 0.f, D = 0.f;
    for (std::int64_t j = indptr[r] + lane; j < indptr[r + 1]; j += kWarp) {
      const std::int64_t u = indices[j];
      const float x = el[u * heads + h] + erv;
      const float a = exp_approx(gat_leaky(x, slope) - lv), lg = gat_leaky_grad(x, slope);
      const float ad = a * gat_keep(drop, static_cast<std::uint64_t>(eids[j]) * heads + h) *
                       row_dot(g, z + (u * heads + h) * F, F);
      A += ad * lg;
      B += a * lg;
      D += ad;
    }
    A = warp_sum(A);
    B = warp_sum(B);
    D = warp_sum(D);
    if (lane == 0) {
      row_term[w] = D;
      der[w] = A - D * B;
    }
  }
}

template <class Id>
__global__ void backward_src_kernel(const Id* indptr, const Id* indices, const Id* eids, std::int64_t rows,
                                    std::int64_t heads, std::int64_t F, float slope, GatDropout drop, const float* el,
                                    const float* er, const float* z, const float* lse, const float* dout,
                                    const float* row_term, float* del, float* dz) {
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / kWarp);
  const int lane = threadIdx.x % kWarp;
  for (std::int64_t w = blockIdx.x * std::int64_t{blockDim.x / kWarp} + threadIdx.x / kWarp; w < rows * heads;
       w += warps) {
    const std::int64_t u = w / heads, h = w % heads, begin = indptr[u], end = indptr[u + 1];
    const float elu = el[w];
    const float* zu = z + w * F;
    float dl = 0.f;
    weighted_rows(indices, begin, end, dout, heads, h, F, lane, dz + w * F, [&](std::int64_t j) {
      const std::int64_t vh = static_cast<std::int64_t>(indices[j]) * heads + h;
      const float x = elu + er[vh];
      const float a = exp_approx(gat_leaky(x, slope) - lse[vh]);
      const float keep = gat_keep(drop, static_cast<std::uint64_t>(eids[j]) * heads + h);
      dl += gat_score_grad(a, keep, row_dot(dout + vh * F, zu, F), row_term[vh], gat_leaky_grad(x, slope));
      return a * keep;
    });
    dl = warp_sum(dl);
    if (lane == 0) del[w] = dl;
  }
}

unsigned warp_blocks(std::int64_t warps) { return blocks_for(warps * kWarp, kThreads); }

}  // namespace

#define TOPO_GAT_LAUNCHERS(Id)                                                                                         \
  void gat_attention(const Id* indptr, const Id* indices, const Id* eids, std::int64_t rows, std::int64_t heads,       \
                     std::int64_t features, float slope, GatDropout drop, const float* el, const float* er,            \
                     const float* z, float* out, float* lse) {                                                         \
    if (rows * heads == 0) return;                                                                                     \
    forward_kernel<Id><<<warp_blocks(rows * heads), kThreads>>>(indptr, indices, eids, rows, heads, features, slope,   \
                                                                drop, el, er, z, out, lse);                            \
    check_launch("gat_attention");                                                                                     \
  }                                                                                                                    \
  void gat_attention_backward_dst(const Id* indptr, const Id* indices, const Id* eids, std::int64_t rows,              \
                                  std::int64_t heads, std::int64_t features, float slope, GatDropout drop,             \
                                  const float* el, const float* er, const float* z, const float* lse,                  \
                                  const float* dout, float* row_term, float* der) {                                    \
    if (rows * heads == 0) return;                                                                                     \
    backward_dst_kernel<Id><<<warp_blocks(rows * heads), kThreads>>>(indptr, indices, eids, rows, heads, features,     \
                                                                     slope, drop, el, er, z, lse, dout, row_term, der); \
    check_launch("gat_attention_backward_dst");                                                                        \
  }                                                                                                                    \
  void gat_attention_backward_src(const Id* indptr, const Id* indices, const Id* eids, std::int64_t rows,              \
                                  std::int64_t heads, std::int64_t features, float slope, GatDropout drop,             \
                                  const float* el, const float* er, const float* z, const float* lse,                  \
                                  const float* dout, const float* row_term, float* del, float* dz) {                   \
    if (rows * heads == 0) return;                                                                                     \
    backward_src_kernel<Id><<<warp_blocks(rows * heads), kThreads>>>(indptr, indices, eids, rows, heads, features,     \
                                                                     slope, drop, el, er, z, lse, dout, row_term, del, \
                                                                     dz);                                              \
    check_launch("gat_attention_backward_src");                                                                        \
  }

TOPO_GAT_LAUNCHERS(std::int32_t)
TOPO_GAT_LAUNCHERS(std::int64_t)
#undef TOPO_GAT_LAUNCHERS

}  // namespace topo::cuda
