// gspmm on CUDA. Parallel strategy: one warp per destination row (8 rows per 256-thread block); the lanes
// stride across the row's output features, so every load of a neighbour's feature row is coalesced and each
// lane owns its output elements (no atomics, deterministic). Message/reduce math from spmm_math.hpp.
#include "kernels/cuda_utils.cuh"
#include "kernels/sparse/spmm_math.hpp"

namespace topo::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarp = 32;

template <class Id>
__global__ void gspmm_kernel(MessageOp op, SpmmReduce reduce, const Id* indptr, const Id* indices, const Id* eids,
                             std::int64_t rows, const float* ufeat, const float* efeat, BcastView b, float* out,
                             std::int64_t* arg_u, std::int64_t* arg_e) {
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / kWarp);
  const int lane = threadIdx.x % kWarp;
  for (std::int64_t v = blockIdx.x * std::int64_t{blockDim.x / kWarp} + threadIdx.x / kWarp; v < rows; v += warps) {
    const std::int64_t row_begin = indptr[v], row_end = indptr[v + 1];
    for (std::int64_t f = lane; f < b.out_len; f += kWarp) {
      float acc = reduce_identity(reduce);
      std::int64_t best_u = -1, best_e = -1;
      for (std::int64_t k = row_begin; k < row_end; ++k) {
        const std::int64_t u = indices[k], e = eids[k];
        const float m = message(op, ufeat ? ufeat[u * b.lhs_len + bcast_lhs(b, f)] : 0.f,
                                efeat ? efeat[e * b.rhs_len + bcast_rhs(b, f)] : 0.f);
        if (reduce_fold(reduce, acc, m)) {
          best_u = u;
          best_e = e;
        }
      }
      out[v * b.out_len + f] = reduce_finish(reduce, acc, row_end - row_begin);
      if (arg_u) {
        arg_u[v * b.out_len + f] = best_u;
        arg_e[v * b.out_len + f] = best_e;
      }
    }
  }
}

template <class Id>
void launch(MessageOp op, SpmmReduce reduce, const Id* indptr, const Id* indices, const Id* eids, std::int64_t rows,
            const float* ufeat, const float* efeat, BcastView b, float* out, std::int64_t* arg_u, std::int64_t* arg_e) {
  if (rows == 0) return;
  const unsigned blocks = blocks_for(rows * kWarp, kThreads);
  gspmm_kernel<Id><<<blocks, kThreads>>>(op, reduce, indptr, indices, eids, rows, ufeat, efeat, b, out, arg_u, arg_e);
  check_launch("gspmm");
}

}  // namespace

void gspmm(MessageOp op, SpmmReduce reduce, const std::int32_t* indptr, const std::int32_t* indices,
           const std::int32_t* eids, std::int64_t rows, const float* ufeat, const float* efeat, BcastView bcast,
           float* out, std::int64_t* arg_u, std::int64_t* arg_e) {
  launch(op, reduce, indptr, indices, eids, rows, ufeat, efeat, bcast, out, arg_u, arg_e);
}
void gspmm(MessageOp op, SpmmReduce reduce, const std::int64_t* indptr, const std::int64_t* indices,
           const std::int64_t* eids, std::int64_t rows, const float* ufeat, const float* efeat, BcastView bcast,
           float* out, std::int64_t* arg_u, std::int64_t* arg_e) {
  launch(op, reduce, indptr, indices, eids, rows, ufeat, efeat, bcast, out, arg_u, arg_e);
}

}  // namespace topo::cuda
