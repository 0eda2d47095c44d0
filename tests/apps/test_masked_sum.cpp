// The masked-summation generator: the definition (exactly k masks, the target is the masked sum),
// determinism, disjoint splits, variable lengths, batching, and the k/2 baseline.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <set>

#include "apps/tasks/masked_sum/masked_sum.hpp"
#include "kernels/error.hpp"

using namespace topo;
using namespace topo::apps;

namespace {

// The target recomputed from the features alone, independently of the generator's own loop.
std::vector<double> reference_target(const MaskedSumExample& ex, std::int64_t d) {
  std::vector<double> y(static_cast<std::size_t>(d - 1), 0.0);
  for (std::int64_t i = 0; i < ex.length; ++i) {
    const float mask = ex.x[static_cast<std::size_t>(i * d)];
    for (std::int64_t f = 0; f + 1 < d; ++f) y[static_cast<std::size_t>(f)] += mask * ex.x[static_cast<std::size_t>(i * d + f + 1)];
  }
  return y;
}

}  // namespace

TEST_CASE("masked-sum: exactly k masks, values in [0, 1), targets are the masked sums") {
  for (const auto& [n, k, d] : std::vector<std::array<std::int64_t, 3>>{{1, 1, 2}, {7, 3, 5}, {33, 10, 10}, {200, 10, 10}}) {
    const MaskedSumTask task({n, 0, k, d, 17});
    for (Split split : {Split::Train, Split::Dev, Split::Test}) {
      for (std::int64_t index : {0, 1, 99}) {
        const MaskedSumExample ex = task.example(split, index);
        REQUIRE(ex.length == n);
        REQUIRE(ex.x.size() == static_cast<std::size_t>(n * d));
        REQUIRE(ex.y.size() == static_cast<std::size_t>(d - 1));
        std::int64_t ones = 0;
        for (std::int64_t i = 0; i < n; ++i) {
          const float m = ex.x[static_cast<std::size_t>(i * d)];
          CHECK((m == 0.f || m == 1.f));
          ones += m == 1.f;
          for (std::int64_t f = 1; f < d; ++f) {
            const float v = ex.x[static_cast<std::size_t>(i * d + f)];
            CHECK(v >= 0.f);
            CHECK(v < 1.f);
          }
        }
        CHECK(ones == k);
        const std::vector<double> y = reference_target(ex, d);
        for (std::size_t f = 0; f < y.size(); ++f) CHECK(ex.y[f] == doctest::Approx(y[f]).epsilon(1e-6));
      }
    }
  }
}

TEST_CASE("masked-sum: deterministic per (seed, split, index); splits and seeds differ") {
  const MaskedSumTask a({20, 0, 3, 4, 5}), b({20, 0, 3, 4, 5}), other_seed({20, 0, 3, 4, 6});
  CHECK(a.example(Split::Train, 12).x == b.example(Split::Train, 12).x);
  CHECK(a.example(Split::Test, 0).y == b.example(Split::Test, 0).y);
  // Order of generation does not matter: a batch equals its examples drawn one by one.
  const TaskBatch batch = a.batch(Split::Dev, {3, 1, 2});
  std::vector<float> expected;
  for (std::int64_t i : {3, 1, 2}) {
    const auto ex = a.example(Split::Dev, i);
    expected.insert(expected.end(), ex.x.begin(), ex.x.end());
  }
  CHECK(batch.inputs.features.to_vector<float>() == expected);
  // No example repeats across the splits (nor across indices) over the first few hundred.
  std::set<std::vector<float>> seen;
  for (Split split : {Split::Train, Split::Dev, Split::Test})
    for (std::int64_t i = 0; i < 300; ++i) seen.insert(a.example(split, i).x);
  CHECK(seen.size() == 900u);
  CHECK(a.example(Split::Train, 0).x != other_seed.example(Split::Train, 0).x);
}

TEST_CASE("masked-sum: variable lengths stay in [n_min, n] and batch without padding") {
  const MaskedSumTask task({31, 5, 3, 3, 9});
  std::set<std::int64_t> lengths;
  for (std::int64_t i = 0; i < 200; ++i) {
    const auto ex = task.example(Split::Train, i);
    CHECK(ex.length >= 5);
    CHECK(ex.length <= 31);
    lengths.insert(ex.length);
    std::int64_t ones = 0;
    for (std::int64_t p = 0; p < ex.length; ++p) ones += ex.x[static_cast<std::size_t>(p * 3)] == 1.f;
    CHECK(ones == 3);
  }
  CHECK(lengths.size() > 10u);  // lengths really vary
  const TaskBatch b = task.range(Split::Test, 0, 7);
  CHECK(b.inputs.size() == 7);
  CHECK(b.inputs.features.size(0) == b.inputs.num_tokens());
  CHECK(b.inputs.features.size(1) == 3);
  CHECK(b.targets.shape() == Shape{7, 2});
  CHECK(!b.inputs.token_ids.defined());
}

TEST_CASE("masked-sum: the k/2 baseline is measured on the split") {
  const MaskedSumTask task({20, 0, 3, 4, 1});
  const std::int64_t count = 2000;
  double sum = 0.0;
  for (std::int64_t i = 0; i < count; ++i)
    for (float t : task.example(Split::Test, i).y) sum += (t - 1.5) * (t - 1.5);
  CHECK(task.constant_guess_mse(Split::Test, count) == doctest::Approx(sum / (count * 3.0)).epsilon(1e-12));
  // A sum of k U[0, 1) has variance k / 12: the measured baseline is close to it.
  CHECK(task.constant_guess_mse(Split::Test, count) == doctest::Approx(3.0 / 12.0).epsilon(0.1));
}

TEST_CASE("masked-sum: bad specs name the field") {
  auto message = [](MaskedSumSpec spec) {
    try {
      MaskedSumTask task(spec);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(message({10, 0, 11, 4, 1}).find("k = 11") != std::string::npos);
  CHECK(message({10, 4, 5, 4, 1}).find("k = 5") != std::string::npos);
  CHECK(message({10, 0, 3, 1, 1}).find("d = 1") != std::string::npos);
  CHECK(message({0, 0, 1, 4, 1}).find("n = 0") != std::string::npos);
  CHECK(message({10, 11, 1, 4, 1}).find("n_min = 11") != std::string::npos);
}
