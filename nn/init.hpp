#pragma once
// Parameter initialisation, drawn from the counter-based kernels (kernels/dense/random.hpp): the values
// depend only on (seed, shape), so a model built twice with one seed is identical on CPU and CUDA.
// Seeds per parameter come from derive_seed(model_seed, parameter index); Module::reset_parameters
// applies each parameter's InitSpec that way.
//
// Fans follow PyTorch: for a weight [out, in, k...], fan_in = in * prod(k), fan_out = out * prod(k);
// a 1-D tensor has fan_in = fan_out = its length.
#include <cstdint>
#include <string>

#include "kernels/tensor.hpp"

namespace topo::nn::init {

// A well-mixed 64-bit seed for parameter `index` of a model seeded with `model_seed` (splitmix64 of both).
std::uint64_t derive_seed(std::uint64_t model_seed, std::uint64_t index);

struct Fans {
  std::int64_t fan_in = 0;
  std::int64_t fan_out = 0;
};
Fans compute_fans(const Shape& shape);

Tensor zeros(const Shape& shape, Device device = Device::cpu());
Tensor ones(const Shape& shape, Device device = Device::cpu());
Tensor constant(const Shape& shape, float value, Device device = Device::cpu());
Tensor uniform(const Shape& shape, float lo, float hi, std::uint64_t seed, Device device = Device::cpu());
Tensor normal(const Shape& shape, float mean, float stddev, std::uint64_t seed, Device device = Device::cpu());
// U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)).
Tensor xavier_uniform(const Shape& shape, std::uint64_t seed, float gain = 1.f, Device device = Device::cpu());
// N(0, s^2), s = gain * sqrt(2 / (fan_in + fan_out)).
Tensor xavier_normal(const Shape& shape, std::uint64_t seed, float gain = 1.f, Device device = Device::cpu());
// U(-b, b), b = sqrt(6 / ((1 + a^2) * fan_in)) (leaky-relu gain, fan_in mode). PyTorch's nn.Linear
// weight default is a = sqrt(5), i.e. b = 1/sqrt(fan_in).
Tensor kaiming_uniform(const Shape& shape, std::uint64_t seed, float a = 0.f, Device device = Device::cpu());

// How a parameter is (re)initialised; stored with the parameter at registration.
struct InitSpec {
  enum class Kind { Keep, Constant, Uniform, Normal, XavierUniform, XavierNormal, KaimingUniform };
  Kind kind = Kind::Keep;  // Keep: the registered data stays (pretrained embeddings)
  float a = 0.f;           // constant value | uniform lo | normal mean | gain (xavier) | slope (kaiming)
  float b = 0.f;           // uniform hi | normal std

  static InitSpec keep() { return {}; }
  static InitSpec constant(float v) { return {Kind::Constant, v, 0.f}; }
  static InitSpec zeros() { return constant(0.f); }
  static InitSpec ones() { return constant(1.f); }
  static InitSpec uniform(float lo, float hi) { return {Kind::Uniform, lo, hi}; }
  static InitSpec normal(float mean, float stddev) { return {Kind::Normal, mean, stddev}; }
  static InitSpec xavier_uniform(float gain = 1.f) { return {Kind::XavierUniform, gain, 0.f}; }
  static InitSpec xavier_normal(float gain = 1.f) { return {Kind::XavierNormal, gain, 0.f}; }
  static InitSpec kaiming_uniform(float slope = 0.f) { return {Kind::KaimingUniform, slope, 0.f}; }
  std::string str() const;
};

// A fresh tensor per the spec; Keep is an error (there is nothing to draw).
Tensor make(const InitSpec& spec, const Shape& shape, std::uint64_t seed, Device device = Device::cpu());

}  // namespace topo::nn::init
