#pragma once
// Fused in-place optimizer updates on float32 tensors (param, grad and state on one device, same shape).
// The math lives in optim_step_math.hpp; nn/optim.hpp builds optimizers on these.
#include "kernels/dense/optim_step_math.hpp"
#include "kernels/tensor.hpp"

namespace topo {

// Updates param, m (first moment) and v (second moment) in place.
void adam_step(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamStepConfig& config);
// Updates param and, when momentum != 0, the momentum buffer `buf` in place (buf may be undefined otherwise).
void sgd_step(Tensor& param, const Tensor& grad, Tensor& buf, const SgdStepConfig& config);
// x *= s in place.
void scale_inplace(Tensor& x, float s);
// The moving average `average` of `param` moves toward it in place: average += weight * (param - average).
void ema_step(Tensor& average, const Tensor& param, float weight);

}  // namespace topo
