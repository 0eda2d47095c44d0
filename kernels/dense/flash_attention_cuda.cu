// Fused dense attention on CUDA over packed variable-length sequences. Per-score math from
// flash_attention_math.hpp (flash_online_max, flash_row_lse, flash_score_backward), shared with the CPU.
//
// Parallel strategy: one warp per (row, head), four warps per block; the row's own vectors (q, or k and v in
// the key kernel) and its accumulators sit in the warp's slice of shared memory. Keys (queries in the key
// kernel) go in tiles of 32, one per lane: lane j computes its score s_j = scale q . k_j from its key's
// contiguous row, the warp takes the tile's max and sum by shuffles (the online softmax), then the lanes turn
// to the feature columns — lane c owns columns c, c + 32, … — and add p_j v_j[c] for each key of the tile,
// p_j broadcast by shuffle, so every load of a v (or k, q, dout) row is coalesced.
// Backward: a warp per (query row, head) for delta = dout . out and dq (it recomputes its row's p and ds per
// tile), then a warp per (key row, head) for dk and dv (it recomputes the column's p and ds per tile of
// queries): every output row has one writer, no atomics. No [L, L] tensor exists.
// Bands: a warp walks only its row's band [row - r, row + r] of the sequence (the key kernel: the queries
// [key - r, key + r], the same set since |i - j| is symmetric); full attention is r = the sequence's length.
// (Measured on an H200 with the previous one-thread-per-row schedule: 0.8 ms for 512 rows x 16 dims, the
// same as 16 CPU cores; docs/performance/kernels.md.)
#include <algorithm>
#include <cmath>

#include "kernels/cuda_utils.cuh"
#include "kernels/dense/flash_attention_math.hpp"

namespace topo::cuda {
namespace {

constexpr int kWarp = 32;
constexpr unsigned kFull = 0xffffffffu;
constexpr int kMaxWarpsPerBlock = 4;
constexpr std::size_t kSharedLimit = 48 * 1024;  // the default dynamic shared memory a block may ask for

__device__ float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(kFull, v, offset);
  return v;
}
__device__ float warp_max(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(kFull, v, offset));
  return v;
}
// Dot product of a row in shared memory (read by every lane at once: a broadcast) with a row in global memory.
__device__ float dot(const float* shared_row, const float* row, std::int64_t n) {
  float s = 0.f;
  for (std::int64_t c = 0; c < n; ++c) s += shared_row[c] * row[c];
  return s;
}
// The warp's lanes copy n floats (coalesced) into shared memory, or zero them (src null).
__device__ void warp_load(float* dst, const float* src, std::int64_t n, int lane) {
  for (std::int64_t c = lane; c < n; c += kWarp) dst[c] = src ? src[c] : 0.f;
  __syncwarp();
}

// The lanes' turn at the feature columns: for each column c < width a lane owns (c = lane, lane + 32, ...),
// combine(c, start(c) + sum_j w_j rows[j * row_stride + c]) over the tile's n rows, w_j the weight lane j holds
// (p or ds), broadcast by shuffle. Every lane runs every round: the shuffles need all 32.
// Measured on an H200 (topo-bench ops --only flash_attention): the forward is 1.3-1.5x slower when the running
// output is added after the loop instead of being the sum's start, or when the row count is a 32-bit int (the
// compiler then keeps fewer loads in flight); so both stay as they are.
template <class Start, class Combine>
__device__ void weighted_row_sum(float w, std::int64_t n, const float* rows, std::int64_t row_stride,
                                 std::int64_t width, int lane, Start start, Combine combine) {
  for (std::int64_t c0 = 0; c0 < width; c0 += kWarp) {
    const std::int64_t c = c0 + lane;
    float sum = c < width ? start(c) : 0.f;
    for (std::int64_t j = 0; j < n; ++j) {
      const float wj = __shfl_sync(kFull, w, static_cast<int>(j));
      if (c < width) sum += wj * rows[j * row_stride + c];
    }
    if (c < width) combine(c, sum);
  }
}

// Row t = row * heads + head: its head and the rows [begin, end) of its sequence within its band.
struct RowHead {
  std::int64_t head, begin, end;
};
__device__ RowHead row_head(std::int64_t t, std::int64_t heads, const std::int64_t* offsets, const std::int64_t* seq,
                            const std::int64_t* radius) {
  const std::int64_t row = t / heads, head = t % heads, b = seq[row], r = radius[b * heads + head];
  const std::int64_t begin = row - r > offsets[b] ? row - r : offsets[b];
  const std::int64_t end = row + r + 1 < offsets[b + 1] ? row + r + 1 : offsets[b + 1];
  return {head, begin, end};
}

// Grid-stride over warps: each warp gets (row, head) indices t; `per_warp` floats of shared memory each.
struct WarpSlot {
  int lane;
  std::int64_t first, stride;
  float* shared;
};
__device__ WarpSlot warp_slot(std::int64_t per_warp) {
  extern __shared__ float shared[];
  const int warp = threadIdx.x / kWarp;
  return {static_cast<int>(threadIdx.x % kWarp), blockIdx.x * std::int64_t{blockDim.x / kWarp} + warp,
          std::int64_t{gridDim.x} * (blockDim.x / kWarp), shared + warp * per_warp};
}

