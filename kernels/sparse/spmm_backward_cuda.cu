// Max/min gspmm backward on CUDA. Parallel strategy (spmm_arg_to_edges): one thread per destination row
// (grid-stride); a row writes only its own edges' output rows, so no atomics and the result is deterministic. Rows are short in
// the graphs this engine targets; the math is the CPU's (spmm_backward_math.hpp).
#include "kernels/cuda_utils.cuh"
#include "kernels/sparse/spmm_backward_math.hpp"

namespace topo::cuda {
namespace {

constexpr int kThreads = 256;

template <class Id>
__global__ void arg_to_edges_kernel(const Id* indptr, const Id* eids, std::int64_t rows, const std::int64_t* arg_e,
                                    const float* grad, std::int64_t len, float* out) {
  for (std::int64_t v = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; v < rows;
       v += std::int64_t{gridDim.x} * blockDim.x)
    spmm_arg_to_edges_row(indptr, eids, v, arg_e, grad, len, out);
}

template <class Id>
void launch(const Id* indptr, const Id* eids, std::int64_t rows, const std::int64_t* arg_e, const float* grad,
            std::int64_t len, float* out) {
  if (rows == 0 || len == 0) return;
  arg_to_edges_kernel<<<blocks_for(rows, kThreads), kThreads>>>(indptr, eids, rows, arg_e, grad, len, out);
  check_launch("spmm_arg_to_edges");
}

// Max/min backward of copy_u per source: one thread per element (grid-stride), atomicAdd into the recorded
// source's row (several destinations may credit the same source, so the sum order is not fixed here).
__global__ void arg_to_sources_kernel(std::int64_t n, const std::int64_t* arg_u, const float* grad, std::int64_t len,
                                      std::int64_t out_n, float* out) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t at = spmm_arg_source_offset(arg_u[i], len, i % len);
    if (at >= 0 && at < out_n) atomicAdd(out + at, grad[i]);
  }
}

}  // namespace

void spmm_arg_to_sources(std::int64_t rows, const std::int64_t* arg_u, const float* grad, std::int64_t len,
                         std::int64_t num_src, float* out) {
  const std::int64_t n = rows * len;
  if (n == 0) return;
  arg_to_sources_kernel<<<blocks_for(n, kThreads), kThreads>>>(n, arg_u, grad, len, num_src * len, out);
  check_launch("spmm_arg_to_sources");
}

void spmm_arg_to_edges(const std::int32_t* indptr, const std::int32_t* eids, std::int64_t rows,
                       const std::int64_t* arg_e, const float* grad, std::int64_t len, float* out) {
  launch(indptr, eids, rows, arg_e, grad, len, out);
}
void spmm_arg_to_edges(const std::int64_t* indptr, const std::int64_t* eids, std::int64_t rows,
                       const std::int64_t* arg_e, const float* grad, std::int64_t len, float* out) {
  launch(indptr, eids, rows, arg_e, grad, len, out);
}

}  // namespace topo::cuda
