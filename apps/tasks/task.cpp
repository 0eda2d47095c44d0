#include "apps/tasks/task.hpp"

#include <algorithm>

#include "apps/tasks/rng.hpp"

namespace topo::apps {

std::string split_name(Split split) {
  switch (split) {
    case Split::Train: return "train";
    case Split::Dev: return "dev";
    case Split::Test: return "test";
  }
  return "?";
}

std::vector<std::int64_t> epoch_order(std::int64_t size, std::uint64_t seed, std::int64_t epoch) {
  constexpr std::uint64_t kShuffleStream = 3;  // the shuffle's stream key, apart from data and init streams
  std::vector<std::int64_t> order(static_cast<std::size_t>(size));
  for (std::int64_t i = 0; i < size; ++i) order[static_cast<std::size_t>(i)] = i;
  SplitMix64 rng({seed, kShuffleStream, static_cast<std::uint64_t>(epoch)});
  for (std::int64_t i = size - 1; i > 0; --i)
    std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(rng.below(i + 1))]);
  return order;
}

std::vector<std::vector<std::int64_t>> Task::epoch_batches(std::int64_t batch, std::uint64_t seed,
                                                           std::int64_t epoch) const {
  const std::vector<std::int64_t> order = epoch_order(size(Split::Train), seed, epoch);
  std::vector<std::vector<std::int64_t>> batches;
  for (std::size_t begin = 0; begin < order.size(); begin += static_cast<std::size_t>(batch))
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(begin),
                         order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), begin + batch)));
  return batches;
}

}  // namespace topo::apps
