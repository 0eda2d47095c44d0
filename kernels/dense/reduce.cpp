// Reductions along one dim, sum_all and reduce_backward. x is viewed as [outer, n, inner].
// CPU strategy:
//  - inner == 1 (reducing the last dim): rows of n contiguous floats, rows split across threads; each row is
//    accumulated in 16 independent lanes so the loop vectorizes, then the lanes are combined.
//  - inner > 1: work items are (outer index, block of <= 4096 inner positions, part of n), split across
//    threads; each item keeps its block of accumulators on the stack (L1) and streams its rows into it, so
//    memory is read in contiguous runs of up to 16 KiB and the inner loop vectorizes over `inner`. Parts of n (for long
//    reduced dims, e.g. a bias gradient [R, D] -> [D]) are combined afterwards in a fixed order.
//  - reduce_backward: rows of n when inner == 1, else rows of inner; either way a contiguous simd loop.
//  - sum_all: fixed chunks of 64 Ki elements (independent of the thread count, so the result is
//    deterministic); runs of 1 Ki summed in lanes, the runs and chunks combined in order in double.
#include "kernels/dense/reduce.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/profile.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/parallel.hpp"

namespace topo {
namespace {

constexpr int kLanes = 16;
constexpr std::int64_t kBlock = 4096;  // 16 KiB row segments: runs long enough for the prefetcher

// Sum or max of a contiguous row of n >= 1 floats.
template <ReduceOp OP>
float reduce_row(const float* x, std::int64_t n) {
  float lanes[kLanes];
  const float init = OP == ReduceOp::Max ? x[0] : 0.f;
  for (int l = 0; l < kLanes; ++l) lanes[l] = init;
  std::int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes) {
#pragma omp simd
    for (int l = 0; l < kLanes; ++l) lanes[l] = reduce_combine(OP, lanes[l], x[k + l]);
  }
  float acc = init;
  for (int l = 0; l < kLanes; ++l) acc = reduce_combine(OP, acc, lanes[l]);
  for (; k < n; ++k) acc = reduce_combine(OP, acc, x[k]);
  return acc;
}

// Sum of n contiguous floats in fixed 64 Ki chunks (thread-count independent, deterministic). Within a chunk,
// runs of 1 Ki floats are summed in float lanes (64 terms per lane) and the runs in double: a lane that ran
// over a whole chunk (4 Ki terms) drifted by ~1e-3 on a million U(-1,1) values, ten times CUDA's tree sum.
float sum_all_cpu(const float* x, std::int64_t n) {
  constexpr std::int64_t kChunk = 1 << 16, kRun = 1 << 10;
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<double> part(static_cast<std::size_t>(chunks));
  parallel_for(chunks, kChunk, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t c = begin; c < end; ++c) {
      const std::int64_t chunk_end = std::min(n, (c + 1) * kChunk);
      double acc = 0;
      for (std::int64_t r = c * kChunk; r < chunk_end; r += kRun)
        acc += reduce_row<ReduceOp::Sum>(x + r, std::min(kRun, chunk_end - r));
      part[c] = acc;
    }
  });
  double total = 0;
  for (double p : part) total += p;
  return static_cast<float>(total);
}

