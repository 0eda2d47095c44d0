#pragma once
// Which source rows the CSR row loops (gspmm, sage_mean) fetch ahead of use, and the fetching.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/sparse/simd_rows.hpp"

namespace topo {

constexpr std::int64_t kScatteredPrefetchRows = 8;  // how far ahead every source of a row is, when scattered
constexpr std::int64_t kScatteredTableBytes = std::int64_t{1} << 20;

// Whether the rows' sources lie scattered over a source table larger than L2 (kScatteredTableBytes): on average
// more than a page apart both within a sampled row (consecutive sources) and across rows (a row's k-th source
// against the next row's k-th). Then every source is a cache miss that only a prefetch issued rows ahead hides
// (a planted-partition graph's random neighbours, 1M nodes x 16 floats: gspmm 15-20% faster on Zen 4, 64
// against 85-92 ms on the Xeon with AMX). At 100k nodes (3-6 MB tables) the same call repeated back to back
// runs faster without (the Xeon: 2.1-2.6 against 2.7-3.3 ms at 8 floats), but inside a GCN epoch, where each
// aggregation finds its table cold, the prefetches still win (30.2-32.9 against 31.2-33.3 ms an epoch, five
// runs each alternated), so the threshold stays at L2's size. Window and ring rows (near in both), relay rows
// (contiguous within), and merged multi-table rows (far within, each table a stream advancing one row per row)
// keep the newest-source prefetch alone: fetching every source ahead cost them 25-40% (topo-bench kernels),
// their sources being in cache or followed by the hardware prefetchers.
template <class Id>
bool scattered_sources(const Id* indptr, const Id* indices, std::int64_t rows, std::int64_t row_bytes,
                       std::int64_t table_rows) {
  if (rows < 2 || table_rows * row_bytes <= kScatteredTableBytes) return false;
  const std::int64_t step = std::max<std::int64_t>(1, (rows - 1) / 64);
  double within = 0, across = 0;
  std::int64_t n_within = 0, n_across = 0;
  for (std::int64_t v = 0; v + 1 < rows; v += step) {
    const std::int64_t a = indptr[v], da = indptr[v + 1] - a, b = indptr[v + 1], db = indptr[v + 2] - b;
    for (std::int64_t k = 1; k < std::min<std::int64_t>(da, 9); ++k, ++n_within)
      within += std::abs(static_cast<double>(indices[a + k]) - static_cast<double>(indices[a + k - 1]));
    for (std::int64_t k = 0; k < std::min<std::int64_t>({da, db, 8}); ++k, ++n_across)
      across += std::abs(static_cast<double>(indices[b + k]) - static_cast<double>(indices[a + k]));
  }
  const auto far = [&](double sum, std::int64_t n) {
    return n > 0 && sum / static_cast<double>(n) * static_cast<double>(row_bytes) > 4096.0;
  };
  return far(within, n_within) && far(across, n_across);
}

// Before row v of [begin, end) is summed: every source row of row v + kScatteredPrefetchRows when the sources are
// scattered, else the newest source of row v + simd::kPrefetchRows (on sliding-window and ring topologies with
// sorted in-edges the one row not already in cache: the rest were read by the rows just summed; a row's short
// vector sums leave too little slack for the hardware prefetchers alone). Source u's row: `row_floats` floats at
// table + u * stride.
template <class Id>
inline void prefetch_sources_ahead(const Id* indptr, const Id* indices, std::int64_t v, std::int64_t end,
                                   bool scattered, const float* table, std::int64_t stride, std::int64_t row_floats) {
  if (scattered) {
    if (v + kScatteredPrefetchRows < end)
      for (std::int64_t k = indptr[v + kScatteredPrefetchRows]; k < indptr[v + kScatteredPrefetchRows + 1]; ++k)
        simd::prefetch_row(table + static_cast<std::int64_t>(indices[k]) * stride, row_floats);
  } else if (const std::int64_t w = v + simd::kPrefetchRows; w < end && indptr[w + 1] > indptr[w]) {
    simd::prefetch_row(table + static_cast<std::int64_t>(indices[indptr[w + 1] - 1]) * stride, row_floats);
  }
}

}  // namespace topo
