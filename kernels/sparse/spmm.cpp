#include "kernels/sparse/spmm.hpp"

#include "kernels/profile.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/sparse/bcast.hpp"
#include "kernels/sparse/csr_checks.hpp"
#include "kernels/sparse/index_dispatch.hpp"
#include "kernels/sparse/row_partition.hpp"

namespace topo {
namespace {

// One destination row: accumulate straight into the output row (no scratch), then finish.
// kTrack: record arg indices (max/min).
// When the edge operand holds one scalar per `chunk` consecutive node features (attention weights [E, H, 1]
// against values [N, H, D]: chunk = D) and the node operand is not broadcast, returns chunk; else 0.
std::int64_t per_chunk_edge_scalar(const FeatureBcast& bc) {
  const BcastView& b = bc.view;
  if (bc.rhs_off.empty() || b.rhs_len == 0 || b.out_len % b.rhs_len != 0 || b.lhs_len != b.out_len) return 0;
  const std::int64_t chunk = b.out_len / b.rhs_len;
  for (std::int64_t f = 0; f < b.out_len; ++f)
    if (bc.lhs_off[f] != f || bc.rhs_off[f] != f / chunk) return 0;
  return chunk;
}

template <class Id, bool kTrack>
void spmm_rows_cpu(MessageOp op, SpmmReduce reduce, const Id* indptr, const Id* indices, const Id* eids,
                   std::int64_t begin, std::int64_t end, const float* ufeat, const float* efeat, const BcastView& b,
                   std::int64_t chunk, float* out, std::int64_t* arg_u, std::int64_t* arg_e) {
  const std::int64_t len = b.out_len;
  const float identity = reduce_identity(reduce);
  const bool plain = b.lhs_off == nullptr && b.rhs_off == nullptr;
  for (std::int64_t v = begin; v < end; ++v) {
    float* o = out + v * len;
    std::int64_t* au = kTrack ? arg_u + v * len : nullptr;
    std::int64_t* ae = kTrack ? arg_e + v * len : nullptr;
    for (std::int64_t f = 0; f < len; ++f) o[f] = identity;
    if constexpr (kTrack) {
      for (std::int64_t f = 0; f < len; ++f) au[f] = ae[f] = -1;
    }
    const std::int64_t row_begin = indptr[v], row_end = indptr[v + 1];
    for (std::int64_t k = row_begin; k < row_end; ++k) {
      const std::int64_t u = indices[k], e = eids[k];
      const float* ur = ufeat ? ufeat + u * b.lhs_len : nullptr;
      const float* er = efeat ? efeat + e * b.rhs_len : nullptr;
      if (!kTrack && plain && reduce != SpmmReduce::Max && reduce != SpmmReduce::Min) {
        // The hot case (sum/mean, no broadcasting): a contiguous loop the compiler vectorizes.
        if (op == MessageOp::CopyU) {
#pragma omp simd
          for (std::int64_t f = 0; f < len; ++f) o[f] += ur[f];
        } else if (op == MessageOp::UMulE) {
#pragma omp simd
          for (std::int64_t f = 0; f < len; ++f) o[f] += ur[f] * er[f];
        } else {
          for (std::int64_t f = 0; f < len; ++f) o[f] += message(op, ur ? ur[f] : 0.f, er ? er[f] : 0.f);
        }
        continue;
      }
      if (!kTrack && chunk > 0 && op == MessageOp::UMulE && reduce != SpmmReduce::Max && reduce != SpmmReduce::Min) {
        // Weighted sum with one weight per head: contiguous D-long loops (the attention-weights case).
        for (std::int64_t h = 0; h < b.rhs_len; ++h) {
          const float w = er[h];
          float* oh = o + h * chunk;
          const float* uh = ur + h * chunk;
#pragma omp simd
          for (std::int64_t f = 0; f < chunk; ++f) oh[f] += uh[f] * w;
        }
        continue;
      }
      for (std::int64_t f = 0; f < len; ++f) {
        const float m = message(op, ur ? ur[bcast_lhs(b, f)] : 0.f, er ? er[bcast_rhs(b, f)] : 0.f);
        if (reduce_fold(reduce, o[f], m) && kTrack) {
          au[f] = u;
          ae[f] = e;
        }
      }
    }
    const std::int64_t degree = row_end - row_begin;
    for (std::int64_t f = 0; f < len; ++f) o[f] = reduce_finish(reduce, o[f], degree);
  }
}

}  // namespace

SpmmOutput gspmm(MessageOp op, SpmmReduce reduce, const CsrView& in_csr, const Tensor& ufeat, const Tensor& efeat) {
  TOPO_PROFILE(Sparse);
  const bool use_u = message_uses_u(op), use_e = message_uses_e(op);
  const Device device = use_u ? ufeat.device() : efeat.device();
  check_csr(in_csr, device, "gspmm");
  if (use_u) check_rows(ufeat, in_csr.num_cols, device, "gspmm", "ufeat");
  if (use_e) check_rows(efeat, in_csr.nnz(), device, "gspmm", "efeat");

  FeatureBcast bc;
  feature_bcast(use_u ? row_shape(ufeat) : row_shape(efeat), use_e ? row_shape(efeat) : row_shape(ufeat), false,
                "gspmm", bc);
  Shape out_shape = {in_csr.num_rows};
  out_shape.insert(out_shape.end(), bc.out_shape.begin(), bc.out_shape.end());

  SpmmOutput result;
  result.out = Tensor::empty(out_shape, DType::F32, device);
  const bool track = reduce == SpmmReduce::Max || reduce == SpmmReduce::Min;
  if (track) {
    result.arg_u = Tensor::empty(out_shape, DType::I64, device);
    result.arg_e = Tensor::empty(out_shape, DType::I64, device);
  }
  Tensor offsets_holder;
  const BcastView view = bcast_view_on(bc, device, offsets_holder);
  const std::int64_t chunk = use_u && use_e ? per_chunk_edge_scalar(bc) : 0;
  const float* up = use_u ? ufeat.data<float>() : nullptr;
  const float* ep = use_e ? efeat.data<float>() : nullptr;
  float* op_out = result.out.data<float>();
  std::int64_t* au = track ? result.arg_u.data<std::int64_t>() : nullptr;
  std::int64_t* ae = track ? result.arg_e.data<std::int64_t>() : nullptr;

  TOPO_DISPATCH_INDEX(in_csr.dtype(), Id, {
    const Id* indptr = in_csr.indptr.data<Id>();
    const Id* indices = in_csr.indices.data<Id>();
    const Id* eids = in_csr.eids.data<Id>();
    TOPO_ON_DEVICE(
        device,
        parallel_rows(indptr, in_csr.num_rows, view.out_len,
                      [&](std::int64_t b, std::int64_t e) {
                        if (track)
                          spmm_rows_cpu<Id, true>(op, reduce, indptr, indices, eids, b, e, up, ep, view, chunk, op_out,
                                                  au, ae);
                        else
                          spmm_rows_cpu<Id, false>(op, reduce, indptr, indices, eids, b, e, up, ep, view, chunk, op_out,
                                                   au, ae);
                      }),
        cuda::gspmm(op, reduce, indptr, indices, eids, in_csr.num_rows, up, ep, view, op_out, au, ae));
  });
  return result;
}

}  // namespace topo