template <ReduceOp OP>
void reduce_cpu(const float* x, float* y, std::int64_t* argmax, std::int64_t outer, std::int64_t n,
                std::int64_t inner) {
  if (inner == 1 && OP != ReduceOp::Max && outer < 4 && n >= (std::int64_t{1} << 17)) {
    // A few very long rows: split each row instead of the rows, or one thread would do all the work.
    for (std::int64_t o = 0; o < outer; ++o) y[o] = reduce_finish(OP, sum_all_cpu(x + o * n, n), n);
    return;
  }
  if (inner == 1) {
    parallel_for(outer, n, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t o = begin; o < end; ++o) {
        const float* row = x + o * n;
        if (n == 0) {
          y[o] = 0.f;
          continue;
        }
        const float r = reduce_row<OP>(row, n);
        y[o] = reduce_finish(OP, r, n);
        if (argmax) {  // first position of the maximum (0 when the row holds only NaN)
          std::int64_t k = 0;
          while (k < n && !(row[k] == r)) ++k;
          argmax[o] = k < n ? k : 0;
        }
      }
    });
    return;
  }
  // Work items: (o, block of inner, part of n). Parts split a long reduced dim so that few (o, block) pairs
  // still give every thread work; their number depends only on n, so results do not depend on the thread
  // count. Parts write partials that are combined below in part order.
  const std::int64_t blocks = (inner + kBlock - 1) / kBlock;
  const std::int64_t parts = std::clamp<std::int64_t>(n / 64, 1, 16);
  const std::int64_t per_part = (n + parts - 1) / parts;
  std::vector<float> part_val(parts > 1 ? static_cast<std::size_t>(parts * outer * inner) : 0);
  std::vector<std::int64_t> part_arg(parts > 1 && argmax ? part_val.size() : 0);
  float* pv = parts > 1 ? part_val.data() : y;              // [parts, outer, inner]
  std::int64_t* pa = parts > 1 ? part_arg.data() : argmax;  // idem, or null
  parallel_for(outer * blocks * parts, per_part * std::min(inner, kBlock), [&](std::int64_t begin, std::int64_t end) {
    float acc[kBlock];
    std::int32_t arg[kBlock];  // 32-bit so index blends are as wide as the float ones (n < 2^31 is checked)
    for (std::int64_t item = begin; item < end; ++item) {
      const std::int64_t p = item % parts, ob = item / parts;
      const std::int64_t o = ob / blocks, j0 = (ob % blocks) * kBlock, len = std::min(kBlock, inner - j0);
      const std::int64_t k0 = std::min(n, p * per_part), k1 = std::min(n, k0 + per_part);
      const float* base = x + o * n * inner + j0;
      if constexpr (OP == ReduceOp::Max) {
        for (std::int64_t j = 0; j < len; ++j) {
          acc[j] = k0 < k1 ? base[k0 * inner + j] : -INFINITY;
          arg[j] = static_cast<std::int32_t>(k0);
        }
        for (std::int64_t k = k0 + 1; k < k1; ++k) {
          const float* row = base + k * inner;
          if (pa) {
#pragma omp simd
            for (std::int64_t j = 0; j < len; ++j) {
              const bool greater = row[j] > acc[j];
              acc[j] = greater ? row[j] : acc[j];
              arg[j] = greater ? static_cast<std::int32_t>(k) : arg[j];
            }
          } else {  // no argmax wanted: a plain max, half the work
#pragma omp simd
            for (std::int64_t j = 0; j < len; ++j) acc[j] = reduce_combine(OP, acc[j], row[j]);
          }
        }
      } else {
        for (std::int64_t j = 0; j < len; ++j) acc[j] = 0.f;
        for (std::int64_t k = k0; k < k1; ++k) {
          const float* row = base + k * inner;
#pragma omp simd
          for (std::int64_t j = 0; j < len; ++j) acc[j] = reduce_combine(OP, acc[j], row[j]);
        }
      }
      float* out = pv + (p * outer + o) * inner + j0;
      if (parts > 1)
        std::copy(acc, acc + len, out);
      else
        for (std::int64_t j = 0; j < len; ++j) out[j] = reduce_finish(OP, acc[j], n);
      if constexpr (OP == ReduceOp::Max) {
        if (pa) std::copy(arg, arg + len, pa + (p * outer + o) * inner + j0);
      }
    }
  });
  if (parts == 1) return;
  const std::int64_t total = outer * inner;
  parallel_for(total, parts, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      float acc = pv[i];
      std::int64_t arg = pa ? pa[i] : 0;
      for (std::int64_t p = 1; p < parts; ++p) {
        const float v = pv[p * total + i];
        if (OP == ReduceOp::Max && pa && v > acc) arg = pa[p * total + i];
        acc = reduce_combine(OP, acc, v);
      }
      y[i] = reduce_finish(OP, acc, n);
      if (OP == ReduceOp::Max && argmax) argmax[i] = arg;
    }
  });
}

