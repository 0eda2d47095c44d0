#pragma once
// Work-balanced row ranges for CSR kernels. Splitting rows evenly by count starves threads when degrees are
// skewed (a relay node has in-degree n while satellites have 5), so rows are cut where the running work
// (one unit per row plus one per entry) crosses equal shares. Many more ranges than threads are made and
// handed out dynamically, so one heavy row cannot hold the rest back for long.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/parallel.hpp"

namespace topo {

// Row boundaries b[0] = 0 < ... < b[parts] = num_rows of about equal work.
template <class Id>
std::vector<std::int64_t> balanced_row_splits(const Id* indptr, std::int64_t num_rows, std::int64_t parts) {
  const std::int64_t nnz = static_cast<std::int64_t>(indptr[num_rows]);
  const std::int64_t total = num_rows + nnz;
  parts = std::max<std::int64_t>(1, std::min(parts, num_rows));
  std::vector<std::int64_t> splits(parts + 1, num_rows);
  splits[0] = 0;
  // Work before row r is r + indptr[r]: monotone, so each cut is a binary search.
  for (std::int64_t p = 1; p < parts; ++p) {
    const std::int64_t target = total * p / parts;
    std::int64_t lo = splits[p - 1], hi = num_rows;
    while (lo < hi) {
      const std::int64_t mid = (lo + hi) / 2;
      if (mid + static_cast<std::int64_t>(indptr[mid]) < target) lo = mid + 1; else hi = mid;
    }
    splits[p] = lo;
  }
  return splits;
}

// f(row_begin, row_end) over work-balanced ranges of rows; serial when the whole job is small.
// `work_per_entry` is the scalar work of one CSR entry (e.g. heads * feature length).
template <class Id, class F>
void parallel_rows(const Id* indptr, std::int64_t num_rows, std::int64_t work_per_entry, F&& f) {
  if (num_rows <= 0) return;
  const std::int64_t nnz = static_cast<std::int64_t>(indptr[num_rows]);
  const int threads = num_threads();
  if (threads <= 1 || omp_in_parallel() || (num_rows + nnz) * std::max<std::int64_t>(work_per_entry, 1) < kParallelGrain) {
    f(std::int64_t{0}, num_rows);
    return;
  }
  const std::vector<std::int64_t> splits = balanced_row_splits(indptr, num_rows, std::int64_t{threads} * 8);
  const std::int64_t parts = static_cast<std::int64_t>(splits.size()) - 1;
  profile::count_parallel_region();
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::int64_t p = 0; p < parts; ++p)
    if (splits[p] < splits[p + 1]) f(splits[p], splits[p + 1]);
}

}  // namespace topo
