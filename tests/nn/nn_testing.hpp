#pragma once
// Helpers for the nn tests: leaf Vars from seeded random data and a gradcheck that reports its worst element.
#include <cstdint>
#include <vector>

#include "nn/gradcheck.hpp"
#include "nn/ops.hpp"
#include "tests/support/testing.hpp"

namespace topo::nn::testing {

// A leaf requiring grad, uniform in [lo, hi).
inline Var leaf(const Shape& shape, std::uint64_t seed, float lo = -1.f, float hi = 1.f) {
  return Var(topo::testing::random_uniform(shape, seed, lo, hi), true);
}

// Like leaf(), but every value at least `margin` away from 0 (finite differences must not straddle kinks).
inline Var leaf_away_from_zero(const Shape& shape, std::uint64_t seed, float margin = 0.05f) {
  return Var(topo::testing::random_away_from_zero(shape, seed, -2.f, 2.f, margin), true);
}

}  // namespace topo::nn::testing

// TOPO_GRADCHECK(f, inputs[, options]): runs gradcheck and CHECKs it, printing the worst element on failure.
// Variadic so lambdas with several captures need no extra parentheses.
#define TOPO_GRADCHECK(...)                                             \
  do {                                                                  \
    const auto topo_gc_ = ::topo::nn::gradcheck(__VA_ARGS__);           \
    INFO(topo_gc_.message);                                             \
    CHECK(topo_gc_.ok);                                                 \
  } while (0)
