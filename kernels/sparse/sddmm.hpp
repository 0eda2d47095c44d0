#pragma once
// gsddmm: per-edge values from node and edge features, e.g. attention scores q_v . k_u (Dot, V, U).
#include "kernels/sparse/format.hpp"
#include "kernels/sparse/sddmm_math.hpp"

namespace topo {

// in_csr rows are destinations. lhs/rhs have num_cols rows (U), num_rows rows (V) or nnz rows (E, by edge id);
// the unused operand of CopyLhs/CopyRhs may be undefined. Returns [nnz, *broadcast row shape] by edge id;
// Dot reduces the last dim (output last dim 1).
// Parallel strategy (CPU): destination rows in work-balanced ranges (parallel_rows, as gspmm); each edge
// writes only its own output row, so no atomics and no dependence on the thread count. Per row, without
// broadcasting: Dot with one operand at V and head dim <= 64 (the attention score q_v . k_u) holds the
// destination's head slice in registers and dots it with four in-edges at a time, four independent
// accumulators reduced together (simd::hsum4); other Dots take the row's edge x head pairs four at a time; the other ops run one vectorized loop per edge with the op fixed
// at compile time; the newest source row of the destination 16 rows ahead is prefetched. Broadcast operands
// take the reference loop.
Tensor gsddmm(SddmmOp op, const CsrView& in_csr, const Tensor& lhs, const Tensor& rhs, Target lhs_target,
              Target rhs_target);
// The readable reference the tests hold gsddmm to (CPU only): per edge, per output element, sddmm_element
// with the broadcast offsets. Same checks and output as gsddmm.
Tensor gsddmm_reference(SddmmOp op, const CsrView& in_csr, const Tensor& lhs, const Tensor& rhs, Target lhs_target,
                        Target rhs_target);

}  // namespace topo
