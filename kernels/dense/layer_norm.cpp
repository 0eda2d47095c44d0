// Layer normalisation over the last dim D. CPU strategy:
//  - forward: rows split across threads; per row, mean then variance then normalise, all while the row
//    (a few hundred floats) sits in L1, so memory sees one read of x and one write of y.
//  - backward: rows are cut into a fixed number of chunks (independent of the thread count); each chunk
//    computes dx row by row and accumulates its own dgamma/dbeta partial rows; the partials are then summed in
//    chunk order. Deterministic, no atomics. Per-element math in layer_norm_math.hpp.
#include "kernels/dense/layer_norm.hpp"

#include <algorithm>
#include <vector>

#include "kernels/profile.hpp"
#include "kernels/dense/layer_norm_math.hpp"
#include "kernels/dense/reduce_math.hpp"
#include "kernels/dense/binary.hpp"
#include "kernels/dense/unary.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/parallel.hpp"

namespace topo {
namespace {

// in(r, k): element k of row r of the normalised input (x, or h + relu(x) for the residual epilogue).
template <class In>
void forward_cpu(In in, const float* gamma, const float* beta, float* y, float* mean, float* rstd, std::int64_t rows,
                 std::int64_t d, float eps) {
  parallel_for(rows, 6 * d, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      float* yr = y + r * d;
      const float m = lane_sum(d, [&](std::int64_t k) { return in(r, k); }) / static_cast<float>(d);
      const float v = lane_sum(d, [&](std::int64_t k) { return (in(r, k) - m) * (in(r, k) - m); });
      const float rs = layer_norm_rstd(v / static_cast<float>(d), eps);
#pragma omp simd
      for (std::int64_t k = 0; k < d; ++k) yr[k] = layer_norm_apply(in(r, k), m, rs, gamma[k], beta[k]);
      mean[r] = m;
      rstd[r] = rs;
    }
  });
}

// partials: [chunks, 2, d] (dgamma then dbeta per chunk). in(r, k) as in forward_cpu; out(r, k, dx) stores the
// input's gradient (dx; for the residual epilogue dh = dx and dx_update = dx where x > 0).
template <class In, class Out>
void backward_cpu(const float* g, In in, const float* gamma, const float* mean, const float* rstd, Out out,
                  float* dgamma, float* dbeta, std::int64_t rows, std::int64_t d) {
  const std::int64_t chunks = std::min<std::int64_t>(rows, 64);
  const std::int64_t per_chunk = (rows + chunks - 1) / chunks;
  std::vector<float> partials(static_cast<std::size_t>(chunks * 2 * d), 0.f);
  float* pp = partials.data();
  parallel_for(chunks, per_chunk * 8 * d, [&](std::int64_t cb, std::int64_t ce) {
    for (std::int64_t c = cb; c < ce; ++c) {
      float* pg = pp + c * 2 * d;
      float* pb = pg + d;
      for (std::int64_t r = c * per_chunk; r < std::min(rows, (c + 1) * per_chunk); ++r) {
        const float* gr = g + r * d;
        const float m = mean[r], rs = rstd[r];
        // Row sums and the dgamma/dbeta partials in separate loops: gcc vectorizes each cleanly, and the
        // row is in L1 after the first.
        const float sd = lane_sum(d, [&](std::int64_t k) { return gr[k] * gamma[k]; });
        const float sdx = lane_sum(d, [&](std::int64_t k) { return gr[k] * gamma[k] * ((in(r, k) - m) * rs); });
#pragma omp simd
        for (std::int64_t k = 0; k < d; ++k) {
          pg[k] += gr[k] * ((in(r, k) - m) * rs);
          pb[k] += gr[k];
        }
        const float md = sd / static_cast<float>(d), mdx = sdx / static_cast<float>(d);
#pragma omp simd
        for (std::int64_t k = 0; k < d; ++k) out(r, k, layer_norm_dx(gr[k] * gamma[k], (in(r, k) - m) * rs, rs, md, mdx));
      }
    }
  });
  for (std::int64_t k = 0; k < d; ++k) layer_norm_param_combine(pp, dgamma, dbeta, chunks, d, k);
}

void check_param(const Tensor& p, const Tensor& x, std::int64_t d, const char* name, const char* op) {
  if (!p.defined()) return;
  check_dtype(p, DType::F32, op, name);
  check_same_device(p, x, op);
  TOPO_CHECK(p.shape() == Shape{d}, "{}: {} must be [{}] for x {}, got {}", op, name, d, shape_str(x.shape()),
             shape_str(p.shape()));
}

