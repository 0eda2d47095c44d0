#include "kernels/sparse/gat_attention.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/dense/random.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/profile.hpp"
#include "kernels/sparse/attention_math.hpp"
#include "kernels/sparse/csr_checks.hpp"
#include "kernels/sparse/index_dispatch.hpp"
#include "kernels/sparse/row_partition.hpp"
#include "kernels/sparse/simd_rows.hpp"

namespace topo {
namespace {

struct GatDims {
  std::int64_t heads, features;
};

// A row's per-edge, per-head floats ([degree][H]): one buffer per thread, grown to the largest row it meets,
// so the parallel loops allocate only while the buffer grows.
float* row_scratch(std::int64_t count) {
  thread_local std::vector<float> buffer;
  if (static_cast<std::int64_t>(buffer.size()) < count) buffer.resize(static_cast<std::size_t>(count));
  return buffer.data();
}

// out[j H + h] = a(j)[h F ..] . b(j)[h F ..] over F floats for the nj x H (edge, head) pairs of a row: four pairs
// at a time through simd::dot4 (four independent chains, one horizontal reduction), so the row's gathered
// rows are all in flight together. The per-edge math is left to flat loops after it: interleaving it (8 heads of
// exp and LeakyReLU per edge) left the backward waiting on one gathered row at a time.
template <class RowA, class RowB>
void pair_dots(std::int64_t nj, RowA&& a, RowB&& b, std::int64_t heads, std::int64_t features, float* out) {
  const std::int64_t pairs = nj * heads;
  std::int64_t j = 0, h = 0;
  auto next = [&](const float*& l, const float*& r) {
    l = a(j) + h * features;
    r = b(j) + h * features;
    if (++h == heads) h = 0, ++j;
  };
  std::int64_t k = 0;
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
  for (; k + 4 <= pairs; k += 4) {
    const float *l[4], *r[4];
    for (int q = 0; q < 4; ++q) next(l[q], r[q]);
    simd::dot4(l, r, features, out + k);
  }
#endif
  for (; k < pairs; ++k) {
    const float *l, *r;
    next(l, r);
    out[k] = simd::dot(l, r, features);
  }
}

// keep[j H + h] for the row's edges (eids[j]); all 1 without dropout. Edge e's H mask elements are
// offset + e H .. offset + e H + H - 1: lanes (offset + e H) & 3 onwards of consecutive Philox blocks. Each edge's
// blocks are queued side by side, up to kPhiloxBatch blocks drawn at once (philox_batch; a short row only what it
// needs), and then the edge's H words are one contiguous run of the batch's words. Edges wider than a batch
// (H > 61) draw element by element.
template <class Id>
void row_keeps(const GatDropout& drop, const Id* eids, std::int64_t nj, std::int64_t heads, float* keep) {
  if (drop.p == 0.f) {
    std::fill(keep, keep + nj * heads, 1.f);
    return;
  }
  const auto H = static_cast<std::uint64_t>(heads);
  if (H > 4 * kPhiloxBatch - 3) {
    for (std::int64_t j = 0; j < nj; ++j)
      for (std::uint64_t h = 0; h < H; ++h)
        keep[j * heads + static_cast<std::int64_t>(h)] = gat_keep(drop, static_cast<std::uint64_t>(eids[j]) * H + h);
    return;
  }
  std::uint64_t blocks[kPhiloxBatch];
  Philox4 words[kPhiloxBatch];
  std::int64_t batch_begin = 0;  // the first edge whose blocks are queued
  int queued = 0;
  auto draw = [&](std::int64_t batch_end) {
    philox_batch(blocks, kStreamUniform, drop.seed, words, queued);
    const std::uint32_t* flat = &words[0].v[0];
    int at = 0;  // the block where the edge's run starts
    for (std::int64_t j = batch_begin; j < batch_end; ++j) {
      const std::uint64_t first = drop.offset + static_cast<std::uint64_t>(eids[j]) * H;
      const std::uint32_t* run = flat + 4 * at + (first & 3);
      float* kj = keep + j * heads;
#pragma omp simd
      for (std::int64_t h = 0; h < heads; ++h) kj[h] = dropout_apply(1.f, bits_to_unit(run[h]), drop.p, drop.scale);
      at += static_cast<int>(((first + H - 1) >> 2) - (first >> 2) + 1);
    }
    batch_begin = batch_end;
    queued = 0;
  };
  for (std::int64_t j = 0; j < nj; ++j) {
    const std::uint64_t first = drop.offset + static_cast<std::uint64_t>(eids[j]) * H;
    const std::uint64_t b0 = first >> 2, count = ((first + H - 1) >> 2) - b0 + 1;
    if (queued + static_cast<int>(count) > kPhiloxBatch) draw(j);
    for (std::uint64_t b = 0; b < count; ++b) blocks[queued++] = b0 + b;
  }
  if (queued > 0) draw(nj);
}

// Forward, one destination row t: the scores of its in-edges w[j H + h], per head their max and exps, then the
// normalised (and dropped-out) weights times the source rows. A row's arithmetic depends only on its own edges.
template <class Id>
void forward_row(const Id* indptr, const Id* indices, const Id* eids, std::int64_t t, GatDims d, float slope,
                 const GatDropout& drop, const float* el, const float* er, const float* z, float* out, float* lse) {
  const std::int64_t H = d.heads, F = d.features, j0 = indptr[t], nj = static_cast<std::int64_t>(indptr[t + 1]) - j0;
  float* o = out + t * H * F;
  float* lt = lse + t * H;
  if (nj == 0) {
    std::fill(o, o + H * F, 0.f);
    std::fill(lt, lt + H, -INFINITY);
    return;
  }
  const Id* idx = indices + j0;
  const float* ert = er + t * H;
  float* w = row_scratch(2 * nj * H + 2 * H);
  float *keep = w + nj * H, *m = keep + nj * H, *inv = m + H;
  std::fill(m, m + H, -INFINITY);
  std::fill(inv, inv + H, 0.f);
  for (std::int64_t j = 0; j < nj; ++j) {  // the source rows the weighted sum reads are asked for meanwhile
    const std::int64_t u = idx[j];
    simd::prefetch_row(z + u * H * F, H * F);
    const float* elu = el + u * H;
    float* wj = w + j * H;
#pragma omp simd
    for (std::int64_t h = 0; h < H; ++h) {
      wj[h] = gat_leaky(elu[h] + ert[h], slope);
      m[h] = wj[h] > m[h] ? wj[h] : m[h];
    }
  }
  for (std::int64_t j = 0; j < nj; ++j) {  // inv holds the sums until they are inverted
    float* wj = w + j * H;
#pragma omp simd
    for (std::int64_t h = 0; h < H; ++h) {
      wj[h] = exp_approx(wj[h] - m[h]);
      inv[h] += wj[h];
    }
  }
  for (std::int64_t h = 0; h < H; ++h) {
    lt[h] = online_softmax_lse(m[h], inv[h]);
    inv[h] = 1.f / inv[h];  // the sum is >= 1: the max's own term is exp(0)
  }
  row_keeps(drop, eids + j0, nj, H, keep);
  for (std::int64_t j = 0; j < nj; ++j) {
    float *wj = w + j * H, *kj = keep + j * H;
#pragma omp simd
    for (std::int64_t h = 0; h < H; ++h) wj[h] *= inv[h] * kj[h];
  }
  simd::accumulate_rows(
      nj, [&](std::int64_t j) { return z + static_cast<std::int64_t>(idx[j]) * H * F; },
      [&](std::int64_t j, std::int64_t h) { return w[j * H + h]; }, H, F, o);
}

// Backward, destination pass, row t: per head D = sum_e a_e keep_e dot_e (dot_e = g_t . z_u), and
// der_t = sum_e a_e (keep_e dot_e - D) LeakyReLU'(x_e) taken as A - D B with A = sum a keep dot LeakyReLU' and
// B = sum a LeakyReLU', so one pass over the edges suffices. Phases: the scores (the source rows prefetched
// meanwhile), the gathered dot products, the masks, one flat vectorized loop of exps, then the per-head sums.
template <class Id>
void backward_dst_row(const Id* indptr, const Id* indices, const Id* eids, std::int64_t t, GatDims d, float slope,
                      const GatDropout& drop, const float* el, const float* er, const float* z, const float* lse,
                      const float* dout, float* row_term, float* der) {
  const std::int64_t H = d.heads, F = d.features, j0 = indptr[t], nj = static_cast<std::int64_t>(indptr[t + 1]) - j0,
                     n = nj * H;
  float* dot = row_scratch(4 * n + 3 * H);
  float *s = dot + n, *lg = s + n, *keep = lg + n, *A = keep + n, *B = A + H, *D = B + H;
  const Id* idx = indices + j0;
  const float *ert = er + t * H, *lt = lse + t * H, *gt = dout + t * H * F;
  for (std::int64_t j = 0; j < nj; ++j) {  // the source rows pair_dots reads are asked for meanwhile
    const std::int64_t u = idx[j];
    simd::prefetch_row(z + u * H * F, H * F);
    const float* elu = el + u * H;
    float *sj = s + j * H, *lj = lg + j * H;
#pragma omp simd
    for (std::int64_t h = 0; h < H; ++h) {
      const float x = elu[h] + ert[h];
      sj[h] = gat_leaky(x, slope) - lt[h];
      lj[h] = gat_leaky_grad(x, slope);
    }
  }
  pair_dots(
      nj, [&](std::int64_t) { return gt; }, [&](std::int64_t j) { return z + static_cast<std::int64_t>(idx[j]) * H * F; },
      H, F, dot);
  row_keeps(drop, eids + j0, nj, H, keep);
#pragma omp simd
  for (std::int64_t k = 0; k < n; ++k) {  // s <- a LeakyReLU', dot <- a keep dot, lg <- a keep dot LeakyReLU'
    const float a = exp_approx(s[k]), ad = a * keep[k] * dot[k];
    s[k] = a * lg[k];
    dot[k] = ad;
    lg[k] = ad * lg[k];
  }
  std::fill(A, A + 3 * H, 0.f);
  for (std::int64_t j = 0; j < nj; ++j) {
#pragma omp simd
    for (std::int64_t h = 0; h < H; ++h) {
      A[h] += lg[j * H + h];
      B[h] += s[j * H + h];
      D[h] += dot[j * H + h];
    }
  }
  for (std::int64_t h = 0; h < H; ++h) {
    row_term[t * H + h] = D[h];
    der[t * H + h] = A[h] - D[h] * B[h];
  }
}

// Backward, source pass over the reverse CSR, row u: del_u = sum_e dx_e, dz_u = sum_e a'_e g_v, the latter as
// gspmm's register-blocked weighted sum of the destinations' gradient rows. Phases as in the destination pass.
template <class Id>
void backward_src_row(const Id* indptr, const Id* indices, const Id* eids, std::int64_t u, GatDims d, float slope,
                      const GatDropout& drop, const float* el, const float* er, const float* z, const float* lse,
                      const float* dout, const float* row_term, float* del, float* dz) {
  const std::int64_t H = d.heads, F = d.features, j0 = indptr[u], nj = static_cast<std::int64_t>(indptr[u + 1]) - j0,
                     n = nj * H;
  float* dot = row_scratch(5 * n + H);
  float *s = dot + n, *lg = s + n, *keep = lg + n, *rt = keep + n, *dl = rt + n;
  const Id* idx = indices + j0;
  const float *elu = el + u * H, *zu = z + u * H * F;
  for (std::int64_t j = 0; j < nj; ++j) {  // the gradient rows pair_dots reads are asked for meanwhile
    const std::int64_t v = idx[j];
    simd::prefetch_row(dout + v * H * F, H * F);
    const float *erv = er + v * H, *lv = lse + v * H, *Dv = row_term + v * H;
    float *sj = s + j * H, *lj = lg + j * H, *rj = rt + j * H;
#pragma omp simd
    for (std::int64_t h = 0; h < H; ++h) {
      const float x = elu[h] + erv[h];
      sj[h] = gat_leaky(x, slope) - lv[h];
      lj[h] = gat_leaky_grad(x, slope);
      rj[h] = Dv[h];
    }
  }
  pair_dots(
      nj, [&](std::int64_t j) { return dout + static_cast<std::int64_t>(idx[j]) * H * F; },
      [&](std::int64_t) { return zu; }, H, F, dot);
  row_keeps(drop, eids + j0, nj, H, keep);
#pragma omp simd
  for (std::int64_t k = 0; k < n; ++k) {  // s <- the weight a keep of g_v in dz, dot <- dx
    const float a = exp_approx(s[k]);
    dot[k] = gat_score_grad(a, keep[k], dot[k], rt[k], lg[k]);
    s[k] = a * keep[k];
  }
  std::fill(dl, dl + H, 0.f);
  for (std::int64_t j = 0; j < nj; ++j) {
#pragma omp simd
    for (std::int64_t h = 0; h < H; ++h) dl[h] += dot[j * H + h];
  }
  std::copy(dl, dl + H, del + u * H);
  simd::accumulate_rows(
      nj, [&](std::int64_t j) { return dout + static_cast<std::int64_t>(idx[j]) * H * F; },
      [&](std::int64_t j, std::int64_t h) { return s[j * H + h]; }, H, F, dz + u * H * F);
}

// el [rows, H] or [rows, H, 1] (GATConv's keepdim sums).
void check_node_scores(const Tensor& t, std::int64_t rows, std::int64_t heads, Device device, const char* op,
                       const char* what) {
  check_rows(t, rows, device, op, what);
  TOPO_CHECK(t.ndim() >= 2 && t.size(1) == heads && t.numel() == rows * heads,
             "{}: {} {} must be [{}, {}] (or [{}, {}, 1])", op, what, t.str(), rows, heads, rows, heads);
}

GatDims check_gat(const CsrView& in_csr, const Tensor& el, const Tensor& er, const Tensor& z, const GatDropout& drop,
                  const char* op) {
  const Device device = z.device();
  check_csr(in_csr, device, op);
  check_rows(z, in_csr.num_cols, device, op, "z");
  TOPO_CHECK(z.ndim() == 3, "{}: z must be [sources, heads, features], got {}", op, z.str());
  check_node_scores(el, in_csr.num_cols, z.size(1), device, op, "el");
  check_node_scores(er, in_csr.num_rows, z.size(1), device, op, "er");
  TOPO_CHECK(drop.p >= 0.f && drop.p < 1.f, "{}: attention dropout must be in [0, 1), got {}", op, drop.p);
  return GatDims{z.size(1), z.size(2)};
}

void forward_cpu(const CsrView& in_csr, GatDims d, float slope, const GatDropout& drop, const float* el,
                 const float* er, const float* z, GatAttentionOutput& result) {
  float *op = result.out.data<float>(), *lp = result.lse.data<float>();
  TOPO_DISPATCH_INDEX(in_csr.dtype(), Id, {
    const Id *indptr = in_csr.indptr.data<Id>(), *indices = in_csr.indices.data<Id>(), *eids = in_csr.eids.data<Id>();
    parallel_rows(indptr, in_csr.num_rows, d.heads * d.features, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t t = b; t < e; ++t)
        forward_row(indptr, indices, eids, t, d, slope, drop, el, er, z, op, lp);
    });
  });
}

