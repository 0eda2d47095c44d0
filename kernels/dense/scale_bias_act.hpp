#pragma once
// y = act(s_r * x + b) in one pass over x, and its backward in one pass over the gradient: the epilogue of a
// graph convolution (degree norm, bias, activation) or of any layer whose bias and activation would otherwise
// be two or three more passes over [rows, cols] forward and as many backward. Math: scale_bias_act_math.hpp.
#include <optional>

#include "kernels/dense/scale_bias_act_math.hpp"
#include "kernels/tensor.hpp"

namespace topo {

// x [rows, ...] (float32), seen as [rows, cols = numel / rows]; row_scale: rows elements or undefined (1);
// bias: cols elements or undefined (0); slope: LeakyRelu's, > 0. All on x's device.
Tensor scale_bias_act(const Tensor& x, const Tensor& row_scale, const Tensor& bias, EpilogueAct act,
                      float slope = 0.01f);

struct ScaleBiasActGrads {
  Tensor dx;     // shaped like y; undefined unless asked for
  Tensor dbias;  // shaped bias_shape; undefined unless asked for
};
// From the output y and its gradient: dx = s_r * act'(y) * grad, dbias = the column sums of act'(y) * grad.
// The column sums run over fixed blocks of rows and then over the blocks in order, so they do not depend on
// the thread count.
ScaleBiasActGrads scale_bias_act_backward(const Tensor& grad, const Tensor& y, const Tensor& row_scale, bool want_dx,
                                          const std::optional<Shape>& bias_shape, EpilogueAct act,
                                          float slope = 0.01f);

}  // namespace topo
