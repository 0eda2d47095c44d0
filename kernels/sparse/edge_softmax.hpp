#pragma once
// Edge softmax: normalises per-edge logits over the entries of each CSR row. Pass a graph's CSC (rows =
// destinations) for norm_by = dst — the attention case — or its CSR (rows = sources) for norm_by = src.
#include "kernels/sparse/format.hpp"

namespace topo {

// logits: [nnz, ...] by edge id (trailing dims are independent columns, e.g. heads). Returns the same shape.
// Every edge must lie in exactly one row (nnz == logits rows). Parallel strategy (CPU): rows in work-balanced
// ranges; within a range, runs of equal-degree rows are gathered into [degree][rows][cols] stack tiles so
// every sweep is a full-width vector loop (edge_softmax.cpp); no heap allocation inside the parallel loops,
// no atomics; results identical for any thread count.
Tensor edge_softmax(const CsrView& csr, const Tensor& logits);
// grad_logits from the forward output y and grad_y: dx = y * (dy - sum_row(dy * y)).
Tensor edge_softmax_backward(const CsrView& csr, const Tensor& y, const Tensor& grad_y);

}  // namespace topo
