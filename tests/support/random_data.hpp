#pragma once
// Seeded random operands for tests and the op table (tests/support/op_table.hpp, which topo-bench links too):
// no doctest here, so a benchmark can make the same inputs the tests check.
#include <cstdint>

#include "kernels/tensor.hpp"

namespace topo::testing {

// Uniform [lo, hi) float32 tensor from a seeded generator.
Tensor random_uniform(const Shape& shape, std::uint64_t seed, float lo = -1.f, float hi = 1.f,
                      Device device = Device::cpu());
// The same, every value then moved `margin` further from 0 (finite differences must not straddle relu's kink
// or a pole of log and div).
Tensor random_away_from_zero(const Shape& shape, std::uint64_t seed, float lo, float hi, float margin);
// Every column (over dim 0) a shuffled ladder offset + spacing * {0, 1, ..., rows - 1}: within a column any two
// values differ by at least `spacing`, so max/min winners do not change under finite-difference steps.
Tensor random_separated(const Shape& shape, std::uint64_t seed, float spacing, float offset);
// Uniform integer ids in [0, high) as int64.
Tensor random_ids(const Shape& shape, std::int64_t high, std::uint64_t seed, Device device = Device::cpu());

}  // namespace topo::testing
