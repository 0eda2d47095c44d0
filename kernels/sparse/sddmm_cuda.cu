// gsddmm on CUDA. Parallel strategy: one warp per destination row; lanes stride across the output elements
// of each in-edge (for Dot each lane computes whole K-long dot products: heads are few, K is <= a few
// hundred). Every edge writes only its own output row. Math from sddmm_math.hpp.
#include "kernels/cuda_utils.cuh"
#include "kernels/sparse/sddmm_math.hpp"

namespace topo::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarp = 32;

template <class Id>
__global__ void gsddmm_kernel(SddmmOp op, const Id* indptr, const Id* indices, const Id* eids, std::int64_t rows,
                              const float* lhs, const float* rhs, Target lt, Target rt, BcastView b, float* out) {
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / kWarp);
  const int lane = threadIdx.x % kWarp;
  for (std::int64_t v = blockIdx.x * std::int64_t{blockDim.x / kWarp} + threadIdx.x / kWarp; v < rows; v += warps) {
    for (std::int64_t j = indptr[v]; j < indptr[v + 1]; ++j) {
      const std::int64_t u = indices[j], e = eids[j];
      const float* l = lhs ? lhs + target_row(lt, u, v, e) * b.lhs_len : nullptr;
      const float* r = rhs ? rhs + target_row(rt, u, v, e) * b.rhs_len : nullptr;
      for (std::int64_t f = lane; f < b.out_len; f += kWarp)
        out[e * b.out_len + f] =
            sddmm_element(op, l ? l + bcast_lhs(b, f) : nullptr, r ? r + bcast_rhs(b, f) : nullptr, b.reduce_len);
    }
  }
}

template <class Id>
void launch(SddmmOp op, const Id* indptr, const Id* indices, const Id* eids, std::int64_t rows, const float* lhs,
            const float* rhs, Target lt, Target rt, BcastView b, float* out) {
  if (rows == 0) return;
  gsddmm_kernel<Id><<<blocks_for(rows * kWarp, kThreads), kThreads>>>(op, indptr, indices, eids, rows, lhs, rhs, lt,
                                                                       rt, b, out);
  check_launch("gsddmm");
}

}  // namespace

void gsddmm(SddmmOp op, const std::int32_t* indptr, const std::int32_t* indices, const std::int32_t* eids,
            std::int64_t rows, const float* lhs, const float* rhs, Target lhs_target, Target rhs_target,
            BcastView bcast, float* out) {
  launch(op, indptr, indices, eids, rows, lhs, rhs, lhs_target, rhs_target, bcast, out);
}
void gsddmm(SddmmOp op, const std::int64_t* indptr, const std::int64_t* indices, const std::int64_t* eids,
            std::int64_t rows, const float* lhs, const float* rhs, Target lhs_target, Target rhs_target,
            BcastView bcast, float* out) {
  launch(op, indptr, indices, eids, rows, lhs, rhs, lhs_target, rhs_target, bcast, out);
}

}  // namespace topo::cuda
