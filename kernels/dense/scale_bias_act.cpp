// The fused epilogue y = act(s_r * x + b). CPU strategy: rows in contiguous chunks across OpenMP threads, each
// row one vectorised loop over its columns with the activation a template constant (as in unary.cpp). The
// backward's column sums (the bias gradient) go through per-block partials of kBlockRows rows, summed over
// the blocks in order: the same bits at any thread count.
#include "kernels/dense/scale_bias_act.hpp"

#include <vector>

#include "kernels/dense/reduce.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/parallel.hpp"
#include "kernels/profile.hpp"

namespace topo {
namespace {

constexpr std::int64_t kBlockRows = 1024;

template <EpilogueAct Act>
void forward_rows(const float* x, const float* scale, const float* bias, float* y, std::int64_t rows,
                  std::int64_t cols, float slope) {
  parallel_for(rows, cols, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t r = b; r < e; ++r) {
      const float s = scale ? scale[r] : 1.f;
      const float* xr = x + r * cols;
      float* yr = y + r * cols;
      if (bias) {
#pragma omp simd
        for (std::int64_t c = 0; c < cols; ++c) yr[c] = epilogue_act(Act, s * xr[c] + bias[c], slope);
      } else {
#pragma omp simd
        for (std::int64_t c = 0; c < cols; ++c) yr[c] = epilogue_act(Act, s * xr[c], slope);
      }
    }
  });
}

// dz (into dx's rows, then scaled there) and, with partials, each block's column sums of dz.
template <EpilogueAct Act>
void backward_rows(const float* g, const float* y, const float* scale, float* dx, float* partials, std::int64_t rows,
                   std::int64_t cols, float slope) {
  const std::int64_t blocks = (rows + kBlockRows - 1) / kBlockRows;
  parallel_for(blocks, kBlockRows * cols, [&](std::int64_t bb, std::int64_t be) {
    std::vector<float> dz(static_cast<std::size_t>(cols));
    for (std::int64_t blk = bb; blk < be; ++blk) {
      float* sums = partials ? partials + blk * cols : nullptr;
      if (sums) std::fill(sums, sums + cols, 0.f);
      const std::int64_t r_end = std::min(rows, (blk + 1) * kBlockRows);
      for (std::int64_t r = blk * kBlockRows; r < r_end; ++r) {
        const float* gr = g + r * cols;
        const float* yr = y + r * cols;
        float* d = dz.data();
#pragma omp simd
        for (std::int64_t c = 0; c < cols; ++c) d[c] = epilogue_act_grad(Act, gr[c], yr[c], slope);
        if (sums) {
#pragma omp simd
          for (std::int64_t c = 0; c < cols; ++c) sums[c] += d[c];
        }
        if (dx) {
          const float s = scale ? scale[r] : 1.f;
          float* xr = dx + r * cols;
#pragma omp simd
          for (std::int64_t c = 0; c < cols; ++c) xr[c] = s * d[c];
        }
      }
    }
  });
}

#define TOPO_EPILOGUE_CASES(CALL)                                  \
  switch (act) {                                                   \
    case EpilogueAct::Identity: CALL(EpilogueAct::Identity); break; \
    case EpilogueAct::Relu: CALL(EpilogueAct::Relu); break;         \
    case EpilogueAct::LeakyRelu: CALL(EpilogueAct::LeakyRelu); break; \
    case EpilogueAct::Tanh: CALL(EpilogueAct::Tanh); break;         \
    case EpilogueAct::Sigmoid: CALL(EpilogueAct::Sigmoid); break;   \
    case EpilogueAct::Elu: CALL(EpilogueAct::Elu); break;           \
  }

void forward_cpu(const float* x, const float* scale, const float* bias, float* y, std::int64_t rows, std::int64_t cols,
                 EpilogueAct act, float slope) {
#define TOPO_CALL(ACT) forward_rows<ACT>(x, scale, bias, y, rows, cols, slope)
  TOPO_EPILOGUE_CASES(TOPO_CALL)
#undef TOPO_CALL
}

void backward_cpu(const float* g, const float* y, const float* scale, float* dx, float* partials, std::int64_t rows,
                  std::int64_t cols, EpilogueAct act, float slope) {
#define TOPO_CALL(ACT) backward_rows<ACT>(g, y, scale, dx, partials, rows, cols, slope)
  TOPO_EPILOGUE_CASES(TOPO_CALL)
#undef TOPO_CALL
}
#undef TOPO_EPILOGUE_CASES

struct Layout {
  std::int64_t rows = 0, cols = 0;
};