// Checks x, gamma, beta, eps and allocates y, mean, rstd.
LayerNormOutput layer_norm_outputs(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, const char* op) {
  check_dtype(x, DType::F32, op, "x");
  TOPO_CHECK(x.ndim() >= 1 && x.size(-1) > 0, "{}: x must have a non-empty last dim, got {}", op, x.str());
  TOPO_CHECK(eps >= 0.f, "{}: eps must be >= 0, got {}", op, eps);
  const std::int64_t d = x.size(-1), rows = x.numel() / d;
  check_param(gamma, x, d, "gamma", op);
  check_param(beta, x, d, "beta", op);
  return {Tensor::empty(x.shape(), DType::F32, x.device()), Tensor::empty({rows}, DType::F32, x.device()),
          Tensor::empty({rows}, DType::F32, x.device())};
}

void check_backward_inputs(const Tensor& grad, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                           const Tensor& mean, const Tensor& rstd, const char* op) {
  check_dtype(grad, DType::F32, op, "grad");
  check_dtype(x, DType::F32, op, "x");
  check_same_shape(grad, x, op);
  check_same_device(grad, x, op);
  TOPO_CHECK(x.ndim() >= 1 && x.size(-1) > 0, "{}: x must have a non-empty last dim, got {}", op, x.str());
  const std::int64_t d = x.size(-1), rows = x.numel() / d;
  check_param(gamma, x, d, "gamma", op);
  check_param(beta, x, d, "beta", op);
  for (const Tensor* stat : {&mean, &rstd}) {
    check_dtype(*stat, DType::F32, op, "mean/rstd");
    check_same_device(*stat, x, op);
    TOPO_CHECK(stat->numel() == rows, "{}: mean/rstd {} must hold {} rows of x {}", op, shape_str(stat->shape()), rows,
               shape_str(x.shape()));
  }
}

// CPU gamma / beta: missing ones become ones / zeros so the row loops stay branch-free.
struct Params {
  std::vector<float> ones, zeros;
  const float *gamma, *beta;
  Params(const Tensor& g, const Tensor& b, std::int64_t d) {
    gamma = g.defined() ? g.data<float>() : (ones.assign(static_cast<std::size_t>(d), 1.f), ones.data());
    beta = b.defined() ? b.data<float>() : (zeros.assign(static_cast<std::size_t>(d), 0.f), zeros.data());
  }
};

}  // namespace

LayerNormOutput layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps) {
  TOPO_PROFILE(LayerNorm);
  LayerNormOutput out = layer_norm_outputs(x, gamma, beta, eps, "layer_norm");
  const std::int64_t d = x.size(-1), rows = x.numel() / d;
  if (rows == 0) return out;
  const float* xp = x.data<float>();
  float *yp = out.y.data<float>(), *mp = out.mean.data<float>(), *rp = out.rstd.data<float>();
  if (x.device().is_cuda()) {
    [[maybe_unused]] const float* gp = gamma.defined() ? gamma.data<float>() : nullptr;
    [[maybe_unused]] const float* bp = beta.defined() ? beta.data<float>() : nullptr;
    TOPO_ON_DEVICE(x.device(), (void)0, cuda::layer_norm_forward(xp, gp, bp, yp, mp, rp, rows, d, eps));
    return out;
  }
  const Params params(gamma, beta, d);
  forward_cpu([xp, d](std::int64_t r, std::int64_t k) { return xp[r * d + k]; }, params.gamma, params.beta, yp, mp, rp,
              rows, d, eps);
  return out;
}

