// Fused dense attention over packed variable-length sequences (FlashAttention-2's schedule on a CPU).
//
// Parallel strategy (CPU):
//  - forward: one task per (sequence, query tile of kQueryTile rows, head), OpenMP dynamic schedule. A task
//    holds its [tile, dv] output accumulator and one [tile, kKeyTile] score tile in per-thread scratch; per key
//    tile: S = scale Q K^T (one single-threaded sgemm on the strided head slices), the online softmax per row
//    (flash_attention_math.hpp), O = rescale O + P V (a second sgemm). Nothing of size [L, L] exists; the
//    scratch is kQueryTile x kKeyTile floats (256 KiB) per thread, L2-resident.
//  - backward: one task per (sequence, head): for each key tile, for each query tile, recompute S and
//    P = exp(S - lse), dP = dO V^T, dS = P (dP - delta); dV += P^T dO, dK += scale dS^T Q, dQ += scale dS K.
//    The task owns its head's dq, dk, dv rows of its sequence, so there are no atomics and the result does not
//    depend on the thread count. 5 GEMMs per tile pair (the minimum; the forward's 2 are recomputed as 1).
// Inside the OpenMP region OpenBLAS runs each tile's sgemm single-threaded.
#include "kernels/dense/flash_attention.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "kernels/dense/flash_attention_math.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/profile.hpp"

namespace topo {
namespace {

// Query rows x key columns of one score tile. 128 x 512 keeps a tile in L2 (256 KiB) and a sequence of up to
// 512 keys in one tile (no rescaling); backward tiles are square (two tiles live: P and dS, 2 x 256 KiB).
// Larger tiles amortise each small sgemm's fixed cost (packing an operand with only dh = 50 columns): with
// 64 x 512 / 128 x 128 the fused step lost to the padded GEMMs at n = 1024 (0.87x, docs/performance.md).
constexpr std::int64_t kQueryTile = 128, kKeyTile = 512, kBackwardTile = 256;

struct Dims {
  std::int64_t heads, dk, dv;
};

struct Sequences {
  std::vector<std::int64_t> offsets;  // B + 1
  std::int64_t rows = 0;
};

Sequences sequences_of(const std::vector<std::int64_t>& lengths, const char* op) {
  TOPO_CHECK(!lengths.empty(), "{}: no sequences", op);
  Sequences s;
  s.offsets.push_back(0);
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    TOPO_CHECK(lengths[b] >= 1, "{}: sequence {} has length {} (must be >= 1)", op, b, lengths[b]);
    s.offsets.push_back(s.offsets.back() + lengths[b]);
  }
  s.rows = s.offsets.back();
  return s;
}

Dims check_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const Sequences& s, const char* op) {
  for (const Tensor* t : {&q, &k, &v}) check_dtype(*t, DType::F32, op, "q/k/v");
  check_same_device(q, k, op);
  check_same_device(q, v, op);
  TOPO_CHECK(q.ndim() == 3 && k.ndim() == 3 && v.ndim() == 3, "{}: q, k, v must be [rows, heads, dim], got {}, {}, {}",
             op, q.str(), k.str(), v.str());
  TOPO_CHECK(q.shape() == k.shape(), "{}: q {} and k {} differ", op, q.str(), k.str());
  TOPO_CHECK(v.size(0) == q.size(0) && v.size(1) == q.size(1), "{}: v {} does not match q {} in rows and heads", op,
             v.str(), q.str());
  TOPO_CHECK(q.size(0) == s.rows, "{}: q has {} rows but the lengths sum to {}", op, q.size(0), s.rows);
  return Dims{q.size(1), q.size(2), v.size(2)};
}

// Runs task(i, scratch) for i in [0, n) over the OpenMP pool (dynamic: sequences and tiles differ in cost),
// with one Scratch per thread; serially when one thread or one task.
template <class Scratch, class F>
void parallel_tasks(std::int64_t n, F&& task) {
  const int threads = omp_get_max_threads();
  if (threads <= 1 || n <= 1 || omp_in_parallel()) {
    Scratch scratch;
    for (std::int64_t i = 0; i < n; ++i) task(i, scratch);
    return;
  }
  profile::count_parallel_region();
#pragma omp parallel num_threads(threads)
  {
    Scratch scratch;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t i = 0; i < n; ++i) task(i, scratch);
  }
}

