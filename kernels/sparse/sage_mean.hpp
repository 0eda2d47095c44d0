#pragma once
// GraphSAGE's mean aggregator on a projection made first (DGL's lin_before_mp), fused with the layer's self
// term. y [N, 2F] holds both projections of the same input, [x W_neigh^T | x W_self^T] (one GEMM reads x once):
//   out[v] = mean_{u -> v} y[u, :F] + y[v, F:]          (a row without in-edges: y[v, F:])
// The composition split y into two [N, F] copies, and its backward padded each half's gradient to [N, 2F] with
// zeros and summed the two; here y's halves are read in place and its gradient is written once.
#include "kernels/sparse/format.hpp"

namespace topo {

// in_csr: rows = destinations, over a homogeneous relation (N sources = N destinations); y float32 [N, 2F].
// Parallel strategy (CPU): gspmm's (destination rows in work-balanced ranges, each row's sum in registers),
// the source rows read at a stride of 2F. CUDA: the composition (split, gspmm mean, add).
Tensor sage_mean(const CsrView& in_csr, const Tensor& y);
// The gradient with respect to y, [N, 2F]: dy[u, :F] = sum_{u -> v} scaled[v], dy[u, F:] = grad[u], where
// scaled = grad / in-degree (the mean's scale, made by the caller with the forward's degrees). out_csr: rows =
// sources. The same bits as the composition's (its zero padding adds exact zeros).
Tensor sage_mean_backward(const CsrView& out_csr, const Tensor& scaled, const Tensor& grad);

}  // namespace topo
