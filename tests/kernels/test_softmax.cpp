#include <cmath>

#include "kernels/dense/softmax.hpp"
#include "kernels/dense/softmax_math.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using topo::testing::kAwkwardSizes;
using topo::testing::random_uniform;

namespace {

// Naive row softmax / log-softmax in double over the last dim d.
std::vector<double> softmax_reference(bool log, const std::vector<double>& x, std::int64_t d) {
  std::vector<double> y(x.size());
  for (std::size_t r = 0; r * d < x.size(); ++r) {
    double m = -INFINITY;
    for (std::int64_t k = 0; k < d; ++k) m = std::max(m, x[r * d + k]);
    double s = 0;
    for (std::int64_t k = 0; k < d; ++k) s += std::exp(x[r * d + k] - m);
    for (std::int64_t k = 0; k < d; ++k)
      y[r * d + k] = log ? x[r * d + k] - m - std::log(s) : std::exp(x[r * d + k] - m) / s;
  }
  return y;
}

std::vector<float> to_float(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }
std::vector<double> to_double(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

}  // namespace

TEST_CASE("softmax and log_softmax match a naive row loop at awkward sizes") {
  std::uint64_t seed = 11;
  std::vector<Shape> shapes;
  for (std::int64_t rows : {1, 7, 33})
    for (std::int64_t d : kAwkwardSizes) shapes.push_back({rows, d});
  shapes.push_back({7, 31, 33});
  shapes.push_back({128 * 128, 300});  // the benchmark batch: exercises the threaded path
  for (const Shape& s : shapes)
    for (bool log : {false, true}) {
      CAPTURE(shape_str(s));
      CAPTURE(log);
      Tensor x = random_uniform(s, seed++, -8.f, 8.f);
      const std::vector<double> expected = softmax_reference(log, to_double(x.to_vector<float>()), s.back());
      Tensor y = log ? log_softmax(x) : softmax(x);
      REQUIRE(y.shape() == s);
      TOPO_CHECK_CLOSE(y.to_vector<float>(), to_float(expected), 1e-6, 1e-5);
    }
}

TEST_CASE("softmax is stable for large inputs and gives exactly 0 for -inf (masked) entries") {
  Tensor x = Tensor::from_vector(std::vector<float>{1000.f, 1001.f, -INFINITY, 999.f}, {1, 4});
  const std::vector<double> e = softmax_reference(false, {1000.0, 1001.0, -INFINITY, 999.0}, 4);
  const std::vector<float> y = softmax(x).to_vector<float>();
  TOPO_CHECK_CLOSE(y, to_float(e), 1e-6, 1e-5);
  CHECK(y[2] == 0.f);
  const std::vector<float> ly = log_softmax(x).to_vector<float>();
  CHECK(std::isinf(ly[2]));
  CHECK(ly[1] == doctest::Approx(std::log(e[1])).epsilon(1e-5));
  CHECK_THROWS_AS(softmax(Tensor::full({}, 1.f)), topo::Error);
  CHECK_THROWS_AS(softmax_backward(Tensor::zeros({2, 3}), Tensor::zeros({3, 2})), topo::Error);
}

TEST_CASE("softmax_backward and log_softmax_backward match central differences of the reference") {
  std::uint64_t seed = 21;
  for (std::int64_t rows : {1, 7})
    for (std::int64_t d : {1, 7, 31, 33})
      for (bool log : {false, true}) {
        CAPTURE(rows);
        CAPTURE(d);
        CAPTURE(log);
        Tensor x = random_uniform({rows, d}, seed++, -3.f, 3.f);
        Tensor w = random_uniform({rows, d}, seed++);
        const std::vector<double> xv = to_double(x.to_vector<float>());
        const std::vector<float> wv = w.to_vector<float>();
        const auto loss = [&](const std::vector<double>& v) {
          const std::vector<double> y = softmax_reference(log, v, d);
          double l = 0;
          for (std::size_t i = 0; i < y.size(); ++i) l += wv[i] * y[i];
          return l;
        };
        std::vector<float> numeric(xv.size());
        const double h = 1e-4;
        for (std::size_t i = 0; i < xv.size(); ++i) {
          std::vector<double> p = xv, m = xv;
          p[i] += h;
          m[i] -= h;
          numeric[i] = static_cast<float>((loss(p) - loss(m)) / (2 * h));
        }
        Tensor y = log ? log_softmax(x) : softmax(x);
        Tensor dx = log ? log_softmax_backward(w, y) : softmax_backward(w, y);
        TOPO_CHECK_CLOSE(dx.to_vector<float>(), numeric, 1e-4, 1e-3);
      }
}

TEST_CASE("exp_approx (the vectorizable exp softmax uses) is within 2 ulp of exp, 0 at -inf, NaN for NaN") {
  double worst = 0;
  for (int i = 0; i <= 200000; ++i) {
    const float x = -87.f + 175.f * static_cast<float>(i) / 200000.f;
    const double exact = std::exp(static_cast<double>(x));
    const double ulp = std::nextafter(static_cast<float>(exact), INFINITY) - static_cast<float>(exact);
    worst = std::max(worst, std::abs(exp_approx(x) - exact) / ulp);
  }
  CHECK(worst <= 2.0);
  CHECK(exp_approx(-INFINITY) == 0.f);
  CHECK(exp_approx(-100.f) == 0.f);
  CHECK(std::isnan(exp_approx(NAN)));
  CHECK(exp_approx(0.f) == 1.f);
}