__global__ void forward_kernel(const std::int64_t* offsets, const std::int64_t* seq, const std::int64_t* radius,
                               std::int64_t rows, std::int64_t heads, std::int64_t dk, std::int64_t dv, float scale,
                               const float* q, const float* k, const float* v, float* out, float* lse) {
  const WarpSlot w = warp_slot(dk + dv);
  float* sq = w.shared;  // [dk]: the query row
  float* so = sq + dk;   // [dv]: the output accumulator
  for (std::int64_t t = w.first; t < rows * heads; t += w.stride) {
    const RowHead rh = row_head(t, heads, offsets, seq, radius);
    warp_load(sq, q + t * dk, dk, w.lane);
    warp_load(so, nullptr, dv, w.lane);
    float m = -INFINITY, l = 0.f;
    for (std::int64_t j0 = rh.begin; j0 < rh.end; j0 += kWarp) {
      const std::int64_t n = rh.end - j0 < kWarp ? rh.end - j0 : kWarp;
      const float s = w.lane < n ? scale * dot(sq, k + ((j0 + w.lane) * heads + rh.head) * dk, dk) : -INFINITY;
      const float rescale = flash_online_max(m, warp_max(s));
      const float p = w.lane < n ? exp_approx(s - m) : 0.f;
      l = l * rescale + warp_sum(p);
      weighted_row_sum(
          p, n, v + (j0 * heads + rh.head) * dv, heads * dv, dv, w.lane,
          [&](std::int64_t c) { return so[c] * rescale; }, [&](std::int64_t c, float sum) { so[c] = sum; });
    }
    const float inv = 1.f / l;
    for (std::int64_t c = w.lane; c < dv; c += kWarp) out[t * dv + c] = so[c] * inv;
    if (w.lane == 0) lse[t] = flash_row_lse(m, l);
    __syncwarp();
  }
}

// Per (query row, head): delta = dout . out and dq = scale sum_j ds_ij k_j.
__global__ void backward_query_kernel(const std::int64_t* offsets, const std::int64_t* seq, const std::int64_t* radius,
                                      std::int64_t rows, std::int64_t heads, std::int64_t dk, std::int64_t dv,
                                      float scale, const float* q, const float* k, const float* v, const float* out,
                                      const float* lse, const float* dout, float* delta, float* dq) {
  const WarpSlot w = warp_slot(2 * dk + dv);
  float* sq = w.shared;    // [dk]
  float* sdq = sq + dk;    // [dk]
  float* sg = sdq + dk;    // [dv]: dout's row
  for (std::int64_t t = w.first; t < rows * heads; t += w.stride) {
    const RowHead rh = row_head(t, heads, offsets, seq, radius);
    warp_load(sq, q + t * dk, dk, w.lane);
    warp_load(sdq, nullptr, dk, w.lane);
    warp_load(sg, dout + t * dv, dv, w.lane);
    float part = 0.f;
    for (std::int64_t c = w.lane; c < dv; c += kWarp) part += sg[c] * out[t * dv + c];
    const float di = warp_sum(part), row_lse = lse[t];
    for (std::int64_t j0 = rh.begin; j0 < rh.end; j0 += kWarp) {
      const std::int64_t n = rh.end - j0 < kWarp ? rh.end - j0 : kWarp;
      float s = 0.f, ds = 0.f;
      if (w.lane < n) {
        const std::int64_t kj = (j0 + w.lane) * heads + rh.head;
        s = scale * dot(sq, k + kj * dk, dk);
        ds = dot(sg, v + kj * dv, dv);
        flash_score_backward(s, ds, row_lse, di);
      }
      weighted_row_sum(ds, n, k + (j0 * heads + rh.head) * dk, heads * dk, dk, w.lane,
                       [](std::int64_t) { return 0.f; }, [&](std::int64_t c, float sum) { sdq[c] += scale * sum; });
    }
    for (std::int64_t c = w.lane; c < dk; c += kWarp) dq[t * dk + c] = sdq[c];
    if (w.lane == 0) delta[t] = di;
    __syncwarp();
  }
}