void backward_cpu(const CsrView& in_csr, const CsrView& out_csr, GatDims d, float slope, const GatDropout& drop,
                  const float* el, const float* er, const float* z, const float* lse, const float* dout,
                  float* row_term, GatAttentionGrads& g) {
  float *del = g.del.data<float>(), *der = g.der.data<float>(), *dz = g.dz.data<float>();
  TOPO_DISPATCH_INDEX(in_csr.dtype(), Id, {
    const Id *in_ptr = in_csr.indptr.data<Id>(), *in_idx = in_csr.indices.data<Id>(), *in_eid = in_csr.eids.data<Id>();
    const Id *out_ptr = out_csr.indptr.data<Id>(), *out_idx = out_csr.indices.data<Id>(),
             *out_eid = out_csr.eids.data<Id>();
    parallel_rows(in_ptr, in_csr.num_rows, d.heads * d.features, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t t = b; t < e; ++t)
        backward_dst_row(in_ptr, in_idx, in_eid, t, d, slope, drop, el, er, z, lse, dout, row_term, der);
    });
    parallel_rows(out_ptr, out_csr.num_rows, d.heads * d.features, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t u = b; u < e; ++u)
        backward_src_row(out_ptr, out_idx, out_eid, u, d, slope, drop, el, er, z, lse, dout, row_term, del, dz);
    });
  });
}

