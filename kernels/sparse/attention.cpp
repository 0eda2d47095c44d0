#include "kernels/sparse/attention.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/profile.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/sparse/attention_math.hpp"
#include "kernels/sparse/csr_checks.hpp"
#include "kernels/sparse/index_dispatch.hpp"
#include "kernels/sparse/row_partition.hpp"
#include "kernels/sparse/simd_rows.hpp"
#include "kernels/dense/indexing.hpp"

namespace topo {
namespace {

// ldk, ldv: floats from one source's k (v) row to the next: H dk (H dv) for separate tensors, 2 H dh when k
// and v are the two halves of one [num_src, 2, H, dh] projection (sparse_attention_kv). dk and dv rows of
// the backward are laid out the same way.
struct AttentionDims {
  std::int64_t heads, dk, dv, ldk, ldv;
};

using simd::dot;
using simd::kLanes;
using simd::max16;
using simd::sum16;

// Forward. Per destination: each source's k and v rows (H * d contiguous floats) are read for that
// destination only, the scores per head with the head's q slice against the in-edges' k slices
// (simd::dots_with: in registers, four edges at a time, as gsddmm). Rows with at most kBlockEdges in-edges go in blocks
// (attention_block below). A heavier row runs an online softmax over chunks of kChunk in-edges: the chunk's
// scores, then per head one max and one rescale of the accumulator per chunk and the chunk's weights as one
// vectorized exp, then the weighted v rows. (The earlier kernel rescaled at every edge: two scalar exps and a
// pass over the accumulator per edge and head; it ran at 0.7-0.8x the composed gsddmm -> edge_softmax ->
// gspmm.) Heads go in blocks of kHeadBlock to bound the stack state. A row's arithmetic depends only on its
// own edges and degree, never on the partition: results are identical for any thread count.
constexpr std::int64_t kChunk = kLanes;  // one vector of scores per head
constexpr std::int64_t kHeadBlock = 32;

// One heavy row (more in-edges than a block holds), online over chunks of kChunk in-edges.
template <class Id>
void attention_row_chunked(const Id* indptr, const Id* indices, std::int64_t r, AttentionDims d, float scale,
                           const float* q, const float* k, const float* v, float* out, float* lse) {
  alignas(64) float w[kHeadBlock * kChunk];  // w[h * kChunk + c]: score, then weight
  float m[kHeadBlock], l[kHeadBlock];
  float* o = out + r * d.heads * d.dv;
  for (std::int64_t i = 0; i < d.heads * d.dv; ++i) o[i] = 0.f;
  for (std::int64_t h0 = 0; h0 < d.heads; h0 += kHeadBlock) {
    const std::int64_t hn = std::min(kHeadBlock, d.heads - h0);
    const float* qr = q + (r * d.heads + h0) * d.dk;
    for (std::int64_t h = 0; h < hn; ++h) m[h] = -INFINITY, l[h] = 0.f;
    for (std::int64_t j0 = indptr[r]; j0 < indptr[r + 1]; j0 += kChunk) {
      const std::int64_t nc = std::min<std::int64_t>(kChunk, indptr[r + 1] - j0);
      for (std::int64_t h = 0; h < hn; ++h) {
        const std::int64_t hk = (h0 + h) * d.dk;
        float* wh = w + h * kChunk;
        simd::dots_with(
            qr + h * d.dk, d.dk, nc, [&](std::int64_t c) { return k + static_cast<std::int64_t>(indices[j0 + c]) * d.ldk + hk; },
            [&](std::int64_t c, float s) { wh[c] = scale * s; });
      }
      for (std::int64_t h = 0; h < hn; ++h) {
        float* wh = w + h * kChunk;
        for (std::int64_t c = nc; c < kChunk; ++c) wh[c] = -INFINITY;  // padding: weight exp(-inf) = 0
        const float m_new = std::max(m[h], max16(wh));
#pragma omp simd
        for (std::int64_t c = 0; c < kChunk; ++c) wh[c] = exp_approx(wh[c] - m_new);
        const float sum = sum16(wh);
        if (m[h] != -INFINITY && m_new != m[h]) {  // first chunk: nothing accumulated yet
          const float rescale = exp_approx(m[h] - m_new);
          float* oh = o + (h0 + h) * d.dv;
          l[h] *= rescale;
#pragma omp simd
          for (std::int64_t i = 0; i < d.dv; ++i) oh[i] *= rescale;
        }
        l[h] += sum;
        m[h] = m_new;
      }
      for (std::int64_t c = 0; c < nc; ++c) {
        const float* vr = v + static_cast<std::int64_t>(indices[j0 + c]) * d.ldv + h0 * d.dv;
        for (std::int64_t h = 0; h < hn; ++h) {
          const float p = w[h * kChunk + c];
          float* oh = o + (h0 + h) * d.dv;
          const float* vh = vr + h * d.dv;
#pragma omp simd
          for (std::int64_t i = 0; i < d.dv; ++i) oh[i] += p * vh[i];
        }
      }
    }
    for (std::int64_t h = 0; h < hn; ++h) {
      const float inv = l[h] > 0.f ? 1.f / l[h] : 0.f;
      float* oh = o + (h0 + h) * d.dv;
#pragma omp simd
      for (std::int64_t i = 0; i < d.dv; ++i) oh[i] *= inv;
      lse[r * d.heads + h0 + h] = online_softmax_lse(m[h], l[h]);
    }
  }
}

// Rows with few in-edges go in blocks of up to kBlockEdges in-edges (and kBlockRows rows): pass A computes
// every score of the block ([h][edge] in a stack buffer, as gsddmm computes them but never leaving L1/L2), pass B runs
// each row's softmax (max, one flat vectorized exp per head over the block, sum) and accumulates the
// normalised weights times the v rows, like gspmm. Two streaming passes over a block ran ~25% faster on the
// DRAM-sized satellite block (one thread) than one pass per row, whose dependent chain (scores -> max -> exp
// -> accumulate) left few loads in flight. No rescaling: each row's max is known before its exps.
constexpr std::int64_t kBlockEdges = 512, kBlockRows = 128;  // 64 + 16 KiB of stack at 32 heads

template <class Id>
void attention_block(const Id* indptr, const Id* indices, std::int64_t rb, std::int64_t re, AttentionDims d,
                     float scale, const float* q, const float* k, const float* v, float* out, float* lse, float* sc,
                     float* inv) {
  const std::int64_t jb = indptr[rb], ne = static_cast<std::int64_t>(indptr[re]) - jb;
  for (std::int64_t h0 = 0; h0 < d.heads; h0 += kHeadBlock) {
    const std::int64_t hn = std::min(kHeadBlock, d.heads - h0);
    for (std::int64_t t = rb; t < re; ++t) {  // A: scores, sc[h * kBlockEdges + j - jb]
      const Id* idx = indices + indptr[t];
      const std::int64_t nj = static_cast<std::int64_t>(indptr[t + 1]) - indptr[t];
      for (std::int64_t h = 0; h < hn; ++h) {
        const std::int64_t hk = (h0 + h) * d.dk;
        float* st = sc + h * kBlockEdges + (indptr[t] - jb);
        simd::dots_with(
            q + t * d.heads * d.dk + hk, d.dk, nj,
            [&](std::int64_t j) { return k + static_cast<std::int64_t>(idx[j]) * d.ldk + hk; },
            [&](std::int64_t j, float s) { st[j] = scale * s; });
      }
    }
    for (std::int64_t h = 0; h < hn; ++h) {  // B: softmax per row and head
      float* sh = sc + h * kBlockEdges - jb;  // sh[j] for j in [jb, jb + ne)
      for (std::int64_t t = rb; t < re; ++t) {
        float m = -INFINITY;
        for (std::int64_t j = indptr[t]; j < indptr[t + 1]; ++j) m = std::max(m, sh[j]);
        for (std::int64_t j = indptr[t]; j < indptr[t + 1]; ++j) sh[j] -= m;
        lse[t * d.heads + h0 + h] = m;
      }
      float* sb = sc + h * kBlockEdges;
#pragma omp simd
      for (std::int64_t i = 0; i < ne; ++i) sb[i] = exp_approx(sb[i]);
      for (std::int64_t t = rb; t < re; ++t) {
        float l = 0.f;
        for (std::int64_t j = indptr[t]; j < indptr[t + 1]; ++j) l += sh[j];
        inv[(t - rb) * kHeadBlock + h] = l > 0.f ? 1.f / l : 0.f;
        lse[t * d.heads + h0 + h] = online_softmax_lse(lse[t * d.heads + h0 + h], l);
      }
    }
    for (std::int64_t t = rb; t < re; ++t) {  // B: weighted v rows
      const Id* idx = indices + indptr[t];
      const std::int64_t nj = static_cast<std::int64_t>(indptr[t + 1]) - indptr[t];
      const float* it = inv + (t - rb) * kHeadBlock;
      float* o = out + (t * d.heads + h0) * d.dv;
      const float* w = sc + (indptr[t] - jb);  // w[h * kBlockEdges + j]: edge j's unnormalised weight
      simd::accumulate_rows(
          nj, [&](std::int64_t j) { return v + static_cast<std::int64_t>(idx[j]) * d.ldv + h0 * d.dv; },
          [&](std::int64_t j, std::int64_t h) { return w[h * kBlockEdges + j] * it[h]; }, hn, d.dv, o);
    }
  }
}

template <class Id>
void attention_rows_cpu(const Id* indptr, const Id* indices, std::int64_t begin, std::int64_t end, AttentionDims d,
                        float scale, const float* q, const float* k, const float* v, float* out, float* lse) {
  alignas(64) float sc[kHeadBlock * kBlockEdges], inv[kBlockRows * kHeadBlock];
  std::int64_t r = begin;
  while (r < end) {
    if (static_cast<std::int64_t>(indptr[r + 1]) - indptr[r] > kBlockEdges) {
      attention_row_chunked(indptr, indices, r, d, scale, q, k, v, out, lse);
      ++r;
      continue;
    }
    std::int64_t re = r + 1;
    while (re < end && re - r < kBlockRows && static_cast<std::int64_t>(indptr[re + 1]) - indptr[r] <= kBlockEdges) ++re;
    attention_block(indptr, indices, r, re, d, scale, q, k, v, out, lse, sc, inv);
    r = re;
  }
}

// Backward, destination pass, in chunks of kChunk edges so the chunk's weights p = exp(scale q.k - lse) are
// one vectorized exp per head: per head, q's and dout's slices against the chunk's k and v slices
// (simd::dots_with: four edges at a time). Per edge and head: ds = p (dout . v - delta) with delta =
// dout . out; dq += scale ds k (a row of one chunk, most rows, sums it in registers). p and ds are kept per
// edge for the source pass.
template <class Id>
void backward_dst_rows_cpu(const Id* indptr, const Id* indices, const Id* eids, std::int64_t begin, std::int64_t end,
                           AttentionDims d, float scale, const float* q, const float* k, const float* v,
                           const float* out, const float* lse, const float* dout, float* dq, float* p, float* ds) {
  alignas(64) float w[kHeadBlock * kChunk] = {}, g[kHeadBlock * kChunk] = {};  // [h * kChunk + c]: p, dout . v
  float delta[kHeadBlock];
  for (std::int64_t r = begin; r < end; ++r) {
    const std::int64_t row_edges = static_cast<std::int64_t>(indptr[r + 1]) - indptr[r];
    const bool one_chunk = row_edges <= kChunk;
    // A row of one chunk stores its dq whole below; the rest (and a row with no in-edges) sum into zeros.
    if (!one_chunk || row_edges == 0)
      for (std::int64_t i = 0; i < d.heads * d.dk; ++i) dq[r * d.heads * d.dk + i] = 0.f;
    for (std::int64_t h0 = 0; h0 < d.heads; h0 += kHeadBlock) {
      const std::int64_t hn = std::min(kHeadBlock, d.heads - h0), rh = r * d.heads + h0;
      const float *qr = q + rh * d.dk, *gr = dout + rh * d.dv;
      float* dqr = dq + rh * d.dk;
      for (std::int64_t h = 0; h < hn; ++h) delta[h] = dot(gr + h * d.dv, out + (rh + h) * d.dv, d.dv);
      for (std::int64_t j0 = indptr[r]; j0 < indptr[r + 1]; j0 += kChunk) {
        const std::int64_t nc = std::min<std::int64_t>(kChunk, indptr[r + 1] - j0);
        auto src = [&](std::int64_t c) { return static_cast<std::int64_t>(indices[j0 + c]); };
        for (std::int64_t h = 0; h < hn; ++h) {
          const std::int64_t hk = (h0 + h) * d.dk, hv = (h0 + h) * d.dv;
          float *wh = w + h * kChunk, *gh = g + h * kChunk;
          simd::dots_with(
              qr + h * d.dk, d.dk, nc, [&](std::int64_t c) { return k + src(c) * d.ldk + hk; },
              [&](std::int64_t c, float s) { wh[c] = scale * s; });
          simd::dots_with(
              gr + h * d.dv, d.dv, nc, [&](std::int64_t c) { return v + src(c) * d.ldv + hv; },
              [&](std::int64_t c, float s) { gh[c] = s; });
        }
        for (std::int64_t h = 0; h < hn; ++h) {
          float *wh = w + h * kChunk, *gh = g + h * kChunk;
          const float l = lse[rh + h], dl = delta[h];
#pragma omp simd
          for (std::int64_t c = 0; c < kChunk; ++c) {  // lanes past nc are computed and never read
            wh[c] = exp_approx(wh[c] - l);
            gh[c] = wh[c] * (gh[c] - dl);
          }
        }
        for (std::int64_t c = 0; c < nc; ++c) {
          const std::int64_t e = eids[j0 + c];
          for (std::int64_t h = 0; h < hn; ++h) {
            p[e * d.heads + h0 + h] = w[h * kChunk + c];
            ds[e * d.heads + h0 + h] = g[h * kChunk + c];
          }
        }
        auto k_row = [&](std::int64_t c) { return k + src(c) * d.ldk + h0 * d.dk; };
        auto dq_weight = [&](std::int64_t c, std::int64_t h) { return scale * g[h * kChunk + c]; };
        if (one_chunk) {  // dq in registers (accumulate_rows), stored once
          simd::accumulate_rows(nc, k_row, dq_weight, hn, d.dk, dqr);
          continue;
        }
        for (std::int64_t c = 0; c < nc; ++c) {
          const float* kr = k_row(c);
          for (std::int64_t h = 0; h < hn; ++h) {
            const float a = dq_weight(c, h);
            float* dqh = dqr + h * d.dk;
            const float* kh = kr + h * d.dk;
#pragma omp simd
            for (std::int64_t i = 0; i < d.dk; ++i) dqh[i] += a * kh[i];
          }
        }
      }
    }
  }
}

// Backward, source pass over the reverse CSR: dk_u = sum scale ds q_t and dv_u = sum p dout_t over u's
// out-edges, each a per-head weighted sum of gathered rows (simd::accumulate_rows: a short row's sums held in
// registers and stored once, as gspmm's).
template <class Id>
void backward_src_rows_cpu(const Id* indptr, const Id* indices, const Id* eids, std::int64_t begin, std::int64_t end,
                           AttentionDims d, float scale, const float* q, const float* dout, const float* p,
                           const float* ds, float* dk, float* dv) {
  for (std::int64_t u = begin; u < end; ++u) {
    const Id *dst = indices + indptr[u], *edge = eids + indptr[u];
    const std::int64_t nj = static_cast<std::int64_t>(indptr[u + 1]) - indptr[u];
    simd::accumulate_rows(
        nj, [&](std::int64_t j) { return q + static_cast<std::int64_t>(dst[j]) * d.heads * d.dk; },
        [&](std::int64_t j, std::int64_t h) { return scale * ds[static_cast<std::int64_t>(edge[j]) * d.heads + h]; },
        d.heads, d.dk, dk + u * d.ldk);
    simd::accumulate_rows(
        nj, [&](std::int64_t j) { return dout + static_cast<std::int64_t>(dst[j]) * d.heads * d.dv; },
        [&](std::int64_t j, std::int64_t h) { return p[static_cast<std::int64_t>(edge[j]) * d.heads + h]; }, d.heads,
        d.dv, dv + u * d.ldv);
  }
}

AttentionDims check_attention(const CsrView& in_csr, const Tensor& q, const Tensor& k, const Tensor& v,
                              const char* op) {
  const Device device = q.device();
  check_csr(in_csr, device, op);
  check_rows(q, in_csr.num_rows, device, op, "q");
  check_rows(k, in_csr.num_cols, device, op, "k");
  check_rows(v, in_csr.num_cols, device, op, "v");
  TOPO_CHECK(q.ndim() == 3 && k.ndim() == 3 && v.ndim() == 3, "{}: q, k, v must be [rows, heads, dim], got {}, {}, {}",
             op, q.str(), k.str(), v.str());
  TOPO_CHECK(q.size(1) == k.size(1) && k.size(1) == v.size(1), "{}: head counts differ: q {}, k {}, v {}", op,
             q.str(), k.str(), v.str());
  TOPO_CHECK(q.size(2) == k.size(2), "{}: q {} and k {} differ in head dim", op, q.str(), k.str());
  return AttentionDims{q.size(1), q.size(2), v.size(2), k.size(1) * k.size(2), v.size(1) * v.size(2)};
}

// kv [num_src, 2, H, dh] against q [num_dst, H, dh]: k rows start at kv, v rows H dh further, both 2 H dh apart.
AttentionDims check_attention_kv(const CsrView& in_csr, const Tensor& q, const Tensor& kv, const char* op) {
  const Device device = q.device();
  check_csr(in_csr, device, op);
  check_rows(q, in_csr.num_rows, device, op, "q");
  check_rows(kv, in_csr.num_cols, device, op, "kv");
  TOPO_CHECK(q.ndim() == 3 && kv.ndim() == 4 && kv.size(1) == 2 && kv.size(2) == q.size(1) && kv.size(3) == q.size(2),
             "{}: q must be [rows, heads, dim] and kv [sources, 2, heads, dim], got {} and {}", op, q.str(), kv.str());
  const std::int64_t width = q.size(1) * q.size(2);
  return AttentionDims{q.size(1), q.size(2), q.size(2), 2 * width, 2 * width};
}

// The CPU passes behind both entry points; k, v (dk, dv) rows as d's strides say.
void forward_cpu(const CsrView& in_csr, AttentionDims d, float scale, const float* q, const float* k, const float* v,
                 AttentionOutput& result) {
  float *op = result.out.data<float>(), *lp = result.lse.data<float>();
  TOPO_DISPATCH_INDEX(in_csr.dtype(), Id, {
    const Id* indptr = in_csr.indptr.data<Id>();
    const Id* indices = in_csr.indices.data<Id>();
    parallel_rows(indptr, in_csr.num_rows, d.heads * (d.dk + d.dv), [&](std::int64_t b, std::int64_t e) {
      attention_rows_cpu(indptr, indices, b, e, d, scale, q, k, v, op, lp);
    });
  });
}

void backward_cpu(const CsrView& in_csr, const CsrView& out_csr, AttentionDims d, float scale, const float* q,
                  const float* k, const float* v, const AttentionOutput& forward, const Tensor& grad_out, float* dq,
                  float* dk, float* dv) {
  // Per-edge softmax weights and score gradients: written by the destination pass, read by the source pass.
  Tensor p = Tensor::empty({in_csr.nnz(), d.heads});
  Tensor ds = Tensor::empty({in_csr.nnz(), d.heads});
  const float *outp = forward.out.data<float>(), *lsep = forward.lse.data<float>(), *gp = grad_out.data<float>();
  float *pp = p.data<float>(), *dsp = ds.data<float>();
  TOPO_DISPATCH_INDEX(in_csr.dtype(), Id, {
    const Id *in_ptr = in_csr.indptr.data<Id>(), *in_idx = in_csr.indices.data<Id>(), *in_eid = in_csr.eids.data<Id>();
    const Id *out_ptr = out_csr.indptr.data<Id>(), *out_idx = out_csr.indices.data<Id>(),
             *out_eid = out_csr.eids.data<Id>();
    parallel_rows(in_ptr, in_csr.num_rows, d.heads * (d.dk + d.dv), [&](std::int64_t b, std::int64_t e) {
      backward_dst_rows_cpu(in_ptr, in_idx, in_eid, b, e, d, scale, q, k, v, outp, lsep, gp, dq, pp, dsp);
    });
    parallel_rows(out_ptr, out_csr.num_rows, d.heads * (d.dk + d.dv), [&](std::int64_t b, std::int64_t e) {
      backward_src_rows_cpu(out_ptr, out_idx, out_eid, b, e, d, scale, q, gp, pp, dsp, dk, dv);
    });
  });
}

#if TOPO_WITH_CUDA
void forward_cuda(const CsrView& in_csr, AttentionDims d, float scale, const float* q, const float* k, const float* v,
                  AttentionOutput& result) {
  TOPO_DISPATCH_INDEX(in_csr.dtype(), Id, {
    cuda::sparse_attention(in_csr.indptr.data<Id>(), in_csr.indices.data<Id>(), in_csr.num_rows, d.heads, d.dk, d.dv,
                           scale, q, k, v, result.out.data<float>(), result.lse.data<float>());
  });
}

void backward_cuda(const CsrView& in_csr, const CsrView& out_csr, AttentionDims d, float scale, const float* q,
                   const float* k, const float* v, const AttentionOutput& forward, const Tensor& grad_out, float* dq,
                   float* dk, float* dv) {
  const Device device = grad_out.device();
  Tensor p = Tensor::empty({in_csr.nnz(), d.heads}, DType::F32, device);
  Tensor ds = Tensor::empty({in_csr.nnz(), d.heads}, DType::F32, device);
  const float *outp = forward.out.data<float>(), *lsep = forward.lse.data<float>(), *gp = grad_out.data<float>();
  float *pp = p.data<float>(), *dsp = ds.data<float>();
  TOPO_DISPATCH_INDEX(in_csr.dtype(), Id, {
    const Id *in_ptr = in_csr.indptr.data<Id>(), *in_idx = in_csr.indices.data<Id>(), *in_eid = in_csr.eids.data<Id>();
    const Id *out_ptr = out_csr.indptr.data<Id>(), *out_idx = out_csr.indices.data<Id>(),
             *out_eid = out_csr.eids.data<Id>();
    cuda::sparse_attention_backward_dst(in_ptr, in_idx, in_eid, in_csr.num_rows, d.heads, d.dk, d.dv, scale, q, k, v,
                                        outp, lsep, gp, dq, pp, dsp);
    cuda::sparse_attention_backward_src(out_ptr, out_idx, out_eid, out_csr.num_rows, d.heads, d.dk, d.dv, scale, q, gp,
                                        pp, dsp, dk, dv);
  });
}
#endif

void check_backward(const CsrView& in_csr, const CsrView& out_csr, const Tensor& q, const AttentionOutput& forward,
                    const Tensor& grad_out, const char* op) {
  check_reverse_csr(in_csr, out_csr, q.device(), op);
  check_same_shape(grad_out, forward.out, op);
  check_same_device(grad_out, q, op);
}

}  // namespace

AttentionOutput sparse_attention(const CsrView& in_csr, const Tensor& q, const Tensor& k, const Tensor& v,
                                 float scale) {
  TOPO_PROFILE(Sparse);
  const AttentionDims d = check_attention(in_csr, q, k, v, "sparse_attention");
  const Device device = q.device();
  AttentionOutput result{Tensor::empty({in_csr.num_rows, d.heads, d.dv}, DType::F32, device),
                         Tensor::empty({in_csr.num_rows, d.heads}, DType::F32, device)};
  const float *qp = q.data<float>(), *kp = k.data<float>(), *vp = v.data<float>();
  TOPO_ON_DEVICE(device, forward_cpu(in_csr, d, scale, qp, kp, vp, result),
                 forward_cuda(in_csr, d, scale, qp, kp, vp, result));
  return result;
}

AttentionGrads sparse_attention_backward(const CsrView& in_csr, const CsrView& out_csr, const Tensor& q,
                                         const Tensor& k, const Tensor& v, const AttentionOutput& forward,
                                         const Tensor& grad_out, float scale) {
  TOPO_PROFILE(Sparse);
  const char* op = "sparse_attention_backward";
  const AttentionDims d = check_attention(in_csr, q, k, v, op);
  check_backward(in_csr, out_csr, q, forward, grad_out, op);
  const Device device = q.device();
  AttentionGrads g{Tensor::empty(q.shape(), DType::F32, device), Tensor::empty(k.shape(), DType::F32, device),
                   Tensor::empty(v.shape(), DType::F32, device)};
  const float *qp = q.data<float>(), *kp = k.data<float>(), *vp = v.data<float>();
  float *dqp = g.dq.data<float>(), *dkp = g.dk.data<float>(), *dvp = g.dv.data<float>();
  TOPO_ON_DEVICE(device, backward_cpu(in_csr, out_csr, d, scale, qp, kp, vp, forward, grad_out, dqp, dkp, dvp),
                 backward_cuda(in_csr, out_csr, d, scale, qp, kp, vp, forward, grad_out, dqp, dkp, dvp));
  return g;
}

// On CUDA the kv variants split kv into k and v (copies) and run the kernels above; on the CPU they read it in place.
AttentionOutput sparse_attention_kv(const CsrView& in_csr, const Tensor& q, const Tensor& kv, float scale) {
  const char* op = "sparse_attention_kv";
  const AttentionDims d = check_attention_kv(in_csr, q, kv, op);
  if (!kv.device().is_cpu()) {
    const std::vector<Tensor> parts = unpack_parts(kv);
    return sparse_attention(in_csr, q, parts[0], parts[1], scale);
  }
  TOPO_PROFILE(Sparse);
  AttentionOutput result{Tensor::empty({in_csr.num_rows, d.heads, d.dv}), Tensor::empty({in_csr.num_rows, d.heads})};
  const float* base = kv.data<float>();
  forward_cpu(in_csr, d, scale, q.data<float>(), base, base + d.heads * d.dk, result);
  return result;
}

AttentionKvGrads sparse_attention_kv_backward(const CsrView& in_csr, const CsrView& out_csr, const Tensor& q,
                                              const Tensor& kv, const AttentionOutput& forward, const Tensor& grad_out,
                                              float scale) {
  const char* op = "sparse_attention_kv_backward";
  const AttentionDims d = check_attention_kv(in_csr, q, kv, op);
  if (!kv.device().is_cpu()) {
    const std::vector<Tensor> parts = unpack_parts(kv);
    const AttentionGrads g = sparse_attention_backward(in_csr, out_csr, q, parts[0], parts[1], forward, grad_out, scale);
    return {g.dq, pack_parts({g.dk, g.dv})};
  }
  TOPO_PROFILE(Sparse);
  check_backward(in_csr, out_csr, q, forward, grad_out, op);
  AttentionKvGrads g{Tensor::empty(q.shape()), Tensor::empty(kv.shape())};
  const float* base = kv.data<float>();
  float* dbase = g.dkv.data<float>();
  const std::int64_t width = d.heads * d.dk;
  backward_cpu(in_csr, out_csr, d, scale, q.data<float>(), base, base + width, forward, grad_out, g.dq.data<float>(),
               dbase, dbase + width);
  return g;
}

}  // namespace topo
