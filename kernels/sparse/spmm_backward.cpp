#include "kernels/profile.hpp"
#include "kernels/sparse/spmm_backward.hpp"

#include "kernels/dispatch.hpp"
#include "kernels/sparse/csr_checks.hpp"
#include "kernels/sparse/index_dispatch.hpp"
#include "kernels/sparse/row_partition.hpp"
#include "kernels/sparse/spmm_backward_math.hpp"

namespace topo {

Tensor spmm_arg_to_edges(const CsrView& in_csr, const Tensor& arg_e, const Tensor& grad) {
  TOPO_PROFILE(Sparse);
  const Device device = grad.device();
  check_csr(in_csr, device, "spmm_arg_to_edges");
  check_rows(grad, in_csr.num_rows, device, "spmm_arg_to_edges", "grad");
  TOPO_CHECK(arg_e.defined() && arg_e.dtype() == DType::I64 && arg_e.shape() == grad.shape() &&
                 arg_e.device() == device,
             "spmm_arg_to_edges: arg_e must be int64 shaped like grad {} on {}, got {}", shape_str(grad.shape()),
             device.str(), arg_e.defined() ? shape_str(arg_e.shape()) : std::string("undefined"));
  Shape out_shape = grad.shape();
  out_shape[0] = in_csr.nnz();
  Tensor out = Tensor::empty(out_shape, DType::F32, device);
  const std::int64_t len = in_csr.num_rows > 0 ? grad.numel() / in_csr.num_rows : 0;
  const std::int64_t* a = arg_e.data<std::int64_t>();
  const float* g = grad.data<float>();
  float* o = out.data<float>();
  TOPO_DISPATCH_INDEX(in_csr.dtype(), Id, {
    const Id* indptr = in_csr.indptr.data<Id>();
    const Id* eids = in_csr.eids.data<Id>();
    TOPO_ON_DEVICE(device,
                   parallel_rows(indptr, in_csr.num_rows, len,
                                 [&](std::int64_t b, std::int64_t e) {
                                   for (std::int64_t v = b; v < e; ++v)
                                     spmm_arg_to_edges_row(indptr, eids, v, a, g, len, o);
                                 }),
                   cuda::spmm_arg_to_edges(indptr, eids, in_csr.num_rows, a, g, len, o));
  });
  return out;
}

}  // namespace topo