template <ReduceOp OP>
void reduce_backward_cpu(const float* g, const std::int64_t* argmax, float* dx, std::int64_t outer, std::int64_t n,
                         std::int64_t inner) {
  if (inner == 1) {  // rows of n along the reduced dim: contiguous over k
    parallel_for(outer, n, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t o = begin; o < end; ++o) {
        const float go = g[o];
        const std::int64_t arg = OP == ReduceOp::Max ? argmax[o] : 0;
        float* out = dx + o * n;
#pragma omp simd
        for (std::int64_t k = 0; k < n; ++k) out[k] = reduce_grad(OP, go, n, k, arg);
      }
    });
    return;
  }
  parallel_for(outer * n, inner, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const std::int64_t o = r / n, k = r % n;
      const float* gr = g + o * inner;
      float* out = dx + r * inner;
      if constexpr (OP == ReduceOp::Max) {
        const std::int64_t* ar = argmax + o * inner;
#pragma omp simd
        for (std::int64_t j = 0; j < inner; ++j) out[j] = reduce_grad(OP, gr[j], n, k, ar[j]);
      } else {
#pragma omp simd
        for (std::int64_t j = 0; j < inner; ++j) out[j] = reduce_grad(OP, gr[j], n, k, 0);
      }
    }
  });
}

#if TOPO_WITH_CUDA
// Allocates the partials scratch the CUDA strided reduction needs for long reduced dims, then launches.
void reduce_cuda(ReduceOp op, const float* x, float* y, std::int64_t* argmax, std::int64_t outer, std::int64_t n,
                 std::int64_t inner, Device device) {
  const std::int64_t parts = cuda::reduce_parts(outer, n, inner);
  Tensor part_val, part_arg;
  if (parts > 1) {
    part_val = Tensor::empty({parts, outer * inner}, DType::F32, device);
    if (argmax) part_arg = Tensor::empty({parts, outer * inner}, DType::I64, device);
  }
  cuda::reduce_dim(op, x, y, argmax, outer, n, inner, parts > 1 ? part_val.data<float>() : nullptr,
                   part_arg.defined() ? part_arg.data<std::int64_t>() : nullptr);
}
#endif

struct View {
  std::int64_t outer = 1, n = 1, inner = 1;
  int dim = 0;
};
View view_of(const Shape& shape, int dim, const char* op) {
  const int nd = static_cast<int>(shape.size());
  TOPO_CHECK(dim >= -nd && dim < nd, "{}: dim {} out of range for shape {}", op, dim, shape_str(shape));
  View v;
  v.dim = dim < 0 ? dim + nd : dim;
  for (int d = 0; d < v.dim; ++d) v.outer *= shape[d];
  v.n = shape[v.dim];
  for (int d = v.dim + 1; d < nd; ++d) v.inner *= shape[d];
  return v;
}
Shape result_shape(const Shape& shape, int dim, bool keepdim) {
  Shape out = shape;
  if (keepdim)
    out[dim] = 1;
  else
    out.erase(out.begin() + dim);
  return out;
}

}  // namespace

