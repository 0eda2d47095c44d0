#include "kernels/profile.hpp"
#include "kernels/sparse/sddmm.hpp"

#include "kernels/dispatch.hpp"
#include "kernels/sparse/bcast.hpp"
#include "kernels/sparse/csr_checks.hpp"
#include "kernels/sparse/index_dispatch.hpp"
#include "kernels/sparse/row_partition.hpp"

namespace topo {
namespace {

std::int64_t target_rows(Target t, const CsrView& csr) {
  return t == Target::U ? csr.num_cols : t == Target::V ? csr.num_rows : csr.nnz();
}
const char* target_name(Target t) { return t == Target::U ? "u" : t == Target::V ? "v" : "e"; }

template <class Id>
void sddmm_rows_cpu(SddmmOp op, const Id* indptr, const Id* indices, const Id* eids, std::int64_t begin,
                    std::int64_t end, const float* lhs, const float* rhs, Target lt, Target rt, const BcastView& b,
                    float* out) {
  const std::int64_t len = b.out_len, k = b.reduce_len;
  for (std::int64_t v = begin; v < end; ++v) {
    for (std::int64_t j = indptr[v]; j < indptr[v + 1]; ++j) {
      const std::int64_t u = indices[j], e = eids[j];
      const float* l = lhs ? lhs + target_row(lt, u, v, e) * b.lhs_len : nullptr;
      const float* r = rhs ? rhs + target_row(rt, u, v, e) * b.rhs_len : nullptr;
      float* o = out + e * len;
      if (op == SddmmOp::Dot) {
        for (std::int64_t f = 0; f < len; ++f) {
          const float* lf = l + bcast_lhs(b, f);
          const float* rf = r + bcast_rhs(b, f);
          float s = 0.f;
#pragma omp simd reduction(+ : s)
          for (std::int64_t i = 0; i < k; ++i) s += lf[i] * rf[i];
          o[f] = s;
        }
      } else {
        // The unused operand of CopyLhs/CopyRhs is never dereferenced by sddmm_element.
        for (std::int64_t f = 0; f < len; ++f)
          o[f] = sddmm_element(op, l ? l + bcast_lhs(b, f) : nullptr, r ? r + bcast_rhs(b, f) : nullptr, 1);
      }
    }
  }
}

}  // namespace

Tensor gsddmm(SddmmOp op, const CsrView& in_csr, const Tensor& lhs, const Tensor& rhs, Target lhs_target,
              Target rhs_target) {
  TOPO_PROFILE(Sparse);
  const bool use_l = sddmm_uses_lhs(op), use_r = sddmm_uses_rhs(op);
  const Device device = use_l ? lhs.device() : rhs.device();
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
                                   sddmm_rows_cpu<Id>(op, indptr, indices, eids, b, e, lp, rp, lhs_target, rhs_target,
                                                      view, o);
                                 }),
                   cuda::gsddmm(op, indptr, indices, eids, in_csr.num_rows, lp, rp, lhs_target, rhs_target, view, o));
  });
  return out;
}

}  // namespace topo
