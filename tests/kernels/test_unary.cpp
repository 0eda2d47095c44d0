#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "kernels/dense/fast_exp.hpp"
#include "kernels/dense/unary.hpp"
#include "kernels/dense/unary_math.hpp"
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

namespace {
// The largest error of an approximation against the exact value (computed in double), in ulps of the exact value
// rounded to float; results that round to 0 are skipped.
template <class Approx, class Exact>
struct UlpScan {
  Approx approx;
  Exact exact;
  double worst = 0;
  float worst_x = 0;

  void check(float x) {
    const double want = exact(static_cast<double>(x));
    const float rounded = static_cast<float>(want);
    if (rounded == 0.f) return;
    const double ulp = std::nextafter(std::fabs(rounded), INFINITY) - std::fabs(rounded);
    const double error = std::fabs(static_cast<double>(approx(x)) - want) / ulp;
    if (error > worst) worst = error, worst_x = x;
  }
  // Floats of [lo, hi] in steps of 997 bits of the magnitude (every binade, tiny ones included), both signs.
  void sweep(float lo, float hi) {
    for (std::uint32_t bits = 0; bits <= std::bit_cast<std::uint32_t>(std::max(-lo, hi)); bits += 997) {
      const float magnitude = std::bit_cast<float>(bits);
      if (magnitude <= hi) check(magnitude);
      if (-magnitude >= lo) check(-magnitude);
    }
  }
  // Every float within `radius` of `point` (where a formula switches branches).
  void around(float point, float radius) {
    for (float x = point - radius; x <= point + radius; x = std::nextafter(x, INFINITY)) check(x);
  }
};
template <class Approx, class Exact>
UlpScan<Approx, Exact> ulp_scan(Approx approx, Exact exact) {
  return {approx, exact};
}
}  // namespace

TEST_CASE("expm1_approx (elu's negative side) is within 2 ulp of expm1 over [-87, 88], near 0 included") {
  // The sweep takes ~8,400 floats of every binade, the tiny ones near 0 included; every float around the
  // series/exp switch at |x| = 0.5. (Every 8th float of the range, all of [-1e-3, 1e-3]: 1.77 ulp at most; every
  // float of [-2^-10, 2^-10] took 2.5 minutes.)
  auto scan = ulp_scan([](float x) { return expm1_approx(x); }, [](double x) { return std::expm1(x); });
  scan.sweep(-87.f, 88.f);
  for (float edge : {-0.5f, 0.5f}) scan.around(edge, 1e-4f);
  CAPTURE(scan.worst_x);
  CHECK(scan.worst <= 2.0);
  CHECK(expm1_approx(0.f) == 0.f);
  CHECK(expm1_approx(-200.f) == -1.f);  // exp underflows to 0
}

TEST_CASE("tanh_approx and sigmoid_approx are within 3 ulp; gelu has no cancellation in its negative tail") {
  SUBCASE("tanh over [-100, 100], around its series switch at |x| = 0.25") {
    auto scan = ulp_scan([](float x) { return tanh_approx(x); }, [](double x) { return std::tanh(x); });
    scan.sweep(-100.f, 100.f);
    for (float edge : {-0.25f, 0.25f}) scan.around(edge, 1e-4f);
    CAPTURE(scan.worst_x);
    CHECK(scan.worst <= 3.0);  // glibc's tanhf: 2.2
  }
  SUBCASE("sigmoid over [-87, 88]") {
    auto scan = ulp_scan([](float x) { return sigmoid_approx(x); }, [](double x) { return 1 / (1 + std::exp(-x)); });
    scan.sweep(-87.f, 88.f);
    CAPTURE(scan.worst_x);
    CHECK(scan.worst <= 3.0);
  }
  SUBCASE("gelu over [-5, 100]: x sigmoid(2u), not 0.5 x (1 + tanh u)") {
    // The exact value in the sigmoid form too: in double, 1 + tanh u cancels below u ~ -19. The float error is
    // u's rounding amplified by |2u| (40 ulp measured); 0.5 x (1 + tanhf u) was 4.8 million ulp off at x = -5.
    auto scan = ulp_scan([](float x) { return unary_forward(UnaryOp::Gelu, x, 0.f); }, [](double x) {
      return x / (1 + std::exp(-2 * std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    });
    scan.sweep(-5.f, 100.f);
    CAPTURE(scan.worst_x);
    CHECK(scan.worst <= 64.0);
  }
  SUBCASE("signed zeros, saturation and NaN") {
    CHECK(tanh_approx(0.f) == 0.f);
    CHECK_FALSE(std::signbit(tanh_approx(0.f)));
    CHECK(std::signbit(tanh_approx(-0.f)));
    CHECK(tanh_approx(20.f) == 1.f);
    CHECK(tanh_approx(-1e30f) == -1.f);
    CHECK(sigmoid_approx(-200.f) == 0.f);
    CHECK(sigmoid_approx(200.f) == 1.f);
    CHECK(sigmoid_approx(0.f) == 0.5f);
    CHECK(unary_forward(UnaryOp::Gelu, 50.f, 0.f) == 50.f);
    for (UnaryOp op : {UnaryOp::Tanh, UnaryOp::Sigmoid, UnaryOp::Gelu})
      CHECK(std::isnan(unary_forward(op, NAN, 0.f)));
  }
}