struct ForwardScratch {
  std::vector<float> s = std::vector<float>(kQueryTile * kKeyTile), o, m = std::vector<float>(kQueryTile),
                     l = std::vector<float>(kQueryTile);
};

// One (sequence, query tile, head): rows [r0, r0 + mq) of a sequence of `len` rows starting at `off`.
void forward_tile(std::int64_t off, std::int64_t len, std::int64_t r0, std::int64_t h, Dims d, float scale,
                  const float* q, const float* k, const float* v, float* out, float* lse, ForwardScratch& w) {
  const std::int64_t mq = std::min(kQueryTile, len - r0), ldk = d.heads * d.dk, ldv = d.heads * d.dv;
  w.o.resize(static_cast<std::size_t>(kQueryTile * d.dv));
  float *s = w.s.data(), *o = w.o.data(), *m = w.m.data(), *l = w.l.data();
  std::fill_n(m, mq, -INFINITY);
  std::fill_n(l, mq, 0.f);
  const float* qt = q + ((off + r0) * d.heads + h) * d.dk;
  for (std::int64_t j0 = 0; j0 < len; j0 += kKeyTile) {
    const std::int64_t nk = std::min(kKeyTile, len - j0);
    cpu::sgemm(false, true, mq, nk, d.dk, scale, qt, ldk, k + ((off + j0) * d.heads + h) * d.dk, ldk, 0.f, s, nk);
    for (std::int64_t r = 0; r < mq; ++r) {
      const float rescale = flash_row_softmax(s + r * nk, nk, m[r], l[r]);
      if (j0 > 0 && rescale != 1.f) {
        float* orow = o + r * d.dv;
#pragma omp simd
        for (std::int64_t c = 0; c < d.dv; ++c) orow[c] *= rescale;
      }
    }
    cpu::sgemm(false, false, mq, d.dv, nk, 1.f, s, nk, v + ((off + j0) * d.heads + h) * d.dv, ldv, j0 > 0 ? 1.f : 0.f,
               o, d.dv);
  }
  for (std::int64_t r = 0; r < mq; ++r) {
    const float inv = 1.f / l[r];
    float* dst = out + ((off + r0 + r) * d.heads + h) * d.dv;
#pragma omp simd
    for (std::int64_t c = 0; c < d.dv; ++c) dst[c] = o[r * d.dv + c] * inv;
    lse[(off + r0 + r) * d.heads + h] = flash_row_lse(m[r], l[r]);
  }
}

void forward_cpu(const Sequences& s, Dims d, float scale, const float* q, const float* k, const float* v, float* out,
                 float* lse) {
  struct Task {
    std::int64_t b, r0;
  };
  std::vector<Task> tasks;  // (sequence, first row of the query tile); heads vary fastest below
  for (std::size_t b = 0; b + 1 < s.offsets.size(); ++b)
    for (std::int64_t r0 = 0; r0 < s.offsets[b + 1] - s.offsets[b]; r0 += kQueryTile)
      tasks.push_back({static_cast<std::int64_t>(b), r0});
  parallel_tasks<ForwardScratch>(static_cast<std::int64_t>(tasks.size()) * d.heads, [&](std::int64_t i, ForwardScratch& w) {
    const Task& t = tasks[static_cast<std::size_t>(i / d.heads)];
    forward_tile(s.offsets[t.b], s.offsets[t.b + 1] - s.offsets[t.b], t.r0, i % d.heads, d, scale, q, k, v, out, lse,
                 w);
  });
}

struct BackwardScratch {
  std::vector<float> s = std::vector<float>(kBackwardTile * kBackwardTile),
                     dp = std::vector<float>(kBackwardTile * kBackwardTile), delta, lse;
};

