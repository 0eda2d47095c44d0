// Initialisers: thin wrappers that compute PyTorch's bounds and draw from the counter-based kernels.
#include "nn/init.hpp"

#include <cmath>

#include "kernels/dense/random.hpp"

namespace topo::nn::init {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

Fans checked_fans(const Shape& shape, const char* what) {
  const Fans f = compute_fans(shape);
  TOPO_CHECK(f.fan_in > 0 && f.fan_out > 0, "{}: shape {} has no elements to compute fans from", what,
             shape_str(shape));
  return f;
}

}  // namespace

std::uint64_t derive_seed(std::uint64_t model_seed, std::uint64_t index) {
  return splitmix64(splitmix64(model_seed) ^ (index * 0xd1b54a32d192ed03ULL + 1));
}

Fans compute_fans(const Shape& shape) {
  TOPO_CHECK(!shape.empty(), "init: fans of a 0-d tensor are undefined");
  if (shape.size() == 1) return {shape[0], shape[0]};
  std::int64_t receptive = 1;
  for (std::size_t d = 2; d < shape.size(); ++d) receptive *= shape[d];
  return {shape[1] * receptive, shape[0] * receptive};
}

Tensor zeros(const Shape& shape, Device device) { return Tensor::zeros(shape, DType::F32, device); }
Tensor ones(const Shape& shape, Device device) { return Tensor::full(shape, 1.f, device); }
Tensor constant(const Shape& shape, float value, Device device) { return Tensor::full(shape, value, device); }

Tensor uniform(const Shape& shape, float lo, float hi, std::uint64_t seed, Device device) {
  TOPO_CHECK(lo <= hi, "init::uniform: lo {} > hi {}", lo, hi);
  return random_uniform(shape, lo, hi, seed, device);
}

Tensor normal(const Shape& shape, float mean, float stddev, std::uint64_t seed, Device device) {
  TOPO_CHECK(stddev >= 0.f, "init::normal: negative stddev {}", stddev);
  return random_normal(shape, mean, stddev, seed, device);
}

Tensor xavier_uniform(const Shape& shape, std::uint64_t seed, float gain, Device device) {
  const Fans f = checked_fans(shape, "xavier_uniform");
  const float a = gain * std::sqrt(6.f / static_cast<float>(f.fan_in + f.fan_out));
  return random_uniform(shape, -a, a, seed, device);
}

Tensor xavier_normal(const Shape& shape, std::uint64_t seed, float gain, Device device) {
  const Fans f = checked_fans(shape, "xavier_normal");
  const float s = gain * std::sqrt(2.f / static_cast<float>(f.fan_in + f.fan_out));
  return random_normal(shape, 0.f, s, seed, device);
}

Tensor kaiming_uniform(const Shape& shape, std::uint64_t seed, float a, Device device) {
  const Fans f = checked_fans(shape, "kaiming_uniform");
  const float bound = std::sqrt(6.f / ((1.f + a * a) * static_cast<float>(f.fan_in)));
  return random_uniform(shape, -bound, bound, seed, device);
}

std::string InitSpec::str() const {
  switch (kind) {
    case Kind::Keep: return "keep";
    case Kind::Constant: return fmt::format("constant({})", a);
    case Kind::Uniform: return fmt::format("uniform({}, {})", a, b);
    case Kind::Normal: return fmt::format("normal({}, {})", a, b);
    case Kind::XavierUniform: return fmt::format("xavier_uniform(gain={})", a);
    case Kind::XavierNormal: return fmt::format("xavier_normal(gain={})", a);
    case Kind::KaimingUniform: return fmt::format("kaiming_uniform(a={})", a);
  }
  return "?";
}

Tensor make(const InitSpec& spec, const Shape& shape, std::uint64_t seed, Device device) {
  using K = InitSpec::Kind;
  switch (spec.kind) {
    case K::Keep: fail("init::make: a 'keep' spec draws nothing (shape {})", shape_str(shape));
    case K::Constant: return constant(shape, spec.a, device);
    case K::Uniform: return uniform(shape, spec.a, spec.b, seed, device);
    case K::Normal: return normal(shape, spec.a, spec.b, seed, device);
    case K::XavierUniform: return xavier_uniform(shape, seed, spec.a, device);
    case K::XavierNormal: return xavier_normal(shape, seed, spec.a, device);
    case K::KaimingUniform: return kaiming_uniform(shape, seed, spec.a, device);
  }
  fail("init::make: unknown spec");
}

}  // namespace topo::nn::init
