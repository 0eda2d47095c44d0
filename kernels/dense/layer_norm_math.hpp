#pragma once
// Layer-norm math shared by the CPU and CUDA backends, per element of a row of D, given the row statistics.
// gamma / beta may be absent (scale 1, shift 0): callers pass has_gamma / has_beta flags.
#include <cmath>
#include <cstdint>

#include "kernels/hd.hpp"

namespace topo {

// rstd from the row's (biased) variance.
TOPO_HD float layer_norm_rstd(float var, float eps) { return 1.f / sqrtf(var + eps); }
// y = (x - mean) * rstd * gamma + beta
TOPO_HD float layer_norm_apply(float x, float mean, float rstd, float gamma, float beta) {
  return (x - mean) * rstd * gamma + beta;
}
// dx from dxhat = grad * gamma, xhat = (x - mean) * rstd and the row means of dxhat and dxhat * xhat:
// dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)).
TOPO_HD float layer_norm_dx(float dxhat, float xhat, float rstd, float mean_dxhat, float mean_dxhat_xhat) {
  return rstd * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat);
}

// The residual epilogue's row element and its update's gradient: s = h + relu(x); ds/dx passes where x > 0.
// (relu as unary_math.hpp's; fmaxf would be a libm call per element on the CPU, not a vector max.)
TOPO_HD float residual_relu(float h, float x) { return h + (x > 0.f ? x : 0.f); }
TOPO_HD float relu_pass(float x, float grad) { return x > 0.f ? grad : 0.f; }

// dgamma[k], dbeta[k] from per-chunk partial sums laid out [chunks][2][d] (gamma's, then beta's), added in
// chunk order so the result does not depend on threads or blocks. Either output may be null.
TOPO_HD void layer_norm_param_combine(const float* partials, float* dgamma, float* dbeta, std::int64_t chunks,
                                      std::int64_t d, std::int64_t k) {
  float sg = 0.f, sb = 0.f;
  for (std::int64_t c = 0; c < chunks; ++c) {
    sg += partials[c * 2 * d + k];
    sb += partials[c * 2 * d + d + k];
  }
  if (dgamma) dgamma[k] = sg;
  if (dbeta) dbeta[k] = sb;
}

namespace cuda {
// Device launchers (layer_norm_cuda.cu). x, y: [rows, d]; gamma, beta: [d] or null; mean, rstd: [rows].
void layer_norm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                        std::int64_t rows, std::int64_t d, float eps);
// dx: [rows, d]. dgamma / dbeta ([d], or null when not wanted) are summed over rows deterministically through
// `partials`, device scratch of layer_norm_partial_count(rows) * 2 * d floats.
inline std::int64_t layer_norm_partial_count(std::int64_t rows) { return rows < 256 ? rows : 256; }
void layer_norm_backward(const float* grad, const float* x, const float* gamma, const float* mean, const float* rstd,
                         float* dx, float* dgamma, float* dbeta, float* partials, std::int64_t rows, std::int64_t d);
}  // namespace cuda

}  // namespace topo