// One (sequence, head): every tile pair of the sequence; dq, dk, dv rows of the sequence are zero on entry.
void backward_head(std::int64_t off, std::int64_t len, std::int64_t h, Dims d, float scale, const float* q,
                   const float* k, const float* v, const float* out, const float* lse, const float* dout, float* dq,
                   float* dk, float* dv, BackwardScratch& w) {
  const std::int64_t ldk = d.heads * d.dk, ldv = d.heads * d.dv;
  w.delta.resize(static_cast<std::size_t>(len));
  w.lse.resize(static_cast<std::size_t>(len));
  for (std::int64_t i = 0; i < len; ++i) {  // delta_i = dout_i . out_i; the row's lse gathered contiguous
    const float *g = dout + ((off + i) * d.heads + h) * d.dv, *o = out + ((off + i) * d.heads + h) * d.dv;
    float acc = 0.f;
#pragma omp simd reduction(+ : acc)
    for (std::int64_t c = 0; c < d.dv; ++c) acc += g[c] * o[c];
    w.delta[static_cast<std::size_t>(i)] = acc;
    w.lse[static_cast<std::size_t>(i)] = lse[(off + i) * d.heads + h];
  }
  const auto row_k = [&](auto* base, std::int64_t i) { return base + ((off + i) * d.heads + h) * d.dk; };
  const auto row_v = [&](auto* base, std::int64_t i) { return base + ((off + i) * d.heads + h) * d.dv; };
  float *s = w.s.data(), *dp = w.dp.data();
  for (std::int64_t j0 = 0; j0 < len; j0 += kBackwardTile) {
    const std::int64_t nk = std::min(kBackwardTile, len - j0);
    for (std::int64_t i0 = 0; i0 < len; i0 += kBackwardTile) {
      const std::int64_t mq = std::min(kBackwardTile, len - i0);
      cpu::sgemm(false, true, mq, nk, d.dk, scale, row_k(q, i0), ldk, row_k(k, j0), ldk, 0.f, s, nk);
      cpu::sgemm(false, true, mq, nk, d.dv, 1.f, row_v(dout, i0), ldv, row_v(v, j0), ldv, 0.f, dp, nk);
      for (std::int64_t r = 0; r < mq; ++r)
        flash_row_backward(s + r * nk, dp + r * nk, nk, w.lse[static_cast<std::size_t>(i0 + r)],
                           w.delta[static_cast<std::size_t>(i0 + r)]);
      cpu::sgemm(true, false, nk, d.dv, mq, 1.f, s, nk, row_v(dout, i0), ldv, 1.f, row_v(dv, j0), ldv);
      cpu::sgemm(true, false, nk, d.dk, mq, scale, dp, nk, row_k(q, i0), ldk, 1.f, row_k(dk, j0), ldk);
      cpu::sgemm(false, false, mq, d.dk, nk, scale, dp, nk, row_k(k, j0), ldk, 1.f, row_k(dq, i0), ldk);
    }
  }
}

// Device copies of the offsets and of each row's sequence id, for the CUDA kernels.
struct DeviceSequences {
  Tensor offsets, seq;
};
[[maybe_unused]] DeviceSequences device_sequences(const Sequences& s, Device device) {
  std::vector<std::int64_t> seq(static_cast<std::size_t>(s.rows));
  for (std::size_t b = 0; b + 1 < s.offsets.size(); ++b)
    std::fill(seq.begin() + s.offsets[b], seq.begin() + s.offsets[b + 1], static_cast<std::int64_t>(b));
  return {Tensor::from_vector(s.offsets, {static_cast<std::int64_t>(s.offsets.size())}, device),
          Tensor::from_vector(seq, {s.rows}, device)};
}

}  // namespace

FlashAttentionOutput flash_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                     const std::vector<std::int64_t>& lengths, float scale) {
  TOPO_PROFILE(Gemm);
  const char* op = "flash_attention";
  const Sequences s = sequences_of(lengths, op);
  const Dims d = check_inputs(q, k, v, s, op);
  const Device device = q.device();
  FlashAttentionOutput r{Tensor::empty({s.rows, d.heads, d.dv}, DType::F32, device),
                         Tensor::empty({s.rows, d.heads}, DType::F32, device)};
  const float *qp = q.data<float>(), *kp = k.data<float>(), *vp = v.data<float>();
  float *op_ = r.out.data<float>(), *lp = r.lse.data<float>();
  TOPO_ON_DEVICE(
      device,
      forward_cpu(s, d, scale, qp, kp, vp, op_, lp),
      {
        const DeviceSequences ds = device_sequences(s, device);
        cuda::flash_attention(ds.offsets.data<std::int64_t>(), ds.seq.data<std::int64_t>(), s.rows, d.heads, d.dk,
                              d.dv, scale, qp, kp, vp, op_, lp);
      });
  return r;
}

