// Fused dense attention on CUDA over packed variable-length sequences. Per-score math from
// flash_attention_math.hpp (flash_row_softmax, flash_row_lse, flash_score_backward), shared with the CPU.
//
// Parallel strategy: one thread per (row, head), 128 threads per block; a thread walks its sequence's keys in
// tiles of kTile, with the tile's scores in registers/local memory and its output row accumulated in place
// (rescaled per tile: the online softmax). Backward: one thread per (query row, head) for delta = dout . out
// and dq (it recomputes its row's p and ds per key tile), then one thread per (key row, head) for dk and dv
// (it recomputes the column's p and ds per query): every output row has one writer, no atomics. This is the
// straightforward schedule, correct at any size without shared-memory tiling; no [L, L] tensor exists.
// Bands: a thread walks only its row's band [row - r, row + r] of the sequence (the key kernel: the queries
// [key - r, key + r], the same set since |i - j| is symmetric), so nothing outside the band is computed and
// no masking is needed; full attention is r = the sequence's length.
#include <cmath>

#include "kernels/cuda_utils.cuh"
#include "kernels/dense/flash_attention_math.hpp"

namespace topo::cuda {
namespace {

constexpr int kThreads = 128;
constexpr std::int64_t kTile = 32;

__device__ float dot(const float* a, const float* b, std::int64_t n) {
  float s = 0.f;
  for (std::int64_t c = 0; c < n; ++c) s += a[c] * b[c];
  return s;
}

// Thread t's (row, head) and the rows [begin, end) of its sequence within its band.
struct RowHead {
  std::int64_t row, head, begin, end;
};
__device__ RowHead row_head(std::int64_t t, std::int64_t heads, const std::int64_t* offsets, const std::int64_t* seq,
                            const std::int64_t* radius) {
  const std::int64_t row = t / heads, head = t % heads, b = seq[row], r = radius[b * heads + head];
  const std::int64_t begin = row - r > offsets[b] ? row - r : offsets[b];
  const std::int64_t end = row + r + 1 < offsets[b + 1] ? row + r + 1 : offsets[b + 1];
  return {row, head, begin, end};
}

__global__ void forward_kernel(const std::int64_t* offsets, const std::int64_t* seq, const std::int64_t* radius,
                               std::int64_t rows, std::int64_t heads, std::int64_t dk, std::int64_t dv, float scale,
                               const float* q, const float* k, const float* v, float* out, float* lse) {
  const std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  if (t >= rows * heads) return;
  const RowHead rh = row_head(t, heads, offsets, seq, radius);
  const std::int64_t h = rh.head, begin = rh.begin, end = rh.end;
  const float* qi = q + t * dk;
  float* o = out + t * dv;
  for (std::int64_t c = 0; c < dv; ++c) o[c] = 0.f;
  float s[kTile], m = -INFINITY, l = 0.f;
  for (std::int64_t j0 = begin; j0 < end; j0 += kTile) {
    const std::int64_t n = end - j0 < kTile ? end - j0 : kTile;
    for (std::int64_t j = 0; j < n; ++j) s[j] = scale * dot(qi, k + ((j0 + j) * heads + h) * dk, dk);
    const float rescale = flash_row_softmax(s, n, m, l);
    for (std::int64_t c = 0; c < dv; ++c) {
      float acc = o[c] * rescale;
      for (std::int64_t j = 0; j < n; ++j) acc += s[j] * v[((j0 + j) * heads + h) * dv + c];
      o[c] = acc;
    }
  }
  const float inv = 1.f / l;
  for (std::int64_t c = 0; c < dv; ++c) o[c] *= inv;
  lse[t] = flash_row_lse(m, l);
}

// Per (query row, head): delta and dq = scale sum_j ds_ij k_j.
__global__ void backward_query_kernel(const std::int64_t* offsets, const std::int64_t* seq, const std::int64_t* radius,
                                      std::int64_t rows, std::int64_t heads, std::int64_t dk, std::int64_t dv,
                                      float scale, const float* q, const float* k, const float* v, const float* out,
                                      const float* lse, const float* dout, float* delta, float* dq) {
  const std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  if (t >= rows * heads) return;
  const RowHead rh = row_head(t, heads, offsets, seq, radius);
  const std::int64_t h = rh.head, begin = rh.begin, end = rh.end;
  const float* qi = q + t * dk;
  const float* gi = dout + t * dv;
  const float di = dot(gi, out + t * dv, dv);
  delta[t] = di;
  float* dqi = dq + t * dk;
  for (std::int64_t c = 0; c < dk; ++c) dqi[c] = 0.f;
  float s[kTile], dp[kTile];
  for (std::int64_t j0 = begin; j0 < end; j0 += kTile) {
    const std::int64_t n = end - j0 < kTile ? end - j0 : kTile;
    for (std::int64_t j = 0; j < n; ++j) {
      s[j] = scale * dot(qi, k + ((j0 + j) * heads + h) * dk, dk);
      dp[j] = dot(gi, v + ((j0 + j) * heads + h) * dv, dv);
    }
    flash_row_backward(s, dp, n, lse[t], di);
    for (std::int64_t c = 0; c < dk; ++c) {
      float acc = 0.f;
      for (std::int64_t j = 0; j < n; ++j) acc += dp[j] * k[((j0 + j) * heads + h) * dk + c];
      dqi[c] += scale * acc;
    }
  }
}

// Per (key row, head): dv_j = sum_i p_ij dout_i, dk_j = scale sum_i ds_ij q_i.
__global__ void backward_key_kernel(const std::int64_t* offsets, const std::int64_t* seq, const std::int64_t* radius,
                                    std::int64_t rows, std::int64_t heads, std::int64_t dk, std::int64_t dv,
                                    float scale, const float* q,
                                    const float* k, const float* v, const float* lse, const float* dout,
                                    const float* delta, float* dkey, float* dval) {
  const std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  if (t >= rows * heads) return;
  const RowHead rh = row_head(t, heads, offsets, seq, radius);
  const std::int64_t h = rh.head, begin = rh.begin, end = rh.end;
  const float* kj = k + t * dk;
  const float* vj = v + t * dv;
  float* dkj = dkey + t * dk;
  float* dvj = dval + t * dv;
  for (std::int64_t c = 0; c < dk; ++c) dkj[c] = 0.f;
  for (std::int64_t c = 0; c < dv; ++c) dvj[c] = 0.f;
  for (std::int64_t i = begin; i < end; ++i) {
    const std::int64_t ti = i * heads + h;
    float s = scale * dot(q + ti * dk, kj, dk);
    float dp = dot(dout + ti * dv, vj, dv);
    flash_score_backward(s, dp, lse[ti], delta[ti]);  // s -> p, dp -> ds
    for (std::int64_t c = 0; c < dv; ++c) dvj[c] += s * dout[ti * dv + c];
    for (std::int64_t c = 0; c < dk; ++c) dkj[c] += scale * dp * q[ti * dk + c];
  }
}

}  // namespace

void flash_attention(const std::int64_t* offsets, const std::int64_t* seq, const std::int64_t* radius,
                     std::int64_t rows, std::int64_t heads, std::int64_t dk, std::int64_t dv, float scale,
                     const float* q, const float* k, const float* v, float* out, float* lse) {
  if (rows * heads == 0) return;
  forward_kernel<<<blocks_for(rows * heads, kThreads), kThreads>>>(offsets, seq, radius, rows, heads, dk, dv, scale, q,
                                                                   k, v, out, lse);
  check_launch("flash_attention");
}

void flash_attention_backward(const std::int64_t* offsets, const std::int64_t* seq, const std::int64_t* radius,
                              std::int64_t rows, std::int64_t heads, std::int64_t dk, std::int64_t dv, float scale,
                              const float* q, const float* k, const float* v, const float* out, const float* lse,
                              const float* dout, float* dq, float* dkey, float* dval) {
  if (rows * heads == 0) return;
  float* delta = nullptr;
  check(cudaMalloc(&delta, static_cast<std::size_t>(rows * heads) * sizeof(float)), "flash_attention_backward");
  const unsigned blocks = blocks_for(rows * heads, kThreads);
  backward_query_kernel<<<blocks, kThreads>>>(offsets, seq, radius, rows, heads, dk, dv, scale, q, k, v, out, lse,
                                              dout, delta, dq);
  cudaError_t status = cudaGetLastError();
  if (status == cudaSuccess) {
    backward_key_kernel<<<blocks, kThreads>>>(offsets, seq, radius, rows, heads, dk, dv, scale, q, k, v, lse, dout,
                                              delta, dkey, dval);
    status = cudaGetLastError();
  }
  const cudaError_t freed = cudaFree(delta);  // synchronises: both kernels have run
  check(status, "flash_attention_backward");
  check(freed, "flash_attention_backward (free)");
}

}  // namespace topo::cuda
