#include <bit>
#include <cmath>
#include <cstdint>

#include "kernels/dense/fast_exp.hpp"
#include "kernels/dense/unary.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using topo::testing::kAwkwardSizes;

namespace {
// Naive reference, written independently of unary_math.hpp.
float unary_reference(UnaryOp op, float x, float alpha) {
  switch (op) {
    case UnaryOp::Relu: return std::max(x, 0.f);
    case UnaryOp::LeakyRelu: return x >= 0 ? x : alpha * x;
    case UnaryOp::Gelu: return 0.5f * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case UnaryOp::Exp: return std::exp(x);
    case UnaryOp::Log: return std::log(x);
    case UnaryOp::Tanh: return std::tanh(x);
    case UnaryOp::Sigmoid: return 1 / (1 + std::exp(-x));
    case UnaryOp::Neg: return -x;
    case UnaryOp::Scale: return alpha * x;
    case UnaryOp::Elu: return x >= 0 ? x : alpha * (std::exp(x) - 1);
  }
  return 0;
}
}  // namespace

TEST_CASE("unary ops match the reference at awkward sizes, forward and backward (finite differences)") {
  const UnaryOp ops[] = {UnaryOp::Relu, UnaryOp::LeakyRelu, UnaryOp::Gelu, UnaryOp::Exp, UnaryOp::Log,
                         UnaryOp::Tanh, UnaryOp::Sigmoid,   UnaryOp::Neg,  UnaryOp::Scale, UnaryOp::Elu};
  for (UnaryOp op : ops) {
    for (std::int64_t rows : kAwkwardSizes) {
      CAPTURE(static_cast<int>(op));
      CAPTURE(rows);
      const float lo = op == UnaryOp::Log ? 0.1f : -3.f;
      // Inputs keep 0.01 away from 0 so the central differences below never straddle relu's kink.
      std::vector<float> init = topo::testing::random_uniform({rows, 33}, rows + 11, lo, 3.f).to_vector<float>();
      for (float& v : init) v += v < 0 ? -0.01f : 0.01f;
      Tensor x = Tensor::from_vector(init, {rows, 33});
      const float alpha = 0.3f;
      Tensor y = unary(op, x, alpha);
      std::vector<float> xs = x.to_vector<float>(), expected(xs.size());
      for (std::size_t i = 0; i < xs.size(); ++i) expected[i] = unary_reference(op, xs[i], alpha);
      TOPO_CHECK_CLOSE(y.to_vector<float>(), expected, 1e-5, 1e-5);

      // Derivative against central differences of the reference.
      Tensor ones = Tensor::full(x.shape(), 1.f);
      std::vector<float> dx = unary_backward(op, ones, x, y, alpha).to_vector<float>(), numeric(xs.size());
      const float h = 1e-3f;
      for (std::size_t i = 0; i < xs.size(); ++i)
        numeric[i] = (unary_reference(op, xs[i] + h, alpha) - unary_reference(op, xs[i] - h, alpha)) / (2 * h);
      TOPO_CHECK_CLOSE(dx, numeric, 2e-2, 2e-2);
    }
  }
}

TEST_CASE("elu: alpha must be positive (its gradient is read from the output)") {
  const Tensor x = Tensor::from_vector(std::vector<float>{-1.f, 2.f}, {2});
  CHECK(unary(UnaryOp::Elu, x, 1.f).to_vector<float>()[0] == doctest::Approx(std::expm1(-1.0)));
  CHECK_THROWS_WITH_AS(unary(UnaryOp::Elu, x, -0.5f), doctest::Contains("alpha must be > 0"), Error);
}

TEST_CASE("expm1_approx (elu's negative side) is within 2 ulp of expm1 over [-87, 88], near 0 included") {
  // Floats in steps of 997 bits over the whole range, then every float of [-2^-10, 2^-10] and around the
  // series/exp switch at |x| = 0.5. (Every 8th float of the range, all of [-1e-3, 1e-3]: 1.77 ulp at most.)
  double worst = 0;
  float worst_x = 0;
  auto check = [&](float x) {
    const double exact = std::expm1(static_cast<double>(x));
    const float rounded = static_cast<float>(exact);
    if (rounded == 0.f) return;
    const double ulp = std::nextafter(std::fabs(rounded), INFINITY) - std::fabs(rounded);
    const double error = std::fabs(static_cast<double>(expm1_approx(x)) - exact) / ulp;
    if (error > worst) worst = error, worst_x = x;
  };
  for (std::uint32_t bits = 0; bits <= std::bit_cast<std::uint32_t>(88.f); bits += 997) {
    const float magnitude = std::bit_cast<float>(bits);
    check(magnitude);
    if (magnitude <= 87.f) check(-magnitude);
  }
  for (float x = -0x1p-10f; x <= 0x1p-10f; x = std::nextafter(x, 1.f)) check(x);
  for (float edge : {-0.5f, 0.5f})
    for (float x = edge - 1e-4f; x <= edge + 1e-4f; x = std::nextafter(x, 1.f)) check(x);
  CAPTURE(worst_x);
  CHECK(worst <= 2.0);
  CHECK(expm1_approx(0.f) == 0.f);
  CHECK(expm1_approx(-200.f) == -1.f);  // exp underflows to 0
}