#if TOPO_WITH_CUDA
void forward_cuda(const CsrView& in_csr, GatDims d, float slope, const GatDropout& drop, const float* el,
                  const float* er, const float* z, GatAttentionOutput& result) {
  TOPO_DISPATCH_INDEX(in_csr.dtype(), Id, {
    cuda::gat_attention(in_csr.indptr.data<Id>(), in_csr.indices.data<Id>(), in_csr.eids.data<Id>(), in_csr.num_rows,
                        d.heads, d.features, slope, drop, el, er, z, result.out.data<float>(),
                        result.lse.data<float>());
  });
}

void backward_cuda(const CsrView& in_csr, const CsrView& out_csr, GatDims d, float slope, const GatDropout& drop,
                   const float* el, const float* er, const float* z, const float* lse, const float* dout,
                   float* row_term, GatAttentionGrads& g) {
  float *del = g.del.data<float>(), *der = g.der.data<float>(), *dz = g.dz.data<float>();
  TOPO_DISPATCH_INDEX(in_csr.dtype(), Id, {
    cuda::gat_attention_backward_dst(in_csr.indptr.data<Id>(), in_csr.indices.data<Id>(), in_csr.eids.data<Id>(),
                                     in_csr.num_rows, d.heads, d.features, slope, drop, el, er, z, lse, dout, row_term,
                                     der);
    cuda::gat_attention_backward_src(out_csr.indptr.data<Id>(), out_csr.indices.data<Id>(), out_csr.eids.data<Id>(),
                                     out_csr.num_rows, d.heads, d.features, slope, drop, el, er, z, lse, dout, row_term,
                                     del, dz);
  });
}
#endif

}  // namespace

