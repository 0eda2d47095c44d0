#include "kernels/sparse/csr_checks.hpp"

namespace topo {

void check_csr(const CsrView& csr, Device device, const char* op, bool edge_ids) {
  TOPO_CHECK(csr.indptr.defined() && csr.indices.defined(), "{}: incomplete CSR view", op);
  // The CUDA kernels read eids whatever the op (graphs on a GPU always build them: HeteroGraph).
  TOPO_CHECK(csr.eids.defined() || (!edge_ids && !device.is_cuda()),
             "{}: the CSR view has no edge ids (a structure-only view) but this op reads them", op);
  TOPO_CHECK(csr.indptr.ndim() == 1 && csr.indptr.numel() == csr.num_rows + 1,
             "{}: indptr {} does not match {} rows", op, csr.indptr.str(), csr.num_rows);
  TOPO_CHECK(csr.indices.dtype() == csr.indptr.dtype() && (!csr.eids.defined() || csr.eids.dtype() == csr.indptr.dtype()),
             "{}: CSR arrays differ in dtype: indptr {}, indices {}, eids {}", op, csr.indptr.str(),
             csr.indices.str(), csr.eids.defined() ? csr.eids.str() : std::string("none"));
  if (csr.eids.defined())
    TOPO_CHECK(csr.eids.numel() == csr.indices.numel(), "{}: eids {} and indices {} differ in length", op,
               csr.eids.str(), csr.indices.str());
  TOPO_CHECK(csr.indptr.device() == device && csr.indices.device() == device &&
                 (!csr.eids.defined() || csr.eids.device() == device),
             "{}: graph on {} but features on {}", op, csr.indptr.device().str(), device.str());
}

void check_reverse_csr(const CsrView& in_csr, const CsrView& out_csr, Device device, const char* op) {
  check_csr(out_csr, device, op);
  TOPO_CHECK(out_csr.num_rows == in_csr.num_cols && out_csr.num_cols == in_csr.num_rows &&
                 out_csr.nnz() == in_csr.nnz() && out_csr.dtype() == in_csr.dtype(),
             "{}: out_csr ({} x {}, {} entries) is not the reverse of in_csr ({} x {}, {} entries)", op,
             out_csr.num_rows, out_csr.num_cols, out_csr.nnz(), in_csr.num_rows, in_csr.num_cols, in_csr.nnz());
}

void check_rows(const Tensor& t, std::int64_t rows, Device device, const char* op, const char* what) {
  TOPO_CHECK(t.defined(), "{}: {} is missing", op, what);
  check_dtype(t, DType::F32, op, what);
  TOPO_CHECK(t.ndim() >= 1 && t.size(0) == rows, "{}: {} {} must have {} rows", op, what, t.str(), rows);
  TOPO_CHECK(t.device() == device, "{}: {} on {} but the graph is on {}", op, what, t.device().str(), device.str());
}

}  // namespace topo
