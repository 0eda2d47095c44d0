#pragma once
// exp for float written so host loops vectorize (glibc's expf is an opaque scalar call without -ffast-math),
// shared by softmax, cross entropy and the CUDA kernels, the bit casts it needs on host and device, and expm1,
// sigmoid and tanh built on it.
#include <bit>
#include <cmath>
#include <cstdint>

#include "kernels/hd.hpp"

namespace topo {

TOPO_HD float float_from_bits(int bits) {
#if defined(__CUDA_ARCH__)
  return __int_as_float(bits);
#else
  return std::bit_cast<float>(bits);
#endif
}
TOPO_HD int bits_from_float(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_int(x);
#else
  return std::bit_cast<int>(x);
#endif
}

// exp(x) for float, within ~1 ulp of the exact value on [-87, 88] (checked over every float there); exactly 0
// below -87 (so exp(-inf) = 0, as masking needs), saturating at exp(88) above (softmax only takes x <= 0), NaN for NaN.
// Written out (Cody-Waite reduction, degree-6 polynomial) because glibc's expf does not vectorize without
// -ffast-math and softmax rows would otherwise be bound by scalar exp calls. Branch-free and without a
// float->int conversion (k is rounded by adding 1.5 * 2^23 and read back from the bits) so that gcc
// if-converts and vectorizes the loops that call it.
TOPO_HD float exp_approx(float x) {
  const float clamped = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
  constexpr float kMagic = 12582912.f;  // 1.5 * 2^23: adding it rounds to an integer held in the low bits
  const float shifted = clamped * 1.44269504088896341f + kMagic;
  const float k = shifted - kMagic;  // round(clamped / ln 2)
  float r = clamped - k * 0.693359375f;  // ln 2 split in two (Cody-Waite) so r is exact
  r = r - k * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.f;
  const int ki = bits_from_float(shifted) - 0x4B400000;  // 0x4B400000 = bits of kMagic
  const int bits = x < -87.0f ? 0 : (ki + 127) << 23;    // 2^k, or +0 to flush the underflow to 0
  return p * float_from_bits(bits);
}

// exp(x) - 1 for float without the cancellation near 0: |x| < 0.5 takes the Taylor series to x^8 (truncation
// below 1e-8 relative there), beyond it exp_approx(x) - 1. Both are computed and one is selected, branch-free,
// so loops over it vectorize (with libm's scalar expm1f, ELU over a [128, 128, 300] batch took 79 ms against
// relu's 3.7 on one Skylake-SP thread; 10.3 now). Within 2 ulp over [-87, 88] (tests/kernels/test_unary.cpp).
TOPO_HD float expm1_approx(float x) {
  float p = 1.f / 40320.f;
  p = p * x + 1.f / 5040.f;
  p = p * x + 1.f / 720.f;
  p = p * x + 1.f / 120.f;
  p = p * x + 1.f / 24.f;
  p = p * x + 1.f / 6.f;
  p = p * x + 0.5f;
  const float series = x + x * x * p;
  const float far = exp_approx(x) - 1.f;
  return (x > -0.5f && x < 0.5f) ? series : far;
}

// 1 / (1 + e^-x) from e = exp(-|x|), so nothing overflows (libm's expf(-x) does below x = -88) and below 0 the
// result is e / (1 + e). Within 3 ulp over [-87, 88] (2.4 measured); 0 below -87, NaN for NaN. With libm's
// expf or tanhf the loops of sigmoid, tanh and GELU stayed scalar: 2.5x (sigmoid) to 9-17x (tanh, GELU) slower
// than these on a Skylake-SP core.
TOPO_HD float sigmoid_approx(float x) {
  const float e = exp_approx(-fabsf(x));
  return (x > 0.f ? 1.f : e) / (1.f + e);
}

// tanh from t = expm1(-2|x|) in (-1, 0]: |tanh x| = -t / (t + 2), which neither overflows nor cancels near 0
// (expm1_approx's series there). Within 3 ulp (2.5 measured), signed zeros kept, ±1 beyond |x| ~ 9.
TOPO_HD float tanh_approx(float x) {
  const float t = expm1_approx(-2.f * fabsf(x));
  return copysignf(-t / (t + 2.f), x);
}

}  // namespace topo
