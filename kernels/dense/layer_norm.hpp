#pragma once
// Layer normalisation over the last dimension D of x [..., D]: y = (x - mean) * rstd * gamma + beta.
#include "kernels/tensor.hpp"

namespace topo {

struct LayerNormOutput {
  Tensor y;     // like x
  Tensor mean;  // [rows], rows = numel / D, kept for backward
  Tensor rstd;  // [rows], 1 / sqrt(var + eps)
};
// gamma, beta: [D]; either may be undefined (no scale / no shift).
LayerNormOutput layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps = 1e-5f);

struct LayerNormGrads {
  Tensor dx;      // like x
  Tensor dgamma;  // [D] (undefined when gamma was)
  Tensor dbeta;   // [D] (undefined when beta was)
};
LayerNormGrads layer_norm_backward(const Tensor& grad, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                   const Tensor& mean, const Tensor& rstd);

}  // namespace topo
