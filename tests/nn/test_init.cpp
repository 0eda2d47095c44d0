// Initialisers: statistics of large draws against the distributions' moments, bounds, determinism.
#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "nn/init.hpp"
#include "tests/nn/nn_testing.hpp"

namespace init = topo::nn::init;
using topo::Tensor;

namespace {

struct Stats {
  double mean = 0, stddev = 0, absmax = 0;
};
Stats stats(const Tensor& t) {
  const auto v = t.to_vector<float>();
  Stats s;
  for (float x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  for (float x : v) {
    s.stddev += (x - s.mean) * (x - s.mean);
    s.absmax = std::max(s.absmax, double(std::abs(x)));
  }
  s.stddev = std::sqrt(s.stddev / static_cast<double>(v.size()));
  return s;
}

}  // namespace

TEST_CASE("init: fans follow PyTorch") {
  CHECK(init::compute_fans({30, 20}).fan_in == 20);
  CHECK(init::compute_fans({30, 20}).fan_out == 30);
  CHECK(init::compute_fans({8, 4, 3, 3}).fan_in == 36);
  CHECK(init::compute_fans({8, 4, 3, 3}).fan_out == 72);
  CHECK(init::compute_fans({5}).fan_in == 5);
  CHECK_THROWS_AS(init::compute_fans({}), topo::Error);
}

TEST_CASE("init: moments of large draws (n = 60000; tolerances ~5 standard errors)") {
  const topo::Shape shape{200, 300};  // fan_in 300, fan_out 200
  const double n = 60000;
  {  // U(-a, a): sd a/sqrt(3)
    const double a = std::sqrt(6.0 / 500.0);
    const Stats s = stats(init::xavier_uniform(shape, 1));
    CHECK(std::abs(s.mean) < 5 * (a / std::sqrt(3.0)) / std::sqrt(n));
    CHECK(s.stddev == doctest::Approx(a / std::sqrt(3.0)).epsilon(0.02));
    CHECK(s.absmax <= a + 1e-6);
  }
  {
    const double sd = 2.0 * std::sqrt(2.0 / 500.0);
    const Stats s = stats(init::xavier_normal(shape, 2, 2.f));
    CHECK(std::abs(s.mean) < 5 * sd / std::sqrt(n));
    CHECK(s.stddev == doctest::Approx(sd).epsilon(0.02));
  }
  {  // kaiming a = sqrt(5): bound 1/sqrt(fan_in); a = 0: sqrt(6/fan_in)
    const Stats s5 = stats(init::kaiming_uniform(shape, 3, std::sqrt(5.f)));
    CHECK(s5.absmax <= 1.0 / std::sqrt(300.0) + 1e-7);
    CHECK(s5.stddev == doctest::Approx(1.0 / std::sqrt(300.0) / std::sqrt(3.0)).epsilon(0.02));
    const Stats s0 = stats(init::kaiming_uniform(shape, 3, 0.f));
    CHECK(s0.stddev == doctest::Approx(std::sqrt(6.0 / 300.0) / std::sqrt(3.0)).epsilon(0.02));
  }
  {
    const Stats s = stats(init::normal(shape, 1.5f, 0.3f, 4));
    CHECK(std::abs(s.mean - 1.5) < 5 * 0.3 / std::sqrt(n));
    CHECK(s.stddev == doctest::Approx(0.3).epsilon(0.02));
  }
  {
    const Stats s = stats(init::uniform(shape, 2.f, 4.f, 5));
    CHECK(std::abs(s.mean - 3.0) < 5 * (1.0 / std::sqrt(3.0)) / std::sqrt(n));
  }
  CHECK(stats(init::zeros(shape)).absmax == 0.0);
  CHECK(stats(init::ones({7})).mean == 1.0);
  CHECK_THROWS_AS(init::normal(shape, 0.f, -1.f, 1), topo::Error);
  CHECK_THROWS_AS(init::make(init::InitSpec::keep(), shape, 1), topo::Error);
}

TEST_CASE("init: deterministic by seed; derived seeds are distinct") {
  CHECK(init::xavier_uniform({33, 7}, 99).to_vector<float>() == init::xavier_uniform({33, 7}, 99).to_vector<float>());
  CHECK(init::xavier_uniform({33, 7}, 99).to_vector<float>() != init::xavier_uniform({33, 7}, 98).to_vector<float>());
  std::set<std::uint64_t> seeds;
  for (std::uint64_t model : {0ull, 1ull, 2ull})
    for (std::uint64_t i = 0; i < 1000; ++i) seeds.insert(init::derive_seed(model, i));
  CHECK(seeds.size() == 3000);
  const auto spec = init::InitSpec::normal(0.f, 2.f);
  CHECK(init::make(spec, {5, 5}, 3).to_vector<float>() == init::normal({5, 5}, 0.f, 2.f, 3).to_vector<float>());
}