Tensor reduce(ReduceOp op, const Tensor& x, int dim, bool keepdim, Tensor* argmax) {
  TOPO_PROFILE(Elementwise);
  check_dtype(x, DType::F32, "reduce", "x");
  const View v = view_of(x.shape(), dim, "reduce");
  TOPO_CHECK(!argmax || v.n < (std::int64_t{1} << 31), "reduce: argmax over dim {} of shape {} exceeds 2^31",
             dim, shape_str(x.shape()));
  TOPO_CHECK(op != ReduceOp::Max || v.n > 0, "reduce: max over the empty dim {} of shape {}", dim,
             shape_str(x.shape()));
  const Shape out_shape = result_shape(x.shape(), v.dim, keepdim);
  Tensor y = Tensor::empty(out_shape, DType::F32, x.device());
  std::int64_t* ap = nullptr;
  if (op == ReduceOp::Max && argmax) {
    *argmax = Tensor::empty(out_shape, DType::I64, x.device());
    ap = argmax->data<std::int64_t>();
  }
  if (y.numel() == 0) return y;
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  TOPO_ON_DEVICE(
      x.device(),
      switch (op) {
        case ReduceOp::Sum: reduce_cpu<ReduceOp::Sum>(xp, yp, nullptr, v.outer, v.n, v.inner); break;
        case ReduceOp::Mean: reduce_cpu<ReduceOp::Mean>(xp, yp, nullptr, v.outer, v.n, v.inner); break;
        case ReduceOp::Max: reduce_cpu<ReduceOp::Max>(xp, yp, ap, v.outer, v.n, v.inner); break;
      },
      reduce_cuda(op, xp, yp, ap, v.outer, v.n, v.inner, x.device()));
  return y;
}

Tensor sum_all(const Tensor& x) {
  TOPO_PROFILE(Elementwise);
  check_dtype(x, DType::F32, "sum_all", "x");
  Tensor out = Tensor::empty({}, DType::F32, x.device());
  const float* xp = x.data<float>();
  float* op = out.data<float>();
  const std::int64_t n = x.numel();
#if TOPO_WITH_CUDA
  if (x.device().is_cuda()) {
    Tensor partials = Tensor::empty({cuda::kSumAllPartials}, DType::F32, x.device());
    cuda::sum_all(xp, n, partials.data<float>(), op);
    return out;
  }
#endif
  TOPO_ON_DEVICE(x.device(), op[0] = sum_all_cpu(xp, n), (void)0);
  return out;
}

Tensor reduce_backward(ReduceOp op, const Tensor& grad, const Shape& input_shape, int dim, bool keepdim,
                       const Tensor& argmax) {
  check_dtype(grad, DType::F32, "reduce_backward", "grad");
  const View v = view_of(input_shape, dim, "reduce_backward");
  const Shape expected = result_shape(input_shape, v.dim, keepdim);
  TOPO_CHECK(grad.shape() == expected, "reduce_backward: grad {} does not match the result {} of reducing {} over {}",
             shape_str(grad.shape()), shape_str(expected), shape_str(input_shape), dim);
  const std::int64_t* ap = nullptr;
  if (op == ReduceOp::Max) {
    TOPO_CHECK(argmax.defined(), "reduce_backward: max needs the argmax of the forward pass");
    check_dtype(argmax, DType::I64, "reduce_backward", "argmax");
    check_same_shape(grad, argmax, "reduce_backward");
    check_same_device(grad, argmax, "reduce_backward");
    ap = argmax.data<std::int64_t>();
  }
  Tensor dx = Tensor::empty(input_shape, DType::F32, grad.device());
  if (dx.numel() == 0) return dx;
  const float* gp = grad.data<float>();
  float* dp = dx.data<float>();
  TOPO_ON_DEVICE(
      grad.device(),
      switch (op) {
        case ReduceOp::Sum: reduce_backward_cpu<ReduceOp::Sum>(gp, ap, dp, v.outer, v.n, v.inner); break;
        case ReduceOp::Mean: reduce_backward_cpu<ReduceOp::Mean>(gp, ap, dp, v.outer, v.n, v.inner); break;
        case ReduceOp::Max: reduce_backward_cpu<ReduceOp::Max>(gp, ap, dp, v.outer, v.n, v.inner); break;
      },
      cuda::reduce_dim_backward(op, gp, ap, dp, v.outer, v.n, v.inner));
  return dx;
}

}  // namespace topo
