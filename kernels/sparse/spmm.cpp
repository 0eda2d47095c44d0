#include "kernels/sparse/spmm.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "kernels/profile.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/sparse/bcast.hpp"
#include "kernels/sparse/csr_checks.hpp"
#include "kernels/sparse/gather_prefetch.hpp"
#include "kernels/sparse/index_dispatch.hpp"
#include "kernels/sparse/row_partition.hpp"
#include "kernels/sparse/simd_rows.hpp"

namespace topo {
namespace {

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
                   std::int64_t chunk, bool scattered, float* out, std::int64_t* arg_u, std::int64_t* arg_e) {
  const std::int64_t len = b.out_len;
  const float identity = reduce_identity(reduce);
  const bool plain = b.lhs_off == nullptr && b.rhs_off == nullptr;
  const bool sums = reduce == SpmmReduce::Sum || reduce == SpmmReduce::Mean;
  for (std::int64_t v = begin; v < end; ++v) {
    float* o = out + v * len;
    std::int64_t* au = kTrack ? arg_u + v * len : nullptr;
    std::int64_t* ae = kTrack ? arg_e + v * len : nullptr;
    const std::int64_t row_begin = indptr[v], row_end = indptr[v + 1];
    if (!kTrack && sums && (op == MessageOp::CopyU ? plain : op == MessageOp::UMulE && chunk > 0)) {
      prefetch_sources_ahead(indptr, indices, v, end, scattered, ufeat, b.lhs_len, b.lhs_len);
      // The hot cases, through simd::accumulate_rows:
      // copy_u, and u_mul_e with one weight per head (attention weights [E, H, 1] against values [N, H, D]).
      const Id* src = indices + row_begin;
      const std::int64_t nj = row_end - row_begin;
      if (op == MessageOp::CopyU) {
        simd::accumulate_rows(
            nj, [&](std::int64_t j) { return ufeat + static_cast<std::int64_t>(src[j]) * len; },
            [](std::int64_t, std::int64_t) { return 1.f; }, 1, len, o);
      } else {
        const Id* edge = eids + row_begin;
        simd::accumulate_rows(
            nj, [&](std::int64_t j) { return ufeat + static_cast<std::int64_t>(src[j]) * len; },
            [&](std::int64_t j, std::int64_t h) { return efeat[static_cast<std::int64_t>(edge[j]) * b.rhs_len + h]; },
            b.rhs_len, chunk, o);
      }
      if (reduce == SpmmReduce::Mean && nj > 0)
        for (std::int64_t f = 0; f < len; ++f) o[f] /= static_cast<float>(nj);
      continue;
    }
    for (std::int64_t f = 0; f < len; ++f) o[f] = identity;
    if constexpr (kTrack) {
      for (std::int64_t f = 0; f < len; ++f) au[f] = ae[f] = -1;
      if (op == MessageOp::CopyU && plain) {
        // Max/min readouts (segments of rows): reduce_fold's strict comparison as a branch-free loop the
        // compiler vectorizes (blends for the value and both args); the generic loop below ran it per element.
        const auto fold = [&](auto wins) {
          for (std::int64_t k = row_begin; k < row_end; ++k) {
            const std::int64_t u = indices[k], e = eids[k];
            const float* ur = ufeat + u * len;
            // The selects as bit masks, stored unconditionally: written `o[f] = w ? x : o[f]`, GCC made each a
            // conditional masked store (vmaskmovps / vpmaskmovq) that the next edge's load of the same row
            // cannot forward from (copy_u max fwd 30.7-38.6 -> 23.7-24.0 ms, `topo-bench ops --only
            // gspmm/copy_u`, Zen 3).
#pragma omp simd
            for (std::int64_t f = 0; f < len; ++f) {
              const float x = ur[f], cur = o[f];
              const std::int64_t take = -static_cast<std::int64_t>(wins(x, cur));  // all ones where x wins
              const auto take32 = static_cast<std::uint32_t>(take);
              o[f] = std::bit_cast<float>((std::bit_cast<std::uint32_t>(x) & take32) |
                                          (std::bit_cast<std::uint32_t>(cur) & ~take32));
              au[f] = (u & take) | (au[f] & ~take);
              ae[f] = (e & take) | (ae[f] & ~take);
            }
          }
        };
        if (reduce == SpmmReduce::Max)
          fold([](float x, float acc) { return x > acc; });
        else
          fold([](float x, float acc) { return x < acc; });
        if (row_end == row_begin)
          for (std::int64_t f = 0; f < len; ++f) o[f] = 0.f;  // reduce_finish of an empty row
        continue;
      }
    }
    for (std::int64_t k = row_begin; k < row_end; ++k) {
      const std::int64_t u = indices[k], e = eids ? static_cast<std::int64_t>(eids[k]) : -1;  // -1: not read
      const float* ur = ufeat ? ufeat + u * b.lhs_len : nullptr;
      const float* er = efeat ? efeat + e * b.rhs_len : nullptr;
      if (!kTrack && plain && sums) {
        // Sum/mean without broadcasting: a contiguous loop the compiler vectorizes.
        if (op == MessageOp::UMulE) {
#pragma omp simd
          for (std::int64_t f = 0; f < len; ++f) o[f] += ur[f] * er[f];
        } else {
          for (std::int64_t f = 0; f < len; ++f) o[f] += message(op, ur ? ur[f] : 0.f, er ? er[f] : 0.f);
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
  check_csr(in_csr, device, "gspmm", spmm_reads_edge_ids(op, reduce));
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
    const Id* eids = in_csr.has_edge_ids() ? in_csr.eids.data<Id>() : nullptr;
    TOPO_ON_DEVICE(
        device,
        {
          const bool scattered = use_u && scattered_sources(indptr, indices, in_csr.num_rows,
                                                            view.lhs_len * std::int64_t{4}, ufeat.size(0));
          parallel_rows(indptr, in_csr.num_rows, view.out_len, [&](std::int64_t b, std::int64_t e) {
            if (track)
              spmm_rows_cpu<Id, true>(op, reduce, indptr, indices, eids, b, e, up, ep, view, chunk, scattered, op_out,
                                      au, ae);
            else
              spmm_rows_cpu<Id, false>(op, reduce, indptr, indices, eids, b, e, up, ep, view, chunk, scattered, op_out,
                                       au, ae);
          });
        },
        cuda::gspmm(op, reduce, indptr, indices, eids, in_csr.num_rows, up, ep, view, op_out, au, ae));
  });
  return result;
}

}  // namespace topo
