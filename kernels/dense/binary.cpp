// Broadcasting binary ops, scalar ops, sum_to_shape, axpy_, fill_.
// CPU strategy: the result is one flat range of elements split in contiguous chunks across OpenMP threads
// (serial below the grain). A broadcast is first collapsed to a few dims (BroadcastPlan), so equal shapes,
// a row over [R, D], a column over [R, D] and a scalar all reduce to a contiguous inner loop in which each
// operand has stride 1 or 0; that loop is specialised per op and per stride pair so it vectorizes.
#include "kernels/profile.hpp"
#include "kernels/dense/binary.hpp"

#include <algorithm>

#include "kernels/dense/reduce.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/parallel.hpp"

namespace topo {
namespace {

// c[k] = a[k * sa] op b[k * sb] for sa, sb in {0, 1}: four loops with compile-time strides.
template <BinaryOp OP>
void row_loop(const float* a, bool a_strided, const float* b, bool b_strided, float* c, std::int64_t len) {
  if (a_strided && b_strided) {
#pragma omp simd
    for (std::int64_t k = 0; k < len; ++k) c[k] = binary_apply(OP, a[k], b[k]);
  } else if (a_strided) {
    const float bv = b[0];
#pragma omp simd
    for (std::int64_t k = 0; k < len; ++k) c[k] = binary_apply(OP, a[k], bv);
  } else if (b_strided) {
    const float av = a[0];
#pragma omp simd
    for (std::int64_t k = 0; k < len; ++k) c[k] = binary_apply(OP, av, b[k]);
  } else {
    const float v = binary_apply(OP, a[0], b[0]);
    std::fill(c, c + len, v);
  }
}

// Result elements [begin, end) of the plan, walking row by row (a row = the last collapsed dim).
template <BinaryOp OP>
void run_plan(const BroadcastPlan& plan, const float* a, const float* b, float* c, std::int64_t begin,
              std::int64_t end) {
  const int last = plan.ndim - 1;
  const std::int64_t inner = plan.shape[last];
  const std::int64_t sa = plan.stride_a[last], sb = plan.stride_b[last];
  std::int64_t i = begin;
  while (i < end) {
    const std::int64_t row = i / inner, j = i % inner;
    const std::int64_t len = std::min(inner - j, end - i);
    std::int64_t oa = 0, ob = 0;
    broadcast_row_offsets(plan, row, oa, ob);
    row_loop<OP>(a + oa + j * sa, sa != 0, b + ob + j * sb, sb != 0, c + i, len);
    i += len;
  }
}

void binary_cpu(BinaryOp op, const BroadcastPlan& plan, const float* a, const float* b, float* c, std::int64_t n) {
  parallel_for(n, 1, [&](std::int64_t begin, std::int64_t end) {
    switch (op) {
      case BinaryOp::Add: run_plan<BinaryOp::Add>(plan, a, b, c, begin, end); break;
      case BinaryOp::Sub: run_plan<BinaryOp::Sub>(plan, a, b, c, begin, end); break;
      case BinaryOp::Mul: run_plan<BinaryOp::Mul>(plan, a, b, c, begin, end); break;
      case BinaryOp::Div: run_plan<BinaryOp::Div>(plan, a, b, c, begin, end); break;
    }
  });
}

// Dims of `shape` right-aligned to `ndim` (missing leading dims are 1).
std::int64_t aligned_dim(const Shape& shape, std::size_t ndim, std::size_t d) {
  const std::size_t pad = ndim - shape.size();
  return d < pad ? 1 : shape[d - pad];
}

BroadcastPlan make_plan(const Shape& a, const Shape& b, const Shape& out) {
  struct Dim {
    std::int64_t size;
    bool a_has, b_has;
  };
  std::vector<Dim> dims;
  for (std::size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;  // size-1 dims never move an offset
    const bool a_has = aligned_dim(a, out.size(), d) == out[d], b_has = aligned_dim(b, out.size(), d) == out[d];
    if (!dims.empty() && dims.back().a_has == a_has && dims.back().b_has == b_has)
      dims.back().size *= out[d];
    else
      dims.push_back({out[d], a_has, b_has});
  }
  if (dims.empty()) dims.push_back({1, true, true});
  TOPO_CHECK(dims.size() <= static_cast<std::size_t>(kMaxBroadcastDims),
             "binary: broadcasting {} with {} alternates too often ({} collapsed dims, at most {})", shape_str(a),
             shape_str(b), dims.size(), kMaxBroadcastDims);
  BroadcastPlan plan;
  plan.ndim = static_cast<int>(dims.size());
  std::int64_t step_a = 1, step_b = 1;
  for (int d = plan.ndim - 1; d >= 0; --d) {
    plan.shape[d] = dims[d].size;
    plan.stride_a[d] = dims[d].a_has ? step_a : 0;
    plan.stride_b[d] = dims[d].b_has ? step_b : 0;
    if (dims[d].a_has) step_a *= dims[d].size;
    if (dims[d].b_has) step_b *= dims[d].size;
  }
  return plan;
}

void scalar_op(BinaryOp op, const float* x, float c, float* y, std::int64_t n) {
  parallel_for(n, 1, [&](std::int64_t begin, std::int64_t end) {
    switch (op) {
      case BinaryOp::Add: row_loop<BinaryOp::Add>(x + begin, true, &c, false, y + begin, end - begin); break;
      case BinaryOp::Sub: row_loop<BinaryOp::Sub>(x + begin, true, &c, false, y + begin, end - begin); break;
      case BinaryOp::Mul: row_loop<BinaryOp::Mul>(x + begin, true, &c, false, y + begin, end - begin); break;
      case BinaryOp::Div: row_loop<BinaryOp::Div>(x + begin, true, &c, false, y + begin, end - begin); break;
    }
  });
}

void axpy_cpu(float* dst, float alpha, const float* src, std::int64_t n) {
  parallel_for(n, 1, [&](std::int64_t begin, std::int64_t end) {
#pragma omp simd
    for (std::int64_t i = begin; i < end; ++i) dst[i] = axpy_apply(dst[i], alpha, src[i]);
  });
}

Tensor scalar_tensor_op(BinaryOp op, const Tensor& x, float c, const char* name) {
  TOPO_PROFILE(Elementwise);
  check_dtype(x, DType::F32, name, "x");
  Tensor y = Tensor::empty(x.shape(), DType::F32, x.device());
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  const std::int64_t n = x.numel();
  if (n == 0) return y;
  TOPO_ON_DEVICE(x.device(), scalar_op(op, xp, c, yp, n), cuda::binary_scalar(op, xp, c, yp, n));
  return y;
}

}  // namespace

Shape broadcast_shape(const Shape& a, const Shape& b) {
  const std::size_t nd = std::max(a.size(), b.size());
  Shape out(nd);
  for (std::size_t d = 0; d < nd; ++d) {
    const std::int64_t da = aligned_dim(a, nd, d), db = aligned_dim(b, nd, d);
    TOPO_CHECK(da == db || da == 1 || db == 1, "shapes {} and {} do not broadcast (dim {}: {} vs {})", shape_str(a),
               shape_str(b), d, da, db);
    out[d] = da == 1 ? db : da;
  }
  return out;
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  TOPO_PROFILE(Elementwise);
  check_dtype(a, DType::F32, "binary", "a");
  check_dtype(b, DType::F32, "binary", "b");
  check_same_device(a, b, "binary");
  const Shape out_shape = broadcast_shape(a.shape(), b.shape());
  Tensor c = Tensor::empty(out_shape, DType::F32, a.device());
  const std::int64_t n = c.numel();
  if (n == 0) return c;
  const BroadcastPlan plan = make_plan(a.shape(), b.shape(), out_shape);
  const float *ap = a.data<float>(), *bp = b.data<float>();
  float* cp = c.data<float>();
  TOPO_ON_DEVICE(a.device(), binary_cpu(op, plan, ap, bp, cp, n), cuda::binary(op, plan, ap, bp, cp, n));
  return c;
}

Tensor add_scalar(const Tensor& x, float c) { return scalar_tensor_op(BinaryOp::Add, x, c, "add_scalar"); }
Tensor mul_scalar(const Tensor& x, float c) { return scalar_tensor_op(BinaryOp::Mul, x, c, "mul_scalar"); }

// Collapses grad's dims into alternating kept/summed runs, then sums each summed run with reduce(): one pass per
// run, and the usual cases (bias gradient [R, D] -> [D], keepdim column [R, D] -> [R, 1]) are a single pass.
Tensor sum_to_shape(const Tensor& grad, const Shape& shape) {
  TOPO_PROFILE(Elementwise);
  check_dtype(grad, DType::F32, "sum_to_shape", "grad");
  const Shape& g = grad.shape();
  TOPO_CHECK(shape.size() <= g.size(), "sum_to_shape: {} cannot be summed to {} (more dims)", shape_str(g),
             shape_str(shape));
  for (std::size_t d = 0; d < g.size(); ++d) {
    const std::int64_t t = aligned_dim(shape, g.size(), d);
    TOPO_CHECK(t == g[d] || t == 1, "sum_to_shape: {} cannot be summed to {} (dim {}: {} vs {})", shape_str(g),
               shape_str(shape), d, g[d], t);
  }
  Shape runs;
  std::vector<bool> summed;
  for (std::size_t d = 0; d < g.size(); ++d) {
    if (g[d] == 1) continue;
    const bool s = aligned_dim(shape, g.size(), d) == 1;
    if (!runs.empty() && summed.back() == s)
      runs.back() *= g[d];
    else {
      runs.push_back(g[d]);
      summed.push_back(s);
    }
  }
  Tensor current = grad.reshape(runs);
  bool any = false;
  for (int d = static_cast<int>(runs.size()) - 1; d >= 0; --d) {
    if (!summed[d]) continue;
    current = reduce(ReduceOp::Sum, current, d, /*keepdim=*/true);
    any = true;
  }
  if (!any) current = current.clone();  // never alias the incoming gradient
  return current.reshape(shape);
}

void axpy_(Tensor& dst, float alpha, const Tensor& src) {
  TOPO_PROFILE(Elementwise);
  check_dtype(dst, DType::F32, "axpy_", "dst");
  check_dtype(src, DType::F32, "axpy_", "src");
  check_same_shape(dst, src, "axpy_");
  check_same_device(dst, src, "axpy_");
  float* dp = dst.data<float>();
  const float* sp = src.data<float>();
  const std::int64_t n = dst.numel();
  if (n == 0) return;
  TOPO_ON_DEVICE(dst.device(), axpy_cpu(dp, alpha, sp, n), cuda::axpy(dp, alpha, sp, n));
}

void fill_(Tensor& dst, float value) {
  TOPO_PROFILE(Elementwise);
  check_dtype(dst, DType::F32, "fill_", "dst");
  float* dp = dst.data<float>();
  const std::int64_t n = dst.numel();
  if (n == 0) return;
  TOPO_ON_DEVICE(
      dst.device(),
      parallel_for(n, 1, [&](std::int64_t begin, std::int64_t end) { std::fill(dp + begin, dp + end, value); }),
      cuda::fill(dp, value, n));
}

}  // namespace topo