// Per (key row, head): dv_j = sum_i p_ij dout_i, dk_j = scale sum_i ds_ij q_i.
__global__ void backward_key_kernel(const std::int64_t* offsets, const std::int64_t* seq, const std::int64_t* radius,
                                    std::int64_t rows, std::int64_t heads, std::int64_t dk, std::int64_t dv,
                                    float scale, const float* q, const float* k, const float* v, const float* lse,
                                    const float* dout, const float* delta, float* dkey, float* dval) {
  const WarpSlot w = warp_slot(2 * dk + 2 * dv);
  float* sk = w.shared;   // [dk]
  float* sdk = sk + dk;   // [dk]
  float* sv = sdk + dk;   // [dv]
  float* sdv = sv + dv;   // [dv]
  for (std::int64_t t = w.first; t < rows * heads; t += w.stride) {
    const RowHead rh = row_head(t, heads, offsets, seq, radius);
    warp_load(sk, k + t * dk, dk, w.lane);
    warp_load(sdk, nullptr, dk, w.lane);
    warp_load(sv, v + t * dv, dv, w.lane);
    warp_load(sdv, nullptr, dv, w.lane);
    for (std::int64_t i0 = rh.begin; i0 < rh.end; i0 += kWarp) {
      const std::int64_t n = rh.end - i0 < kWarp ? rh.end - i0 : kWarp;
      float p = 0.f, ds = 0.f;
      if (w.lane < n) {
        const std::int64_t ti = (i0 + w.lane) * heads + rh.head;
        p = scale * dot(sk, q + ti * dk, dk);
        ds = dot(sv, dout + ti * dv, dv);
        flash_score_backward(p, ds, lse[ti], delta[ti]);  // the score -> p, dout . v -> ds
      }
      weighted_row_sum(p, n, dout + (i0 * heads + rh.head) * dv, heads * dv, dv, w.lane,
                       [](std::int64_t) { return 0.f; }, [&](std::int64_t c, float sum) { sdv[c] += sum; });
      weighted_row_sum(ds, n, q + (i0 * heads + rh.head) * dk, heads * dk, dk, w.lane,
                       [](std::int64_t) { return 0.f; }, [&](std::int64_t c, float sum) { sdk[c] += scale * sum; });
    }
    for (std::int64_t c = w.lane; c < dk; c += kWarp) dkey[t * dk + c] = sdk[c];
    for (std::int64_t c = w.lane; c < dv; c += kWarp) dval[t * dv + c] = sdv[c];
    __syncwarp();
  }
}

// Warps per block and bytes of shared memory for `per_warp` floats a warp; an error if one warp's do not fit.
struct Launch {
  unsigned blocks;
  int threads;
  std::size_t shared;
};
Launch launch_for(std::int64_t items, std::int64_t per_warp, const char* what) {
  const std::size_t bytes = static_cast<std::size_t>(per_warp) * sizeof(float);
  // A warp keeps its row's vectors and accumulators (up to 2 dk + 2 dv floats) in shared memory: dk + dv up to 6144.
  if (bytes > kSharedLimit) fail(what, "head dimensions too large for the kernel's shared memory (dk + dv > 6144)");
  const int warps = static_cast<int>(std::min<std::size_t>(kMaxWarpsPerBlock, kSharedLimit / bytes));
  return {blocks_for(items, warps), warps * kWarp, bytes * static_cast<std::size_t>(warps)};
}

}  // namespace

void flash_attention(const std::int64_t* offsets, const std::int64_t* seq, const std::int64_t* radius,
                     std::int64_t rows, std::int64_t heads, std::int64_t dk, std::int64_t dv, float scale,
                     const float* q, const float* k, const float* v, float* out, float* lse) {
  if (rows * heads == 0) return;
  const Launch l = launch_for(rows * heads, dk + dv, "flash_attention");
  forward_kernel<<<l.blocks, l.threads, l.shared>>>(offsets, seq, radius, rows, heads, dk, dv, scale, q, k, v, out,
                                                    lse);
  check_launch("flash_attention");
}

void flash_attention_backward(const std::int64_t* offsets, const std::int64_t* seq, const std::int64_t* radius,
                              std::int64_t rows, std::int64_t heads, std::int64_t dk, std::int64_t dv, float scale,
                              const float* q, const float* k, const float* v, const float* out, const float* lse,
                              const float* dout, float* dq, float* dkey, float* dval) {
  if (rows * heads == 0) return;
  const Launch lq = launch_for(rows * heads, 2 * dk + dv, "flash_attention_backward");
  const Launch lk = launch_for(rows * heads, 2 * dk + 2 * dv, "flash_attention_backward");
  float* delta = nullptr;
  check(cudaMalloc(&delta, static_cast<std::size_t>(rows * heads) * sizeof(float)), "flash_attention_backward");
  backward_query_kernel<<<lq.blocks, lq.threads, lq.shared>>>(offsets, seq, radius, rows, heads, dk, dv, scale, q, k,
                                                              v, out, lse, dout, delta, dq);
  cudaError_t status = cudaGetLastError();
  if (status == cudaSuccess) {
    backward_key_kernel<<<lk.blocks, lk.threads, lk.shared>>>(offsets, seq, radius, rows, heads, dk, dv, scale, q, k,
                                                              v, lse, dout, delta, dkey, dval);
    status = cudaGetLastError();
  }
  const cudaError_t freed = cudaFree(delta);  // synchronises: both kernels have run
  check(status, "flash_attention_backward");
  check(freed, "flash_attention_backward (free)");
}

}  // namespace topo::cuda