Layout check_operands(const Tensor& x, const Tensor& row_scale, EpilogueAct act, float slope, const char* op) {
  check_dtype(x, DType::F32, op, "x");
  TOPO_CHECK(x.ndim() >= 1, "{}: x must have a row dimension, got a 0-d tensor", op);
  TOPO_CHECK(act != EpilogueAct::LeakyRelu || slope > 0.f,
             "{}: leaky relu's slope must be positive here (its gradient is read from the output), got {}", op, slope);
  Layout l;
  l.rows = x.size(0);
  l.cols = l.rows == 0 ? 0 : x.numel() / l.rows;
  if (row_scale.defined()) {
    check_dtype(row_scale, DType::F32, op, "row_scale");
    check_same_device(x, row_scale, op);
    TOPO_CHECK(row_scale.numel() == l.rows, "{}: row_scale has {} elements for {} rows of {}", op, row_scale.numel(),
               l.rows, shape_str(x.shape()));
  }
  return l;
}

}  // namespace

Tensor scale_bias_act(const Tensor& x, const Tensor& row_scale, const Tensor& bias, EpilogueAct act, float slope) {
  TOPO_PROFILE(Elementwise);
  const char* op = "scale_bias_act";
  const Layout l = check_operands(x, row_scale, act, slope, op);
  if (bias.defined()) {
    check_dtype(bias, DType::F32, op, "bias");
    check_same_device(x, bias, op);
    TOPO_CHECK(bias.numel() == l.cols, "{}: bias has {} elements for rows of {} in {}", op, bias.numel(), l.cols,
               shape_str(x.shape()));
  }
  Tensor y = Tensor::empty(x.shape(), DType::F32, x.device());
  if (y.numel() == 0) return y;
  const float* sp = row_scale.defined() ? row_scale.data<float>() : nullptr;
  const float* bp = bias.defined() ? bias.data<float>() : nullptr;
  TOPO_ON_DEVICE(x.device(), forward_cpu(x.data<float>(), sp, bp, y.data<float>(), l.rows, l.cols, act, slope),
                 cuda::scale_bias_act_forward(x.data<float>(), sp, bp, y.data<float>(), l.rows, l.cols, act, slope));
  return y;
}

ScaleBiasActGrads scale_bias_act_backward(const Tensor& grad, const Tensor& y, const Tensor& row_scale, bool want_dx,
                                          const std::optional<Shape>& bias_shape, EpilogueAct act, float slope) {
  TOPO_PROFILE(Elementwise);
  const char* op = "scale_bias_act_backward";
  const Layout l = check_operands(y, row_scale, act, slope, op);
  check_same_shape(grad, y, op);
  check_same_device(grad, y, op);
  if (bias_shape)
    TOPO_CHECK(shape_numel(*bias_shape) == l.cols, "{}: bias shape {} for rows of {} in {}", op,
               shape_str(*bias_shape), l.cols, shape_str(y.shape()));
  ScaleBiasActGrads out;
  if (want_dx) out.dx = Tensor::empty(y.shape(), DType::F32, y.device());
  if (!want_dx && !bias_shape) return out;
  const float* sp = row_scale.defined() ? row_scale.data<float>() : nullptr;
  const float *gp = grad.data<float>(), *yp = y.data<float>();
  if (y.device().is_cuda()) {
    // dz = act'(y) * grad on the device, for the bias's column sums through the reduce kernel; without a scale
    // it is dx itself.
    Tensor dz;
    if (bias_shape) dz = want_dx && !sp ? out.dx : Tensor::empty(y.shape(), DType::F32, y.device());
    // Read only by the CUDA call, which a CPU-only build compiles away.
    [[maybe_unused]] float* dzp = dz.defined() ? dz.data<float>() : nullptr;
    [[maybe_unused]] float* dxp =
        want_dx && !(dz.defined() && dz.data<float>() == out.dx.data<float>()) ? out.dx.data<float>() : nullptr;
    TOPO_ON_DEVICE(y.device(), (void)0, cuda::scale_bias_act_backward(gp, yp, sp, dzp, dxp, l.rows, l.cols, act, slope));
    if (bias_shape) out.dbias = sum(dz.reshape({l.rows, l.cols}), 0).reshape(*bias_shape);
    return out;
  }
  std::vector<float> partials;
  if (bias_shape) partials.resize(static_cast<std::size_t>(((l.rows + kBlockRows - 1) / kBlockRows) * l.cols));
  backward_cpu(gp, yp, sp, want_dx ? out.dx.data<float>() : nullptr, bias_shape ? partials.data() : nullptr, l.rows,
               l.cols, act, slope);
  if (bias_shape) {
    std::vector<float> sums(static_cast<std::size_t>(l.cols), 0.f);
    for (std::size_t i = 0; i < partials.size(); ++i) sums[i % sums.size()] += partials[i];
    out.dbias = Tensor::from_vector(sums, *bias_shape, y.device());
  }
  return out;
}

}  // namespace topo
