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
#include "kernels/dispatch.hpp"
#include "kernels/parallel.hpp"

namespace topo {
namespace {

void forward_cpu(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                 std::int64_t rows, std::int64_t d, float eps) {
  parallel_for(rows, 6 * d, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const float* xr = x + r * d;
      float* yr = y + r * d;
      const float m = lane_sum(d, [&](std::int64_t k) { return xr[k]; }) / static_cast<float>(d);
      const float v = lane_sum(d, [&](std::int64_t k) { return (xr[k] - m) * (xr[k] - m); });
      const float rs = layer_norm_rstd(v / static_cast<float>(d), eps);
#pragma omp simd
      for (std::int64_t k = 0; k < d; ++k) yr[k] = layer_norm_apply(xr[k], m, rs, gamma[k], beta[k]);
      mean[r] = m;
      rstd[r] = rs;
    }
  });
}

// partials: [chunks, 2, d] (dgamma then dbeta per chunk).
void backward_cpu(const float* g, const float* x, const float* gamma, const float* mean, const float* rstd,
                  float* dx, float* dgamma, float* dbeta, std::int64_t rows, std::int64_t d) {
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
        const float* xr = x + r * d;
        float* dr = dx + r * d;
        const float m = mean[r], rs = rstd[r];
        // Row sums and the dgamma/dbeta partials in separate loops: gcc vectorizes each cleanly, and the
        // row is in L1 after the first.
        const float sd = lane_sum(d, [&](std::int64_t k) { return gr[k] * gamma[k]; });
        const float sdx = lane_sum(d, [&](std::int64_t k) { return gr[k] * gamma[k] * ((xr[k] - m) * rs); });
#pragma omp simd
        for (std::int64_t k = 0; k < d; ++k) {
          pg[k] += gr[k] * ((xr[k] - m) * rs);
          pb[k] += gr[k];
        }
        const float md = sd / static_cast<float>(d), mdx = sdx / static_cast<float>(d);
#pragma omp simd
        for (std::int64_t k = 0; k < d; ++k) dr[k] = layer_norm_dx(gr[k] * gamma[k], (xr[k] - m) * rs, rs, md, mdx);
      }
    }
  });
  for (std::int64_t k = 0; k < d; ++k) layer_norm_param_combine(pp, dgamma, dbeta, chunks, d, k);
}

void check_param(const Tensor& p, const Tensor& x, std::int64_t d, const char* name) {
  if (!p.defined()) return;
  check_dtype(p, DType::F32, "layer_norm", name);
  check_same_device(p, x, "layer_norm");
  TOPO_CHECK(p.shape() == Shape{d}, "layer_norm: {} must be [{}] for x {}, got {}", name, d, shape_str(x.shape()),
             shape_str(p.shape()));
}

}  // namespace

LayerNormOutput layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps) {
  TOPO_PROFILE(LayerNorm);
  check_dtype(x, DType::F32, "layer_norm", "x");
  TOPO_CHECK(x.ndim() >= 1 && x.size(-1) > 0, "layer_norm: x must have a non-empty last dim, got {}", x.str());
  TOPO_CHECK(eps >= 0.f, "layer_norm: eps must be >= 0, got {}", eps);
  const std::int64_t d = x.size(-1), rows = x.numel() / d;
  check_param(gamma, x, d, "gamma");
  check_param(beta, x, d, "beta");
  LayerNormOutput out{Tensor::empty(x.shape(), DType::F32, x.device()), Tensor::empty({rows}, DType::F32, x.device()),
                      Tensor::empty({rows}, DType::F32, x.device())};
  if (rows == 0) return out;
  const float* xp = x.data<float>();
  const float* gp = gamma.defined() ? gamma.data<float>() : nullptr;
  const float* bp = beta.defined() ? beta.data<float>() : nullptr;
  float *yp = out.y.data<float>(), *mp = out.mean.data<float>(), *rp = out.rstd.data<float>();
  if (x.device().is_cuda()) {
    TOPO_ON_DEVICE(x.device(), (void)0, cuda::layer_norm_forward(xp, gp, bp, yp, mp, rp, rows, d, eps));
    return out;
  }
  // Missing gamma / beta become ones / zeros so the row loop stays branch-free.
  std::vector<float> ones, zeros;
  if (!gp) gp = (ones.assign(static_cast<std::size_t>(d), 1.f), ones.data());
  if (!bp) bp = (zeros.assign(static_cast<std::size_t>(d), 0.f), zeros.data());
  forward_cpu(xp, gp, bp, yp, mp, rp, rows, d, eps);
  return out;
}

LayerNormGrads layer_norm_backward(const Tensor& grad, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                   const Tensor& mean, const Tensor& rstd) {
  TOPO_PROFILE(LayerNorm);
  check_dtype(grad, DType::F32, "layer_norm_backward", "grad");
  check_dtype(x, DType::F32, "layer_norm_backward", "x");
  check_same_shape(grad, x, "layer_norm_backward");
  check_same_device(grad, x, "layer_norm_backward");
  TOPO_CHECK(x.ndim() >= 1 && x.size(-1) > 0, "layer_norm_backward: x must have a non-empty last dim, got {}",
             x.str());
  const std::int64_t d = x.size(-1), rows = x.numel() / d;
  check_param(gamma, x, d, "gamma");
  check_param(beta, x, d, "beta");
  for (const Tensor* stat : {&mean, &rstd}) {
    check_dtype(*stat, DType::F32, "layer_norm_backward", "mean/rstd");
    check_same_device(*stat, x, "layer_norm_backward");
    TOPO_CHECK(stat->numel() == rows, "layer_norm_backward: mean/rstd {} must hold {} rows of x {}",
               shape_str(stat->shape()), rows, shape_str(x.shape()));
  }
  LayerNormGrads out;
  out.dx = Tensor::empty(x.shape(), DType::F32, x.device());
  if (gamma.defined()) out.dgamma = Tensor::zeros({d}, DType::F32, x.device());
  if (beta.defined()) out.dbeta = Tensor::zeros({d}, DType::F32, x.device());
  if (rows == 0) return out;
  const float *gp = grad.data<float>(), *xp = x.data<float>(), *mp = mean.data<float>(), *rp = rstd.data<float>();
  const float* gammap = gamma.defined() ? gamma.data<float>() : nullptr;
  float* dxp = out.dx.data<float>();
  float* dgp = gamma.defined() ? out.dgamma.data<float>() : nullptr;
  float* dbp = beta.defined() ? out.dbeta.data<float>() : nullptr;
  if (x.device().is_cuda()) {
    Tensor partials =
        Tensor::empty({cuda::layer_norm_partial_count(rows), 2, d}, DType::F32, x.device());
    float* pp = partials.data<float>();
    TOPO_ON_DEVICE(x.device(), (void)pp,
                   cuda::layer_norm_backward(gp, xp, gammap, mp, rp, dxp, dgp, dbp, pp, rows, d));
    return out;
  }
  std::vector<float> ones;
  if (!gammap) gammap = (ones.assign(static_cast<std::size_t>(d), 1.f), ones.data());
  backward_cpu(gp, xp, gammap, mp, rp, dxp, dgp, dbp, rows, d);
  return out;
}

}  // namespace topo
