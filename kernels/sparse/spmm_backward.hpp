#pragma once
// Kernels for the backward of gspmm that the forward kernels cannot express (nn/sparse_ops.cpp composes
// the rest from gspmm/gsddmm on the reverse graph).
#include "kernels/sparse/format.hpp"

namespace topo {

// Max/min backward, per edge: out[e, ...] = grad[v, ...] where arg_e[v, ...] == e (v the row holding e), else 0.
// in_csr rows are destinations; grad: float32 [num_rows, ...]; arg_e: int64, same shape (gspmm's arg_e).
// Returns [nnz, ...grad row shape] by edge id. Summing it over a source's out-edges gives the source's
// gradient, so ties and multi-edges are credited exactly once (to the recorded edge).
// Parallel strategy (CPU): destination rows in work-balanced ranges; every edge belongs to one row, so
// each output row has one writer: no atomics, deterministic.
Tensor spmm_arg_to_edges(const CsrView& in_csr, const Tensor& arg_e, const Tensor& grad);

// Max/min backward of copy_u, per source: out[u, ...] = sum of grad[v, ...] over the elements whose recorded
// source arg_u[v, ...] is u (gspmm's arg_u, same shape as grad; -1 where v had no in-edges). Returns
// [num_src, ...grad row shape]. The same sums as spmm_arg_to_edges followed by a scatter over the sources'
// out-edges, without the [nnz, ...] tensor (mostly zeros: one winner per output element).
// Parallel strategy (CPU): ranges of feature columns, each thread walking every row for its columns, so the
// scattered adds of two threads never meet and each sum runs in row order: deterministic for any thread
// count. CUDA: one thread per element, atomicAdd into out.
Tensor spmm_arg_to_sources(std::int64_t num_src, const Tensor& arg_u, const Tensor& grad);

}  // namespace topo
