#include "apps/text/batching.hpp"

#include <algorithm>
#include <numeric>

#include "apps/tasks/rng.hpp"
#include "kernels/error.hpp"

namespace topo::text {

namespace {

template <class T>
void shuffle(std::vector<T>& v, apps::SplitMix64& rng) {  // Fisher-Yates
  for (std::size_t i = v.size(); i > 1; --i)
    std::swap(v[i - 1], v[static_cast<std::size_t>(rng.below(static_cast<std::int64_t>(i)))]);
}

}  // namespace

std::vector<std::vector<std::int64_t>> length_bucketed_batches(const std::vector<std::int64_t>& lengths,
                                                               std::int64_t batch_size, std::uint64_t seed,
                                                               std::int64_t epoch, std::int64_t pool) {
  TOPO_CHECK(batch_size > 0, "batch size must be positive, got {}", batch_size);
  TOPO_CHECK(pool > 0, "bucketing pool must be positive, got {}", pool);
  TOPO_CHECK(lengths.size() < (std::size_t{1} << 32), "too many examples to shuffle: {}", lengths.size());
  // One stream per (seed, epoch): epoch e's batches do not depend on how many epochs ran before.
  apps::SplitMix64 rng({seed, static_cast<std::uint64_t>(epoch), 0x6261746368ULL /* "batch" */});
  std::vector<std::int64_t> order(lengths.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  shuffle(order, rng);
  const auto n = static_cast<std::int64_t>(order.size());
  const std::int64_t pool_size = pool * batch_size;
  std::vector<std::vector<std::int64_t>> batches;
  batches.reserve(static_cast<std::size_t>((n + batch_size - 1) / batch_size));
  for (std::int64_t p = 0; p < n; p += pool_size) {
    const auto first = order.begin() + p, last = order.begin() + std::min(n, p + pool_size);
    // Stable on the shuffled order: equal lengths stay randomly ordered.
    std::stable_sort(first, last, [&](std::int64_t a, std::int64_t b) {
      return lengths[static_cast<std::size_t>(a)] < lengths[static_cast<std::size_t>(b)];
    });
    for (auto b = first; b < last; b += std::min<std::int64_t>(batch_size, last - b))
      batches.emplace_back(b, b + std::min<std::int64_t>(batch_size, last - b));
  }
  shuffle(batches, rng);
  return batches;
}

std::vector<std::vector<std::int64_t>> sequential_batches(std::int64_t count, std::int64_t batch_size) {
  TOPO_CHECK(batch_size > 0, "batch size must be positive, got {}", batch_size);
  TOPO_CHECK(count >= 0, "example count must be >= 0, got {}", count);
  std::vector<std::vector<std::int64_t>> batches;
  for (std::int64_t b = 0; b < count; b += batch_size) {
    std::vector<std::int64_t>& batch = batches.emplace_back(static_cast<std::size_t>(std::min(batch_size, count - b)));
    std::iota(batch.begin(), batch.end(), b);
  }
  return batches;
}

}  // namespace topo::text
