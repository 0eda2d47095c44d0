#pragma once
// Argument checks shared by the sparse ops: a CSR view and the feature tensors that ride on it.
#include "kernels/sparse/format.hpp"

namespace topo {

// The CSR is complete (indptr [rows+1], indices/eids [nnz], one integer dtype) and on `device`.
void check_csr(const CsrView& csr, Device device, const char* op);
// `t` is a float32 tensor on `device` with `rows` rows; `what` names it in errors.
void check_rows(const Tensor& t, std::int64_t rows, Device device, const char* op, const char* what);

}  // namespace topo
