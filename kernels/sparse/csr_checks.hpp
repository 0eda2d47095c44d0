#pragma once
// Argument checks shared by the sparse ops: a CSR view and the feature tensors that ride on it.
#include "kernels/sparse/format.hpp"

namespace topo {

// The CSR is complete (indptr [rows+1], indices/eids [nnz], one integer dtype) and on `device`.
// `edge_ids`: whether the op reads eids; a structure-only view (no eids) passes only where it does not.
void check_csr(const CsrView& csr, Device device, const char* op, bool edge_ids = true);
// out_csr is complete, on `device`, and in_csr's transpose in shape, entry count and dtype (the two-pass
// backwards walk in_csr by destination and out_csr by source).
void check_reverse_csr(const CsrView& in_csr, const CsrView& out_csr, Device device, const char* op);
// `t` is a float32 tensor on `device` with `rows` rows; `what` names it in errors.
void check_rows(const Tensor& t, std::int64_t rows, Device device, const char* op, const char* what);

}  // namespace topo
