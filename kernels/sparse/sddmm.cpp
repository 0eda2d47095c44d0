#include "kernels/sparse/sddmm.hpp"

#include <algorithm>

#include "kernels/profile.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/sparse/bcast.hpp"
#include "kernels/sparse/csr_checks.hpp"
#include "kernels/sparse/index_dispatch.hpp"
#include "kernels/sparse/row_partition.hpp"
#include "kernels/sparse/simd_rows.hpp"

namespace topo {
namespace {

std::int64_t target_rows(Target t, const CsrView& csr) {
  return t == Target::U ? csr.num_cols : t == Target::V ? csr.num_rows : csr.nnz();
}
const char* target_name(Target t) { return t == Target::U ? "u" : t == Target::V ? "v" : "e"; }

// The readable reference: per edge, per output element, the broadcast offsets and sddmm_element (Dot: a
// scalar loop over the reduced dim). Kept for gsddmm_reference, which the tests hold the fast path to.
template <class Id>
void sddmm_rows_reference(SddmmOp op, const Id* indptr, const Id* indices, const Id* eids, std::int64_t begin,
                          std::int64_t end, const float* lhs, const float* rhs, Target lt, Target rt,
                          const BcastView& b, float* out) {
  for (std::int64_t v = begin; v < end; ++v) {
    for (std::int64_t j = indptr[v]; j < indptr[v + 1]; ++j) {
      const std::int64_t u = indices[j], e = eids[j];
      const float* l = lhs ? lhs + target_row(lt, u, v, e) * b.lhs_len : nullptr;
      const float* r = rhs ? rhs + target_row(rt, u, v, e) * b.rhs_len : nullptr;
      float* o = out + e * b.out_len;
      // The unused operand of CopyLhs/CopyRhs is never dereferenced by sddmm_element.
      for (std::int64_t f = 0; f < b.out_len; ++f)
        o[f] = sddmm_element(op, l ? l + bcast_lhs(b, f) : nullptr, r ? r + bcast_rhs(b, f) : nullptr, b.reduce_len);
    }
  }
}

// Fetches the newest source row of destination v + simd::kPrefetchRows when an operand is read at U: on window and
// ring topologies with sorted in-edges it is the one row the rows just done did not bring into cache.
template <class Id>
void prefetch_ahead(const Id* indptr, const Id* indices, std::int64_t v, std::int64_t end, const float* feat,
                    std::int64_t len) {
  const std::int64_t w = v + simd::kPrefetchRows;
  if (feat != nullptr && w < end && indptr[w + 1] > indptr[w])
    simd::prefetch_row(feat + static_cast<std::int64_t>(indices[indptr[w + 1] - 1]) * len, len);
}

// The attention score with one operand per destination (target V) and the other per source or edge: per
// destination row and head, the destination's head slice against each in-edge's slice (simd::dots_with: with
// AVX-512 and k <= 64 the slice stays in registers and four edges go at once). Against the pairwise path this
// halves the loads per FMA and keeps four chains in flight.
template <class Id>
void sddmm_dot_rows_v(const Id* indptr, const Id* indices, const Id* eids, std::int64_t begin, std::int64_t end,
                      const float* vfeat, std::int64_t vlen, const float* other, std::int64_t olen, Target ot,
                      std::int64_t heads, std::int64_t k, float* out) {
  for (std::int64_t v = begin; v < end; ++v) {
    if (ot == Target::U) prefetch_ahead(indptr, indices, v, end, other, olen);
    const std::int64_t row_begin = indptr[v], nj = indptr[v + 1] - row_begin;
    for (std::int64_t h = 0; h < heads; ++h) {
      simd::dots_with(
          vfeat + v * vlen + h * k, k, nj,
          [&](std::int64_t j) {
            const std::int64_t at = row_begin + j;
            return other + target_row(ot, static_cast<std::int64_t>(indices[at]), v, static_cast<std::int64_t>(eids[at])) * olen + h * k;
          },
          [&](std::int64_t j, float s) { out[static_cast<std::int64_t>(eids[row_begin + j]) * heads + h] = s; });
    }
  }
}

// Dot without broadcasting (the attention score q_v . k_u: both operands [*, H, D], out [E, H]), per
// destination row: the row's edge x head pairs are taken four at a time; each pair's D-long dot product
// is accumulated in one vector register (full vectors, one masked tail) and the four are reduced together
// by simd::hsum4, so the horizontal sums that dominated the per-pair loop cost a quarter as many shuffles.
// With AVX2 alone the same in 8-float vectors (simd::hsum4_8); otherwise simd::dot per pair.
template <class Id>
void sddmm_dot_rows(const Id* indptr, const Id* indices, const Id* eids, std::int64_t begin, std::int64_t end,
                    const float* lhs, const float* rhs, Target lt, Target rt, const BcastView& b, float* out) {
  const std::int64_t heads = b.out_len, k = b.reduce_len;
#if defined(__AVX512F__)
  if ((lt == Target::V) != (rt == Target::V) && k <= 4 * simd::kLanes) {
    const bool l_is_v = lt == Target::V;
    const float* vf = l_is_v ? lhs : rhs;
    const float* of = l_is_v ? rhs : lhs;
    const Target ot = l_is_v ? rt : lt;
    return sddmm_dot_rows_v(indptr, indices, eids, begin, end, vf, b.lhs_len, of, b.lhs_len, ot, heads, k, out);
  }
#endif
  const float* ahead = lt == Target::U ? lhs : rt == Target::U ? rhs : nullptr;
  const std::int64_t ahead_len = lt == Target::U ? b.lhs_len : b.rhs_len;
  for (std::int64_t v = begin; v < end; ++v) {
    prefetch_ahead(indptr, indices, v, end, ahead, ahead_len);
    const std::int64_t row_begin = indptr[v], pairs = (indptr[v + 1] - row_begin) * heads;
    // Operands and output slot of the next pair, walking edge j = row_begin.. and head h = 0..heads-1 in
    // order (a cursor: an integer division per pair cost more than its dot product).
    std::int64_t j = row_begin, h = 0;
    const float *lrow = nullptr, *rrow = nullptr;
    float* orow = nullptr;
    auto next = [&](const float*& l, const float*& r) -> float* {
      if (h == 0) {
        const std::int64_t u = indices[j], e = eids[j];
        lrow = lhs + target_row(lt, u, v, e) * b.lhs_len;
        rrow = rhs + target_row(rt, u, v, e) * b.rhs_len;
        orow = out + e * heads;
      }
      l = lrow + h * k;
      r = rrow + h * k;
      float* o = orow + h;
      if (++h == heads) h = 0, ++j;
      return o;
    };
    std::int64_t p = 0;
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
    for (; p + 4 <= pairs; p += 4) {
      const float *l[4], *r[4];
      float* o[4];
      for (int q = 0; q < 4; ++q) o[q] = next(l[q], r[q]);
      float s[4];
      simd::dot4(l, r, k, s);
      for (int q = 0; q < 4; ++q) *o[q] = s[q];
    }
#endif
    for (; p < pairs; ++p) {
      const float *l, *r;
      float* o = next(l, r);
      *o = simd::dot(l, r, k);
    }
  }
}

// Elementwise ops without broadcasting: one contiguous loop per edge, the op fixed at compile time so the
// loop vectorizes (the reference switches per element).
template <SddmmOp kOp, class Id>
void sddmm_elementwise_rows(const Id* indptr, const Id* indices, const Id* eids, std::int64_t begin, std::int64_t end,
                            const float* lhs, const float* rhs, Target lt, Target rt, const BcastView& b, float* out) {
  const std::int64_t len = b.out_len;
  const float* ahead = lt == Target::U && lhs ? lhs : rt == Target::U && rhs ? rhs : nullptr;
  for (std::int64_t v = begin; v < end; ++v) {
    prefetch_ahead(indptr, indices, v, end, ahead, len);
    for (std::int64_t j = indptr[v]; j < indptr[v + 1]; ++j) {
      const std::int64_t u = indices[j], e = eids[j];
      const float* l = lhs ? lhs + target_row(lt, u, v, e) * len : nullptr;
      const float* r = rhs ? rhs + target_row(rt, u, v, e) * len : nullptr;
      float* o = out + e * len;
      if constexpr (kOp == SddmmOp::CopyLhs) {
        std::copy(l, l + len, o);
      } else if constexpr (kOp == SddmmOp::CopyRhs) {
        std::copy(r, r + len, o);
      } else {
#pragma omp simd
        for (std::int64_t f = 0; f < len; ++f) o[f] = sddmm_element(kOp, l + f, r + f, 1);
      }
    }
  }
}

template <class Id>
void sddmm_rows_cpu(SddmmOp op, const Id* indptr, const Id* indices, const Id* eids, std::int64_t begin,
                    std::int64_t end, const float* lhs, const float* rhs, Target lt, Target rt, const BcastView& b,
                    float* out) {
  const bool plain = b.lhs_off == nullptr && b.rhs_off == nullptr;
  if (!plain) return sddmm_rows_reference(op, indptr, indices, eids, begin, end, lhs, rhs, lt, rt, b, out);
  auto run = [&]<SddmmOp kOp>() {
    sddmm_elementwise_rows<kOp>(indptr, indices, eids, begin, end, lhs, rhs, lt, rt, b, out);
  };
  switch (op) {
    case SddmmOp::Dot: return sddmm_dot_rows(indptr, indices, eids, begin, end, lhs, rhs, lt, rt, b, out);
    case SddmmOp::Add: return run.template operator()<SddmmOp::Add>();
    case SddmmOp::Sub: return run.template operator()<SddmmOp::Sub>();
    case SddmmOp::Mul: return run.template operator()<SddmmOp::Mul>();
    case SddmmOp::Div: return run.template operator()<SddmmOp::Div>();
    case SddmmOp::CopyLhs: return run.template operator()<SddmmOp::CopyLhs>();
    case SddmmOp::CopyRhs: return run.template operator()<SddmmOp::CopyRhs>();
  }
}

// Checks, output allocation and dispatch shared by gsddmm and gsddmm_reference; `cpu_rows` runs a range of
// destination rows on the CPU.
template <class CpuRows>
Tensor run_gsddmm(SddmmOp op, const CsrView& in_csr, const Tensor& lhs, const Tensor& rhs, Target lhs_target,
                  Target rhs_target, bool reference, CpuRows&& cpu_rows) {
  const bool use_l = sddmm_uses_lhs(op), use_r = sddmm_uses_rhs(op);
  const Device device = use_l ? lhs.device() : rhs.device();
  TOPO_CHECK(!reference || device.is_cpu(), "gsddmm_reference runs on the CPU only");
  check_csr(in_csr, device, "gsddmm");
  if (use_l) check_rows(lhs, target_rows(lhs_target, in_csr), device, "gsddmm", target_name(lhs_target));
  if (use_r) check_rows(rhs, target_rows(rhs_target, in_csr), device, "gsddmm", target_name(rhs_target));

  FeatureBcast bc;
  const Shape ls = use_l ? row_shape(lhs) : row_shape(rhs), rs = use_r ? row_shape(rhs) : row_shape(lhs);
  feature_bcast(ls, rs, op == SddmmOp::Dot, "gsddmm", bc);
  Shape out_shape = {in_csr.nnz()};
  out_shape.insert(out_shape.end(), bc.out_shape.begin(), bc.out_shape.end());
  Tensor out = Tensor::empty(out_shape, DType::F32, device);
  Tensor offsets_holder;
  const BcastView view = bcast_view_on(bc, device, offsets_holder);
  const float* lp = use_l ? lhs.data<float>() : nullptr;
  const float* rp = use_r ? rhs.data<float>() : nullptr;
  float* o = out.data<float>();

  TOPO_DISPATCH_INDEX(in_csr.dtype(), Id, {
    const Id* indptr = in_csr.indptr.data<Id>();
    const Id* indices = in_csr.indices.data<Id>();
    const Id* eids = in_csr.eids.data<Id>();
    TOPO_ON_DEVICE(device,
                   parallel_rows(indptr, in_csr.num_rows, view.out_len * view.reduce_len,
                                 [&](std::int64_t b, std::int64_t e) {
                                   cpu_rows(op, indptr, indices, eids, b, e, lp, rp, lhs_target, rhs_target, view, o);
                                 }),
                   cuda::gsddmm(op, indptr, indices, eids, in_csr.num_rows, lp, rp, lhs_target, rhs_target, view, o));
  });
  return out;
}

}  // namespace

Tensor gsddmm(SddmmOp op, const CsrView& in_csr, const Tensor& lhs, const Tensor& rhs, Target lhs_target,
              Target rhs_target) {
  TOPO_PROFILE(Sparse);
  return run_gsddmm(op, in_csr, lhs, rhs, lhs_target, rhs_target, false,
                    [](auto... args) { sddmm_rows_cpu(args...); });
}

Tensor gsddmm_reference(SddmmOp op, const CsrView& in_csr, const Tensor& lhs, const Tensor& rhs, Target lhs_target,
                        Target rhs_target) {
  return run_gsddmm(op, in_csr, lhs, rhs, lhs_target, rhs_target, true,
                    [](auto... args) { sddmm_rows_reference(args...); });
}

}  // namespace topo