LayerNormGrads layer_norm_backward(const Tensor& grad, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                   const Tensor& mean, const Tensor& rstd) {
  TOPO_PROFILE(LayerNorm);
  check_backward_inputs(grad, x, gamma, beta, mean, rstd, "layer_norm_backward");
  const std::int64_t d = x.size(-1), rows = x.numel() / d;
  LayerNormGrads out;
  out.dx = Tensor::empty(x.shape(), DType::F32, x.device());
  if (gamma.defined()) out.dgamma = Tensor::zeros({d}, DType::F32, x.device());
  if (beta.defined()) out.dbeta = Tensor::zeros({d}, DType::F32, x.device());
  if (rows == 0) return out;
  const float *gp = grad.data<float>(), *xp = x.data<float>(), *mp = mean.data<float>(), *rp = rstd.data<float>();
  float* dxp = out.dx.data<float>();
  float* dgp = gamma.defined() ? out.dgamma.data<float>() : nullptr;
  float* dbp = beta.defined() ? out.dbeta.data<float>() : nullptr;
  if (x.device().is_cuda()) {
    [[maybe_unused]] const float* gammap = gamma.defined() ? gamma.data<float>() : nullptr;
    Tensor partials =
        Tensor::empty({cuda::layer_norm_partial_count(rows), 2, d}, DType::F32, x.device());
    float* pp = partials.data<float>();
    TOPO_ON_DEVICE(x.device(), (void)pp,
                   cuda::layer_norm_backward(gp, xp, gammap, mp, rp, dxp, dgp, dbp, pp, rows, d));
    return out;
  }
  const Params params(gamma, Tensor(), d);
  backward_cpu(
      gp, [xp, d](std::int64_t r, std::int64_t k) { return xp[r * d + k]; }, params.gamma, mp, rp,
      [dxp, d](std::int64_t r, std::int64_t k, float v) { dxp[r * d + k] = v; }, dgp, dbp, rows, d);
  return out;
}

// The residual epilogue. CPU: the loops above with h + relu(x) as the row (recomputed in each sweep while the
// row is in L1; the backward reads h and x again instead of a stored sum). CUDA: the composition of the
// existing kernels (add, relu, layer_norm and their backwards).
LayerNormOutput residual_relu_layer_norm(const Tensor& h, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                         float eps) {
  const char* op = "residual_relu_layer_norm";
  check_dtype(h, DType::F32, op, "h");
  check_same_shape(h, x, op);
  check_same_device(h, x, op);
  if (h.device().is_cuda()) return layer_norm(binary(BinaryOp::Add, h, unary(UnaryOp::Relu, x)), gamma, beta, eps);
  LayerNormOutput out = layer_norm_outputs(x, gamma, beta, eps, op);
  const std::int64_t d = x.size(-1), rows = x.numel() / d;
  if (rows == 0) return out;
  TOPO_PROFILE(LayerNorm);
  const float *hp = h.data<float>(), *xp = x.data<float>();
  const Params params(gamma, beta, d);
  forward_cpu([hp, xp, d](std::int64_t r, std::int64_t k) { return residual_relu(hp[r * d + k], xp[r * d + k]); },
              params.gamma, params.beta, out.y.data<float>(), out.mean.data<float>(), out.rstd.data<float>(), rows, d,
              eps);
  return out;
}

ResidualLayerNormGrads residual_relu_layer_norm_backward(const Tensor& grad, const Tensor& h, const Tensor& x,
                                                         const Tensor& gamma, const Tensor& beta, const Tensor& mean,
                                                         const Tensor& rstd) {
  const char* op = "residual_relu_layer_norm_backward";
  check_same_shape(h, x, op);
  check_same_device(h, x, op);
  if (h.device().is_cuda()) {
    const Tensor relu_x = unary(UnaryOp::Relu, x);
    LayerNormGrads g = layer_norm_backward(grad, binary(BinaryOp::Add, h, relu_x), gamma, beta, mean, rstd);
    return {g.dx, unary_backward(UnaryOp::Relu, g.dx, x, relu_x), g.dgamma, g.dbeta};
  }
  check_backward_inputs(grad, x, gamma, beta, mean, rstd, op);
  const std::int64_t d = x.size(-1), rows = x.numel() / d;
  ResidualLayerNormGrads out{Tensor::empty(x.shape()), Tensor::empty(x.shape()),
                             gamma.defined() ? Tensor::zeros({d}) : Tensor(), beta.defined() ? Tensor::zeros({d}) : Tensor()};
  if (rows == 0) return out;
  TOPO_PROFILE(LayerNorm);
  const float *hp = h.data<float>(), *xp = x.data<float>();
  float *dhp = out.dh.data<float>(), *dxp = out.dx.data<float>();
  const Params params(gamma, Tensor(), d);
  backward_cpu(
      grad.data<float>(),
      [hp, xp, d](std::int64_t r, std::int64_t k) { return residual_relu(hp[r * d + k], xp[r * d + k]); },
      params.gamma, mean.data<float>(), rstd.data<float>(),
      [xp, dhp, dxp, d](std::int64_t r, std::int64_t k, float v) {
        dhp[r * d + k] = v;
        dxp[r * d + k] = relu_pass(xp[r * d + k], v);
      },
      gamma.defined() ? out.dgamma.data<float>() : nullptr, beta.defined() ? out.dbeta.data<float>() : nullptr, rows, d);
  return out;
}

}  // namespace topo
