#include "apps/tasks/masked_sum/masked_sum.hpp"

#include "apps/tasks/rng.hpp"
#include "kernels/error.hpp"

namespace topo::apps {

void MaskedSumSpec::validate() const {
  TOPO_CHECK(d >= 2, "masked-sum: d = {} must be >= 2 (one mask feature plus at least one value)", d);
  TOPO_CHECK(n >= 1, "masked-sum: n = {} must be >= 1", n);
  TOPO_CHECK(n <= (std::int64_t{1} << 31), "masked-sum: n = {} is too long", n);
  TOPO_CHECK(n_min >= 0 && n_min <= n, "masked-sum: n_min = {} must be in [0, n = {}] (0: fixed length)", n_min, n);
  const std::int64_t shortest = n_min > 0 ? n_min : n;
  TOPO_CHECK(k >= 1 && k <= shortest, "masked-sum: k = {} must be in [1, {}] (the shortest sequence length)", k,
             shortest);
}

MaskedSumTask::MaskedSumTask(const MaskedSumSpec& spec) : spec_(spec) { spec_.validate(); }

GeneratedExample MaskedSumTask::example(Split split, std::int64_t index) const {
  TOPO_CHECK(index >= 0, "masked-sum: example index {} must be >= 0", index);
  SplitMix64 rng({spec_.seed, static_cast<std::uint64_t>(split), static_cast<std::uint64_t>(index)});
  const std::int64_t d = spec_.d;
  GeneratedExample ex;
  ex.length = spec_.n_min > 0 ? spec_.n_min + rng.below(spec_.n - spec_.n_min + 1) : spec_.n;
  ex.x.assign(static_cast<std::size_t>(ex.length * d), 0.f);
  for (std::int64_t i = 0; i < ex.length; ++i)
    for (std::int64_t f = 1; f < d; ++f) ex.x[static_cast<std::size_t>(i * d + f)] = rng.uniform();
  // Exactly k distinct masked positions: the first k of a partial Fisher-Yates shuffle.
  std::vector<std::int64_t> positions(static_cast<std::size_t>(ex.length));
  for (std::int64_t i = 0; i < ex.length; ++i) positions[static_cast<std::size_t>(i)] = i;
  for (std::int64_t j = 0; j < spec_.k; ++j) {
    const std::int64_t pick = j + rng.below(ex.length - j);
    std::swap(positions[static_cast<std::size_t>(j)], positions[static_cast<std::size_t>(pick)]);
    ex.x[static_cast<std::size_t>(positions[static_cast<std::size_t>(j)] * d)] = 1.f;
  }
  // Target summed in double, in position order, then rounded once.
  std::vector<double> y(static_cast<std::size_t>(d - 1), 0.0);
  for (std::int64_t i = 0; i < ex.length; ++i) {
    if (ex.x[static_cast<std::size_t>(i * d)] == 0.f) continue;
    for (std::int64_t f = 1; f < d; ++f) y[static_cast<std::size_t>(f - 1)] += ex.x[static_cast<std::size_t>(i * d + f)];
  }
  ex.y.assign(y.begin(), y.end());
  return ex;
}

}  // namespace topo::apps
