#include "kernels/profile.hpp"
#include "kernels/sparse/edge_softmax.hpp"

#include "kernels/dispatch.hpp"
#include "kernels/sparse/csr_checks.hpp"
#include "kernels/sparse/edge_softmax_math.hpp"
#include "kernels/sparse/index_dispatch.hpp"
#include "kernels/sparse/row_partition.hpp"

namespace topo {

Tensor edge_softmax(const CsrView& csr, const Tensor& logits) {
  TOPO_PROFILE(Sparse);
  check_csr(csr, logits.device(), "edge_softmax");
  check_rows(logits, csr.nnz(), logits.device(), "edge_softmax", "logits");
  Tensor y = Tensor::zeros(logits.shape(), DType::F32, logits.device());
  const std::int64_t cols = logits.row_numel();
  const float* x = logits.data<float>();
  float* yp = y.data<float>();
  TOPO_DISPATCH_INDEX(csr.dtype(), Id, {
    const Id* indptr = csr.indptr.data<Id>();
    const Id* eids = csr.eids.data<Id>();
    TOPO_ON_DEVICE(logits.device(),
                   parallel_rows(indptr, csr.num_rows, 3 * cols,
                                 [&](std::int64_t b, std::int64_t e) {
                                   for (std::int64_t r = b; r < e; ++r)
                                     for (std::int64_t c = 0; c < cols; ++c)
                                       edge_softmax_group(eids, indptr[r], indptr[r + 1], x, yp, cols, c);
                                 }),
                   cuda::edge_softmax(indptr, eids, csr.num_rows, x, yp, cols));
  });
  return y;
}

Tensor edge_softmax_backward(const CsrView& csr, const Tensor& y, const Tensor& grad_y) {
  TOPO_PROFILE(Sparse);
  check_csr(csr, y.device(), "edge_softmax_backward");
  check_rows(y, csr.nnz(), y.device(), "edge_softmax_backward", "y");
  check_same_shape(y, grad_y, "edge_softmax_backward");
  check_same_device(y, grad_y, "edge_softmax_backward");
  Tensor dx = Tensor::zeros(y.shape(), DType::F32, y.device());
  const std::int64_t cols = y.row_numel();
  const float *yp = y.data<float>(), *dyp = grad_y.data<float>();
  float* dxp = dx.data<float>();
  TOPO_DISPATCH_INDEX(csr.dtype(), Id, {
    const Id* indptr = csr.indptr.data<Id>();
    const Id* eids = csr.eids.data<Id>();
    TOPO_ON_DEVICE(y.device(),
                   parallel_rows(indptr, csr.num_rows, 2 * cols,
                                 [&](std::int64_t b, std::int64_t e) {
                                   for (std::int64_t r = b; r < e; ++r)
                                     for (std::int64_t c = 0; c < cols; ++c)
                                       edge_softmax_group_backward(eids, indptr[r], indptr[r + 1], yp, dyp, dxp, cols,
                                                                   c);
                                 }),
                   cuda::edge_softmax_backward(indptr, eids, csr.num_rows, yp, dyp, dxp, cols));
  });
  return dx;
}

}  // namespace topo
