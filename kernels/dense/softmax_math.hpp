#pragma once
// Softmax math shared by the CPU and CUDA backends. A row is the last dim; callers compute the row's max and
// sum (or log-sum) and apply these per element.
#include <cstdint>
#include <cstring>

#include "kernels/hd.hpp"

namespace topo {

// exp(x) for float, within ~2 ulp of expf on [-87, 88], 0 below (so exp(-inf) = 0, as masking needs).
// Written out (Cody-Waite reduction, degree-6 polynomial) because glibc's expf does not vectorize without
// -ffast-math and softmax rows would otherwise be bound by scalar exp calls.
TOPO_HD float exp_approx(float x) {
  const float clamped = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
  const float k = floorf(clamped * 1.44269504088896341f + 0.5f);
  float r = clamped - k * 0.693359375f;
  r = r - k * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.f;
  const int bits = (static_cast<int>(k) + 127) << 23;
#if defined(__CUDA_ARCH__)
  const float scale = __int_as_float(bits);
#else
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
#endif
  const float e = p * scale;
  return x < -87.0f ? 0.f : (x != x ? x : e);  // NaN stays NaN
}

// softmax: y = exp(x - max) / sum, with inv_sum = 1 / sum over the row of exp(x - max).
TOPO_HD float softmax_numerator(float x, float row_max) { return exp_approx(x - row_max); }
// log_softmax: y = x - max - log(sum).
TOPO_HD float log_softmax_value(float x, float row_max, float log_sum) { return x - row_max - log_sum; }
// softmax backward: dx = y * (g - dot), dot = sum over the row of g * y.
TOPO_HD float softmax_grad(float g, float y, float dot) { return y * (g - dot); }
// log_softmax backward: dx = g - exp(y) * sum_g, sum_g = sum over the row of g.
TOPO_HD float log_softmax_grad(float g, float y, float sum_g) { return g - exp_approx(y) * sum_g; }

namespace cuda {
// Device launchers (softmax_cuda.cu); rows of d contiguous floats. log = log_softmax.
void softmax_forward(bool log, const float* x, float* y, std::int64_t rows, std::int64_t d);
void softmax_backward(bool log, const float* grad, const float* y, float* dx, std::int64_t rows, std::int64_t d);
}  // namespace cuda

}  // namespace topo
