#include "kernels/sparse/spmm_backward.hpp"

#include <atomic>

#include "kernels/profile.hpp"
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

Tensor spmm_arg_to_sources(std::int64_t num_src, const Tensor& arg_u, const Tensor& grad) {
  TOPO_PROFILE(Sparse);
  const Device device = grad.device();
  TOPO_CHECK(grad.defined() && grad.dtype() == DType::F32 && grad.ndim() >= 1,
             "spmm_arg_to_sources: grad must be float32 [rows, ...], got {}",
             grad.defined() ? grad.str() : std::string("undefined"));
  TOPO_CHECK(arg_u.defined() && arg_u.dtype() == DType::I64 && arg_u.shape() == grad.shape() &&
                 arg_u.device() == device,
             "spmm_arg_to_sources: arg_u must be int64 shaped like grad {} on {}, got {}", shape_str(grad.shape()),
             device.str(), arg_u.defined() ? arg_u.str() : std::string("undefined"));
  TOPO_CHECK(num_src >= 0, "spmm_arg_to_sources: {} sources", num_src);
  Shape out_shape = grad.shape();
  out_shape[0] = num_src;
  Tensor out = Tensor::zeros(out_shape, DType::F32, device);
  const std::int64_t rows = grad.size(0), len = grad.row_numel();
  if (rows == 0 || len == 0) return out;
  const std::int64_t* a = arg_u.data<std::int64_t>();
  const float* g = grad.data<float>();
  float* o = out.data<float>();
  TOPO_ON_DEVICE(
      device,
      {
        // A recorded source past num_src is a caller's bug (arg_u from another graph): checked, not written.
        std::atomic<std::int64_t> bad{-1};
        parallel_for(len, rows, [&](std::int64_t f0, std::int64_t f1) {
          for (std::int64_t v = 0; v < rows; ++v)
            for (std::int64_t f = f0; f < f1; ++f) {
              const std::int64_t at = spmm_arg_source_offset(a[v * len + f], len, f);
              if (at >= num_src * len) bad.store(a[v * len + f], std::memory_order_relaxed);
              else if (at >= 0) o[at] += g[v * len + f];
            }
        });
        TOPO_CHECK(bad.load() < 0, "spmm_arg_to_sources: arg_u names source {} of {}", bad.load(), num_src);
      },
      cuda::spmm_arg_to_sources(rows, a, g, len, num_src, o));
  return out;
}

}  // namespace topo