GatAttentionOutput gat_attention(const CsrView& in_csr, const Tensor& el, const Tensor& er, const Tensor& z,
                                 float negative_slope, const GatDropout& drop) {
  TOPO_PROFILE(Sparse);
  const GatDims d = check_gat(in_csr, el, er, z, drop, "gat_attention");
  const Device device = z.device();
  GatAttentionOutput result{Tensor::empty({in_csr.num_rows, d.heads, d.features}, DType::F32, device),
                            Tensor::empty({in_csr.num_rows, d.heads}, DType::F32, device)};
  const float *elp = el.data<float>(), *erp = er.data<float>(), *zp = z.data<float>();
  TOPO_ON_DEVICE(device, forward_cpu(in_csr, d, negative_slope, drop, elp, erp, zp, result),
                 forward_cuda(in_csr, d, negative_slope, drop, elp, erp, zp, result));
  return result;
}

GatAttentionGrads gat_attention_backward(const CsrView& in_csr, const CsrView& out_csr, const Tensor& el,
                                         const Tensor& er, const Tensor& z, const GatAttentionOutput& forward,
                                         const Tensor& grad_out, float negative_slope, const GatDropout& drop) {
  TOPO_PROFILE(Sparse);
  const char* op = "gat_attention_backward";
  const GatDims d = check_gat(in_csr, el, er, z, drop, op);
  const Device device = z.device();
  check_reverse_csr(in_csr, out_csr, device, op);
  const Tensor& lse = forward.lse;
  check_rows(lse, in_csr.num_rows, device, op, "lse");
  TOPO_CHECK(lse.numel() == in_csr.num_rows * d.heads, "{}: lse {} must be [{}, {}]", op, lse.str(), in_csr.num_rows,
             d.heads);
  check_rows(grad_out, in_csr.num_rows, device, op, "grad_out");
  TOPO_CHECK(grad_out.numel() == in_csr.num_rows * d.heads * d.features, "{}: grad_out {} must be [{}, {}, {}]", op,
             grad_out.str(), in_csr.num_rows, d.heads, d.features);
  GatAttentionGrads g{Tensor::empty(el.shape(), DType::F32, device), Tensor::empty(er.shape(), DType::F32, device),
                      Tensor::empty(z.shape(), DType::F32, device)};
  Tensor row_term = Tensor::empty({in_csr.num_rows, d.heads}, DType::F32, device);  // D_v, node-sized
  const float *elp = el.data<float>(), *erp = er.data<float>(), *zp = z.data<float>(), *lp = lse.data<float>(),
              *gp = grad_out.data<float>();
  float* rt = row_term.data<float>();
  TOPO_ON_DEVICE(device, backward_cpu(in_csr, out_csr, d, negative_slope, drop, elp, erp, zp, lp, gp, rt, g),
                 backward_cuda(in_csr, out_csr, d, negative_slope, drop, elp, erp, zp, lp, gp, rt, g));
  return g;
}

}  // namespace topo
