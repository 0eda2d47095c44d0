#pragma once
// gsddmm: per-edge values from node and edge features, e.g. attention scores q_v . k_u (Dot, V, U).
#include "kernels/sparse/format.hpp"
#include "kernels/sparse/sddmm_math.hpp"

namespace topo {

// in_csr rows are destinations. lhs/rhs have num_cols rows (U), num_rows rows (V) or nnz rows (E, by edge id);
// the unused operand of CopyLhs/CopyRhs may be undefined. Returns [nnz, *broadcast row shape] by edge id;
// Dot reduces the last dim (output last dim 1).
// Parallel strategy (CPU): destination rows in work-balanced ranges; each edge writes only its own output
// row, so no atomics.
Tensor gsddmm(SddmmOp op, const CsrView& in_csr, const Tensor& lhs, const Tensor& rhs, Target lhs_target,
              Target rhs_target);

}  // namespace topo
