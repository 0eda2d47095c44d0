// Fused optimizer steps. CPU strategy: one flat loop over elements in contiguous chunks across OpenMP
// threads (serial for small tensors); each element's update is independent, so results do not depend
// on the thread count. The per-element math is optim_step_math.hpp, shared with the CUDA kernels.
#include "kernels/dense/optim_step.hpp"

#include "kernels/profile.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/parallel.hpp"

namespace topo {
namespace {

void check_state(const Tensor& param, const Tensor& other, const char* op, const char* what) {
  TOPO_CHECK(other.defined(), "{}: {} is undefined (param {})", op, what, param.str());
  check_dtype(other, DType::F32, op, what);
  TOPO_CHECK(other.shape() == param.shape(), "{}: {} has shape {} but the parameter has {}", op, what,
             shape_str(other.shape()), shape_str(param.shape()));
  TOPO_CHECK(other.device() == param.device(), "{}: {} is on {} but the parameter is on {}", op, what,
             other.device().str(), param.device().str());
}

}  // namespace

void adam_step(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamStepConfig& c) {
  TOPO_PROFILE(Optimizer);
  check_dtype(param, DType::F32, "adam_step", "param");
  check_state(param, grad, "adam_step", "grad");
  check_state(param, m, "adam_step", "exp_avg");
  check_state(param, v, "adam_step", "exp_avg_sq");
  TOPO_CHECK(c.bias_correction1 > 0.f && c.bias_correction2 > 0.f,
             "adam_step: bias corrections must be positive, got {} and {}", c.bias_correction1,
             c.bias_correction2);
  float* pp = param.data<float>();
  const float* gp = grad.data<float>();
  float *mp = m.data<float>(), *vp = v.data<float>();
  const std::int64_t n = param.numel();
  TOPO_ON_DEVICE(
      param.device(),
      parallel_for(n, 16,
                   [&](std::int64_t b, std::int64_t e) {
                     // Locals, not the closure's references: a float store below could alias a float read
                     // through them, which kept the loop scalar inside the parallel region.
                     const AdamStepConfig cl = c;
                     float *p = pp, *mm = mp, *vv = vp;
                     const float* g = gp;
                     for (std::int64_t i = b; i < e; ++i) adam_update(cl, p[i], g[i], mm[i], vv[i]);
                   }),
      cuda::adam_step(c, pp, gp, mp, vp, n));
}

void sgd_step(Tensor& param, const Tensor& grad, Tensor& buf, const SgdStepConfig& c) {
  TOPO_PROFILE(Optimizer);
  check_dtype(param, DType::F32, "sgd_step", "param");
  check_state(param, grad, "sgd_step", "grad");
  float* bp = nullptr;
  if (c.momentum != 0.f) {
    check_state(param, buf, "sgd_step", "momentum_buffer");
    bp = buf.data<float>();
  }
  float* pp = param.data<float>();
  const float* gp = grad.data<float>();
  const std::int64_t n = param.numel();
  TOPO_ON_DEVICE(
      param.device(),
      parallel_for(n, 4,
                   [&](std::int64_t b, std::int64_t e) {
                     const SgdStepConfig cl = c;  // locals, as adam_step's
                     float *p = pp, *buf = bp;
                     const float* g = gp;
                     if (buf) {
                       for (std::int64_t i = b; i < e; ++i) sgd_update(cl, p[i], g[i], buf[i]);
                     } else {
                       float unused = 0.f;  // stands in for the buffer without momentum (sgd_update ignores it)
                       for (std::int64_t i = b; i < e; ++i) sgd_update(cl, p[i], g[i], unused);
                     }
                   }),
      cuda::sgd_step(c, pp, gp, bp, n));
}

void scale_inplace(Tensor& x, float s) {
  TOPO_PROFILE(Optimizer);
  check_dtype(x, DType::F32, "scale_inplace", "x");
  float* xp = x.data<float>();
  const std::int64_t n = x.numel();
  TOPO_ON_DEVICE(
      x.device(),
      parallel_for(n, 1,
                   [&](std::int64_t b, std::int64_t e) {
                     for (std::int64_t i = b; i < e; ++i) xp[i] *= s;
                   }),
      cuda::scale_inplace(xp, s, n));
}

void ema_step(Tensor& average, const Tensor& param, float weight) {
  TOPO_PROFILE(Optimizer);
  check_dtype(param, DType::F32, "ema_step", "param");
  check_state(param, average, "ema_step", "average");
  TOPO_CHECK(weight >= 0.f && weight <= 1.f, "ema_step: weight must be in [0, 1], got {}", weight);
  float* ap = average.data<float>();
  const float* pp = param.data<float>();
  const std::int64_t n = param.numel();
  TOPO_ON_DEVICE(
      param.device(),
      parallel_for(n, 4,
                   [&](std::int64_t b, std::int64_t e) {
                     float* a = ap;  // locals, as adam_step's
                     const float* p = pp;
                     const float w = weight;
                     for (std::int64_t i = b; i < e; ++i) ema_update(a[i], p[i], w);
                   }),
      cuda::ema_step(ap, pp, weight, n));
}

}  // namespace topo
