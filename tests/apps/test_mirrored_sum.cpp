// The mirrored-summation generator: the definition (y = sum_{i<K} a_i * a_{N-1-i} elementwise), determinism
// per (seed, split, index), the constant guess being the target's mean, and errors naming bad fields.
#include <doctest/doctest.h>

#include "apps/tasks/mirrored_sum/mirrored_sum.hpp"
#include "kernels/error.hpp"

using namespace topo;
using namespace topo::apps;

TEST_CASE("mirrored-sum: targets are the sums of the K mirrored pairs") {
  for (const MirroredSumSpec spec : {MirroredSumSpec{100, 50, 1, 3}, MirroredSumSpec{7, 3, 7, 4}, MirroredSumSpec{10, 2, 5, 5}}) {
    const MirroredSumTask task(spec);
    const GeneratedExample ex = task.example(Split::Train, 12);
    REQUIRE(ex.length == spec.n);
    REQUIRE(ex.x.size() == static_cast<std::size_t>(spec.n * spec.d));
    REQUIRE(ex.y.size() == static_cast<std::size_t>(spec.d));
    for (std::int64_t f = 0; f < spec.d; ++f) {
      double y = 0;
      for (std::int64_t i = 0; i < spec.k; ++i)
        y += double(ex.x[static_cast<std::size_t>(i * spec.d + f)]) * ex.x[static_cast<std::size_t>((spec.n - 1 - i) * spec.d + f)];
      CHECK(ex.y[static_cast<std::size_t>(f)] == static_cast<float>(y));
    }
    for (float v : ex.x) CHECK((v >= 0.f && v < 1.f));
  }
}

TEST_CASE("mirrored-sum: deterministic per (seed, split, index), batches without padding") {
  const MirroredSumTask a({20, 4, 3, 9}), b({20, 4, 3, 9}), other({20, 4, 3, 10});
  CHECK(a.example(Split::Dev, 5).x == b.example(Split::Dev, 5).x);
  CHECK(a.example(Split::Dev, 5).x != a.example(Split::Test, 5).x);
  CHECK(a.example(Split::Dev, 5).x != other.example(Split::Dev, 5).x);
  const TaskBatch batch = a.range(Split::Train, 0, 3);
  CHECK(batch.inputs.lengths == std::vector<std::int64_t>{20, 20, 20});
  CHECK(batch.inputs.features.shape() == Shape{60, 4});
  CHECK(batch.targets.shape() == Shape{3, 4});
}

TEST_CASE("mirrored-sum: the constant guess is the target's mean (K/4, a middle square counts 1/3)") {
  CHECK(MirroredSumTask({100, 50, 10, 1}).constant_guess() == doctest::Approx(2.5));
  CHECK(MirroredSumTask({5, 2, 5, 1}).constant_guess() == doctest::Approx(4 * 0.25 + 1.0 / 3.0));
  // Measured mean over many examples agrees with the guess (so it is the MSE-optimal constant).
  const MirroredSumTask task({9, 8, 6, 2});
  double mean = 0;
  const int count = 4000;
  for (int i = 0; i < count; ++i)
    for (float v : task.example(Split::Train, i).y) mean += v;
  mean /= count * 8.0;
  CHECK(mean == doctest::Approx(task.constant_guess()).epsilon(0.01));
  CHECK_THROWS_WITH_AS(MirroredSumTask({10, 2, 11, 1}), doctest::Contains("k = 11"), Error);
  CHECK_THROWS_WITH_AS(MirroredSumTask({10, 0, 1, 1}), doctest::Contains("d = 0"), Error);
}
