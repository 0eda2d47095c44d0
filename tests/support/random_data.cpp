#include "tests/support/random_data.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

namespace topo::testing {

Tensor random_uniform(const Shape& shape, std::uint64_t seed, float lo, float hi, Device device) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(shape_numel(shape)));
  for (float& x : v) x = dist(rng);
  return Tensor::from_vector(v, shape, device);
}

Tensor random_away_from_zero(const Shape& shape, std::uint64_t seed, float lo, float hi, float margin) {
  std::vector<float> v = random_uniform(shape, seed, lo, hi).to_vector<float>();
  for (float& x : v) x += x < 0 ? -margin : margin;
  return Tensor::from_vector(v, shape);
}

Tensor random_separated(const Shape& shape, std::uint64_t seed, float spacing, float offset) {
  const std::int64_t rows = shape.empty() ? 1 : shape[0], cols = shape_numel(shape) / std::max<std::int64_t>(rows, 1);
  std::vector<float> v(static_cast<std::size_t>(rows * cols));
  std::mt19937_64 rng(seed);
  for (std::int64_t c = 0; c < cols; ++c) {
    std::vector<std::int64_t> perm(static_cast<std::size_t>(rows));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    for (std::int64_t r = 0; r < rows; ++r) v[r * cols + c] = offset + spacing * static_cast<float>(perm[r]);
  }
  return Tensor::from_vector(v, shape);
}

Tensor random_ids(const Shape& shape, std::int64_t high, std::uint64_t seed, Device device) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> dist(0, high - 1);
  std::vector<std::int64_t> v(static_cast<std::size_t>(shape_numel(shape)));
  for (auto& x : v) x = dist(rng);
  return Tensor::from_vector(v, shape, device);
}

}  // namespace topo::testing
