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

}  // namespace topo
