#include "kernels/sparse/sage_mean.hpp"

#include <algorithm>

#include "kernels/dense/binary.hpp"
#include "kernels/dense/indexing.hpp"
#include "kernels/profile.hpp"
#include "kernels/sparse/csr_checks.hpp"
#include "kernels/sparse/gather_prefetch.hpp"
#include "kernels/sparse/index_dispatch.hpp"
#include "kernels/sparse/row_partition.hpp"
#include "kernels/sparse/simd_rows.hpp"
#include "kernels/sparse/spmm.hpp"

namespace topo {
namespace {

// out[v * out_stride + f] = (sum over v's row of table[u * table_stride + f]) / (mean ? its length : 1), then
// + extra[v * extra_stride + f] where extra is given, for f in [0, width). The sum is gspmm's copy_u (the same
// register-blocked accumulation, j ascending), so its bits are gspmm's. It is not shared with gspmm's hot path
// through one row helper: that cost gspmm's u_mul_e rows 18-25% and its GCN rows 10-12% (code generation; `topo-bench
// kernels`, three rounds alternated), so the two loops stay apart.
template <class Id>
void strided_row_sums(const CsrView& csr, const float* table, std::int64_t table_rows, std::int64_t table_stride,
                      std::int64_t width, bool mean, const float* extra, std::int64_t extra_stride, float* out,
                      std::int64_t out_stride) {
  const Id* indptr = csr.indptr.data<Id>();
  const Id* indices = csr.indices.data<Id>();
  // The rows read are `width` floats of each strided row: the lines a gather touches per row.
  const bool scattered = scattered_sources(indptr, indices, csr.num_rows, width * std::int64_t{4}, table_rows);
  parallel_rows(indptr, csr.num_rows, width, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t v = b; v < e; ++v) {
      prefetch_sources_ahead(indptr, indices, v, e, scattered, table, table_stride, width);
      const Id* src = indices + indptr[v];
      const std::int64_t nj = indptr[v + 1] - indptr[v];
      float* o = out + v * out_stride;
      simd::accumulate_rows(
          nj, [&](std::int64_t j) { return table + static_cast<std::int64_t>(src[j]) * table_stride; },
          [](std::int64_t, std::int64_t) { return 1.f; }, 1, width, o);
      if (mean && nj > 0)
        for (std::int64_t f = 0; f < width; ++f) o[f] /= static_cast<float>(nj);
      if (extra) {
        const float* x = extra + v * extra_stride;
        for (std::int64_t f = 0; f < width; ++f) o[f] += x[f];
      }
    }
  });
}

// F of a [N, 2F] projection, checked.
std::int64_t half_width(const Tensor& y, std::int64_t rows, const char* op) {
  TOPO_CHECK(y.defined() && y.dtype() == DType::F32 && y.ndim() == 2 && y.size(0) == rows && y.size(1) % 2 == 0,
             "{}: y must be float32 [{}, 2F] (both projections side by side), got {}", op, rows,
             y.defined() ? y.str() : std::string("undefined"));
  return y.size(1) / 2;
}

}  // namespace

Tensor sage_mean(const CsrView& in_csr, const Tensor& y) {
  TOPO_PROFILE(Sparse);
  TOPO_CHECK(in_csr.num_rows == in_csr.num_cols, "sage_mean: the relation must be homogeneous, got {} x {}",
             in_csr.num_rows, in_csr.num_cols);
  const std::int64_t f = half_width(y, in_csr.num_cols, "sage_mean");
  check_csr(in_csr, y.device(), "sage_mean", false);
  if (y.device().is_cuda()) {
    const std::vector<Tensor> halves = split(y, {f, f}, 1);
    return add(gspmm(MessageOp::CopyU, SpmmReduce::Mean, in_csr, halves[0], Tensor()).out, halves[1]);
  }
  Tensor out = Tensor::empty({in_csr.num_rows, f}, DType::F32, y.device());
  const float* yp = y.data<float>();
  TOPO_DISPATCH_INDEX(in_csr.dtype(), Id, {
    strided_row_sums<Id>(in_csr, yp, y.size(0), 2 * f, f, true, yp + f, 2 * f, out.data<float>(), f);
  });
  return out;
}

Tensor sage_mean_backward(const CsrView& out_csr, const Tensor& scaled, const Tensor& grad) {
  TOPO_PROFILE(Sparse);
  TOPO_CHECK(out_csr.num_rows == out_csr.num_cols, "sage_mean_backward: the relation must be homogeneous, got {} x {}",
             out_csr.num_rows, out_csr.num_cols);
  const std::int64_t n = out_csr.num_rows;
  TOPO_CHECK(scaled.defined() && grad.defined() && scaled.dtype() == DType::F32 && scaled.ndim() == 2 &&
                 scaled.size(0) == n && scaled.shape() == grad.shape() && grad.dtype() == DType::F32 &&
                 scaled.device() == grad.device(),
             "sage_mean_backward: scaled and grad must be float32 [{}, F] alike, got {} and {}", n,
             scaled.defined() ? scaled.str() : std::string("undefined"),
             grad.defined() ? grad.str() : std::string("undefined"));
  check_csr(out_csr, grad.device(), "sage_mean_backward", false);
  const std::int64_t f = grad.size(1);
  if (grad.device().is_cuda())
    return concat({gspmm(MessageOp::CopyU, SpmmReduce::Sum, out_csr, scaled, Tensor()).out, grad}, 1);
  Tensor dy = Tensor::empty({n, 2 * f}, DType::F32, grad.device());
  float* d = dy.data<float>();
  const float* g = grad.data<float>();
  TOPO_DISPATCH_INDEX(out_csr.dtype(), Id, {
    strided_row_sums<Id>(out_csr, scaled.data<float>(), n, f, f, false, nullptr, 0, d, 2 * f);
    // The self half: grad row by row into the second half of dy's rows.
    parallel_for(n, f, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t u = b; u < e; ++u) std::copy(g + u * f, g + (u + 1) * f, d + u * 2 * f + f);
    });
  });
  return dy;
}

}  // namespace topo
