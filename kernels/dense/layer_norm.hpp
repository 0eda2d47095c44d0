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

// A layer's residual epilogue in one pass: y = LayerNorm(h + relu(x)) (Star's and Multi-Scale's
// H <- LayerNorm(H + ReLU(update))); mean and rstd are the sum's. The backward recomputes h + relu(x) from h
// and x, so the sum is never stored: forward reads h, x and writes y; backward reads grad, h, x and writes dh
// (= the sum's gradient) and dx (dh where x > 0). The unfused ops move ~13 rows' worth of bytes per row, this
// 8. Equal to layer_norm(h + relu(x)) and its backward up to float rounding (tests/kernels/test_layer_norm.cpp).
LayerNormOutput residual_relu_layer_norm(const Tensor& h, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                         float eps = 1e-5f);
struct ResidualLayerNormGrads {
  Tensor dh, dx;          // like h and x
  Tensor dgamma, dbeta;   // [D] (undefined when gamma / beta were)
};
ResidualLayerNormGrads residual_relu_layer_norm_backward(const Tensor& grad, const Tensor& h, const Tensor& x,
                                                         const Tensor& gamma, const Tensor& beta, const Tensor& mean,
                                                         const Tensor& rstd);

}  // namespace topo
