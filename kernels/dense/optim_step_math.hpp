#pragma once
// Per-element optimizer updates shared by the CPU loop and the CUDA kernels (optim_step_cuda.cu), so a
// CPU test pins down the math both backends run. Every update is in place on (param, state) and reads
// the gradient once: one pass over memory instead of a chain of temporaries.
#include <cmath>
#include <cstdint>

#include "kernels/hd.hpp"

namespace topo {

// Adam / AdamW hyper-parameters for one step of one tensor. bias_correction{1,2} = 1 - beta^t for the
// parameter's step t (computed on the host in double, passed as float).
struct AdamStepConfig {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.f;
  bool decoupled = false;  // true: AdamW (p *= 1 - lr*wd); false: L2 (g += wd*p)
  float bias_correction1 = 1.f;
  float bias_correction2 = 1.f;
};

// One element of Adam (Kingma & Ba, with PyTorch's placement of eps outside the corrected sqrt):
//   g' = g + wd*p (L2) | p' = p*(1 - lr*wd) (decoupled)
//   m = b1*m + (1-b1)*g',  v = b2*v + (1-b2)*g'^2
//   p -= (lr / bc1) * m / (sqrt(v) / sqrt(bc2) + eps)
TOPO_HD void adam_update(const AdamStepConfig& c, float& p, float g, float& m, float& v) {
  if (c.weight_decay != 0.f) {
    if (c.decoupled) {
      p *= 1.f - c.lr * c.weight_decay;
    } else {
      g += c.weight_decay * p;
    }
  }
  m = c.beta1 * m + (1.f - c.beta1) * g;
  v = c.beta2 * v + (1.f - c.beta2) * g * g;
  const float denom = sqrtf(v) / sqrtf(c.bias_correction2) + c.eps;
  p -= (c.lr / c.bias_correction1) * (m / denom);
}

struct SgdStepConfig {
  float lr = 1e-2f;
  float momentum = 0.f;
  float weight_decay = 0.f;  // L2: g += wd*p
  bool first = true;         // first step with momentum: the buffer starts as the gradient (as PyTorch)
};

// One element of SGD with (optional) heavy-ball momentum: buf = momentum*buf + g'; p -= lr*buf.
TOPO_HD void sgd_update(const SgdStepConfig& c, float& p, float g, float& buf) {
  if (c.weight_decay != 0.f) g += c.weight_decay * p;
  if (c.momentum != 0.f) {
    buf = c.first ? g : c.momentum * buf + g;
    g = buf;
  }
  p -= c.lr * g;
}

// One element of an exponential moving average of a parameter (Polyak averaging, as PyTorch's
// AveragedModel with get_ema_multi_avg_fn): avg += weight * (p - avg), weight = 1 - decay for this update.
TOPO_HD void ema_update(float& avg, float p, float weight) { avg += weight * (p - avg); }

namespace cuda {
// Device launchers (optim_step_cuda.cu); all pointers device memory with n elements. `buf` may be null
// for SGD without momentum.
void adam_step(const AdamStepConfig& c, float* p, const float* g, float* m, float* v, std::int64_t n);
void sgd_step(const SgdStepConfig& c, float* p, const float* g, float* buf, std::int64_t n);
// Scales x in place by s (gradient clipping).
void scale_inplace(float* x, float s, std::int64_t n);
// avg moves toward p by `weight` (ema_update per element).
void ema_step(float* avg, const float* p, float weight, std::int64_t n);
}  // namespace cuda

}  // namespace topo