FlashAttentionGrads flash_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const std::vector<std::int64_t>& lengths,
                                             const FlashAttentionOutput& forward, const Tensor& grad_out,
                                             float scale) {
  TOPO_PROFILE(Gemm);
  const char* op = "flash_attention_backward";
  const Sequences s = sequences_of(lengths, op);
  const Dims d = check_inputs(q, k, v, s, op);
  check_same_shape(grad_out, forward.out, op);
  check_same_device(grad_out, q, op);
  TOPO_CHECK(forward.out.size(0) == s.rows && forward.out.size(1) == d.heads && forward.out.size(2) == d.dv &&
                 forward.lse.numel() == s.rows * d.heads,
             "{}: the forward's out {} / lse {} do not match q {} and v {}", op, forward.out.str(),
             forward.lse.str(), q.str(), v.str());
  const Device device = q.device();
  const Tensor& g = grad_out;
  FlashAttentionGrads r{Tensor::zeros(q.shape(), DType::F32, device), Tensor::zeros(k.shape(), DType::F32, device),
                        Tensor::zeros(v.shape(), DType::F32, device)};
  const float *qp = q.data<float>(), *kp = k.data<float>(), *vp = v.data<float>();
  const float *outp = forward.out.data<float>(), *lsep = forward.lse.data<float>(), *gp = g.data<float>();
  float *dqp = r.dq.data<float>(), *dkp = r.dk.data<float>(), *dvp = r.dv.data<float>();
  TOPO_ON_DEVICE(
      device,
      parallel_tasks<BackwardScratch>(static_cast<std::int64_t>(lengths.size()) * d.heads,
                                      [&](std::int64_t i, BackwardScratch& w) {
                                        const std::int64_t b = i / d.heads;
                                        backward_head(s.offsets[b], lengths[b], i % d.heads, d, scale, qp, kp, vp,
                                                      outp, lsep, gp, dqp, dkp, dvp, w);
                                      }),
      {
        const DeviceSequences ds = device_sequences(s, device);
        cuda::flash_attention_backward(ds.offsets.data<std::int64_t>(), ds.seq.data<std::int64_t>(), s.rows, d.heads,
                                       d.dk, d.dv, scale, qp, kp, vp, outp, lsep, gp, dqp, dkp, dvp);
      });
  return r;
}

FlashAttentionOutput flash_attention_reference(const Tensor& q, const Tensor& k, const Tensor& v,
                                               const std::vector<std::int64_t>& lengths, float scale) {
  const char* op = "flash_attention_reference";
  const Sequences s = sequences_of(lengths, op);
  const Dims d = check_inputs(q, k, v, s, op);
  TOPO_CHECK(q.device().is_cpu(), "{}: CPU only", op);
  const auto qv = q.to_vector<float>(), kv = k.to_vector<float>(), vv = v.to_vector<float>();
  std::vector<float> out(static_cast<std::size_t>(s.rows * d.heads * d.dv), 0.f), lse(static_cast<std::size_t>(s.rows * d.heads));
  for (std::size_t b = 0; b + 1 < s.offsets.size(); ++b) {
    const std::int64_t begin = s.offsets[b], end = s.offsets[b + 1];
    std::vector<float> score(static_cast<std::size_t>(end - begin));
    for (std::int64_t i = begin; i < end; ++i)
      for (std::int64_t h = 0; h < d.heads; ++h) {
        float top = -INFINITY;
        for (std::int64_t j = begin; j < end; ++j) {
          float dot = 0.f;
          for (std::int64_t c = 0; c < d.dk; ++c)
            dot += qv[static_cast<std::size_t>((i * d.heads + h) * d.dk + c)] *
                   kv[static_cast<std::size_t>((j * d.heads + h) * d.dk + c)];
          score[static_cast<std::size_t>(j - begin)] = scale * dot;
          top = std::max(top, scale * dot);
        }
        float z = 0.f;
        for (float& x : score) z += (x = std::exp(x - top));
        for (std::int64_t j = begin; j < end; ++j)
          for (std::int64_t c = 0; c < d.dv; ++c)
            out[static_cast<std::size_t>((i * d.heads + h) * d.dv + c)] +=
                score[static_cast<std::size_t>(j - begin)] / z * vv[static_cast<std::size_t>((j * d.heads + h) * d.dv + c)];
        lse[static_cast<std::size_t>(i * d.heads + h)] = top + std::log(z);
      }
  }
  return {Tensor::from_vector(out, {s.rows, d.heads, d.dv}), Tensor::from_vector(lse, {s.rows, d.heads})};
}

}  // namespace topo
