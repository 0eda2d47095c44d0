#pragma once
// Mini-batch index lists. Training batches are length-bucketed (little padding) yet shuffled, and depend
// only on (seed, epoch), so a resumed run sees the same batches as an uninterrupted one.
#include <cstdint>
#include <vector>

namespace topo::text {

// Shuffle all indices, cut into pools of pool*batch_size, sort each pool by length (stable), cut pools into
// batches of batch_size (the last of a pool may be short), then shuffle the batch order. Every index in
// [0, lengths.size()) appears exactly once. batch_size and pool must be positive.
std::vector<std::vector<std::int64_t>> length_bucketed_batches(const std::vector<std::int64_t>& lengths,
                                                               std::int64_t batch_size, std::uint64_t seed,
                                                               std::int64_t epoch, std::int64_t pool = 50);

// 0..count-1 in order, in batches of batch_size (the last may be short); for evaluation.
std::vector<std::vector<std::int64_t>> sequential_batches(std::int64_t count, std::int64_t batch_size);

}  // namespace topo::text
