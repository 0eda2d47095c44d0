#pragma once
// gspmm: out[v] = reduce_{(u -> v, e)} message(ufeat[u], efeat[e]) over the rows of a CSR whose rows are the
// destinations (a graph's CSC: indices hold source ids, eids the edge ids).
#include "kernels/sparse/format.hpp"
#include "kernels/sparse/spmm_math.hpp"

namespace topo {

struct SpmmOutput {
  Tensor out;    // [num_dst, *broadcast(ufeat row shape, efeat row shape)]
  Tensor arg_u;  // max/min only: int64 [num_dst, *out row shape], source id chosen per element, -1 for empty rows
  Tensor arg_e;  // max/min only: int64, edge id chosen per element, -1 for empty rows
};

// ufeat: [in_csr.num_cols, ...] (undefined for CopyE); efeat: [nnz, ...] indexed by edge id (undefined for CopyU).
// Parallel strategy (CPU): destination rows in work-balanced ranges across threads; each row accumulates in
// its own output row, so there are no atomics and results are identical run to run and across thread counts.
SpmmOutput gspmm(MessageOp op, SpmmReduce reduce, const CsrView& in_csr, const Tensor& ufeat, const Tensor& efeat);

}  // namespace topo
