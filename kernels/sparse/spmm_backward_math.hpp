#pragma once
// Backward of gspmm's max/min reducers: the gradient of out[v, f] flows only to the edge that won the
// comparison (arg_e[v, f], recorded by the forward). Shared by the CPU and CUDA backends.
#include <cstdint>

#include "kernels/hd.hpp"

namespace topo {

// One CSR row v (rows = destinations): every entry e of the row gets grad[v, f] where it won, 0 elsewhere.
// grad, arg_e: [rows, len]; out: [nnz, len] by edge id. Each edge is written by exactly one row.
template <class Id>
TOPO_HD void spmm_arg_to_edges_row(const Id* indptr, const Id* eids, std::int64_t v, const std::int64_t* arg_e,
                                   const float* grad, std::int64_t len, float* out) {
  const float* g = grad + v * len;
  const std::int64_t* a = arg_e + v * len;
  for (std::int64_t k = indptr[v]; k < indptr[v + 1]; ++k) {
    const std::int64_t e = eids[k];
    float* o = out + e * len;
    for (std::int64_t f = 0; f < len; ++f) o[f] = a[f] == e ? g[f] : 0.f;
  }
}

// Max/min backward of copy_u straight to the sources: element (v, f) of grad adds into out[arg_u[v, f], f]
// (nothing where v had no in-edge, arg_u = -1). The offset into out, or -1.
TOPO_HD std::int64_t spmm_arg_source_offset(std::int64_t arg_u, std::int64_t len, std::int64_t f) {
  return arg_u < 0 ? -1 : arg_u * len + f;
}

namespace cuda {
// out [num_src, len] zeroed by the caller; arg_u, grad [rows, len]. Device pointers. A source past num_src
// (arg_u from another graph; the CPU path reports it) is skipped, never written.
void spmm_arg_to_sources(std::int64_t rows, const std::int64_t* arg_u, const float* grad, std::int64_t len,
                         std::int64_t num_src, float* out);
// Device pointers; same layout as spmm_arg_to_edges_row.
void spmm_arg_to_edges(const std::int32_t* indptr, const std::int32_t* eids, std::int64_t rows,
                       const std::int64_t* arg_e, const float* grad, std::int64_t len, float* out);
void spmm_arg_to_edges(const std::int64_t* indptr, const std::int64_t* eids, std::int64_t rows,
                       const std::int64_t* arg_e, const float* grad, std::int64_t len, float* out);
}  // namespace cuda

}  // namespace topo
