#include "apps/tasks/mirrored_sum/mirrored_sum.hpp"

#include "apps/tasks/rng.hpp"
#include "kernels/error.hpp"

namespace topo::apps {

void MirroredSumSpec::validate() const {
  TOPO_CHECK(n >= 1 && n <= (std::int64_t{1} << 24), "mirrored-sum: n = {} must be in [1, 2^24]", n);
  TOPO_CHECK(d >= 1, "mirrored-sum: d = {} must be >= 1", d);
  TOPO_CHECK(k >= 1 && k <= n, "mirrored-sum: k = {} must be in [1, n = {}]", k, n);
}

MirroredSumTask::MirroredSumTask(const MirroredSumSpec& spec) : spec_(spec) { spec_.validate(); }

GeneratedExample MirroredSumTask::example(Split split, std::int64_t index) const {
  TOPO_CHECK(index >= 0, "mirrored-sum: example index {} must be >= 0", index);
  constexpr std::uint64_t kStream = 11;  // apart from masked-sum's streams for the same seed
  SplitMix64 rng({spec_.seed, kStream, static_cast<std::uint64_t>(split), static_cast<std::uint64_t>(index)});
  const std::int64_t n = spec_.n, d = spec_.d;
  GeneratedExample ex;
  ex.length = n;
  ex.x.resize(static_cast<std::size_t>(n * d));
  for (float& v : ex.x) v = rng.uniform();
  std::vector<double> y(static_cast<std::size_t>(d), 0.0);
  for (std::int64_t i = 0; i < spec_.k; ++i) {
    const float* a = ex.x.data() + i * d;
    const float* b = ex.x.data() + (n - 1 - i) * d;
    for (std::int64_t f = 0; f < d; ++f) y[static_cast<std::size_t>(f)] += double(a[f]) * double(b[f]);
  }
  ex.y.assign(y.begin(), y.end());
  return ex;
}

float MirroredSumTask::constant_guess() const {
  double mean = 0;
  for (std::int64_t i = 0; i < spec_.k; ++i) mean += (i == spec_.n - 1 - i) ? 1.0 / 3.0 : 0.25;
  return static_cast<float>(mean);
}

}  // namespace topo::apps
