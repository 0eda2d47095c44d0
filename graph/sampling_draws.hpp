#pragma once
// The per-relation draws behind graph/sampling.hpp: for each seed node, some entries of its row in a CSR
// (a CSC for in-edges, a CSR for out-edges), as that sampler's modes ask. Internal to graph/: sampling.cpp
// checks the arguments and assembles frontiers and blocks from what these return.
//
// Parallel strategy (every mode): the seeds are split over the threads (parallel_for) in two passes, the
// number of picks per seed (its offset in the output), then each seed's draw into its own slots. A seed's draw
// is a function of (key, node) only, so the result is the same for any thread count and seed order.
#include <cstdint>
#include <vector>

#include "kernels/sparse/format.hpp"

namespace topo::detail {

// `k` distinct values of 0..n-1 into out[0 .. min(k, n)), ascending (Floyd's algorithm; every value of
// 0..n-1 when k >= n); returns how many. No allocation, O(k^2): meant for fan-outs of tens.
std::int64_t sample_distinct_into(std::int64_t n, std::int64_t k, std::uint64_t state, std::int64_t* out);

// One relation's sampled edges, seed by seed in the order given, by increasing edge id within a seed (a
// repeated draw, with replacement, as adjacent copies): the row's other end (`neighbor`: the source of an
// in-edge, the destination of an out-edge), the seed node itself (`node`), the edge id and the seed's
// position in `seeds` (`seed_index`). [picks] each.
struct SampledEdges {
  std::vector<std::int64_t> neighbor, node, eid, seed_index;
  // Weighted draws only: the smallest edge id whose weight, read on a seed's row, is negative or not finite
  // (-1: none; the draw is then not meaningful and the caller raises).
  std::int64_t bad_weight_edge = -1;
};

// A set of edge ids (a draw's exclusions): open addressing over a power-of-two table of at least twice as many
// slots as ids, Fibonacci-hashed, empty slots -1. Built once per call and relation in O(ids); a lookup is about
// one probe into a table a batch's exclusions keep in cache, where a binary search over the sorted ids took ~10
// mispredicted branches per row entry (NeighborSampler([10, 25]) on 10M edges with 1,024 excluded: 2.15x the
// call without them).
class EdgeIdSet {
 public:
  EdgeIdSet() = default;
  explicit EdgeIdSet(const std::vector<std::int64_t>& ids);  // ids >= 0, any order, repeats allowed
  bool empty() const { return size_ == 0; }
  bool contains(std::int64_t id) const {
    if (size_ == 0) return false;
    for (std::uint64_t s = slot_of(id);; s = (s + 1) & mask_) {
      if (slots_[s] == id) return true;
      if (slots_[s] < 0) return false;
    }
  }

 private:
  std::uint64_t slot_of(std::int64_t id) const {
    return (static_cast<std::uint64_t>(id) * 0x9e3779b97f4a7c15ULL) >> shift_;
  }
  std::vector<std::int64_t> slots_;
  std::uint64_t mask_ = 0;
  int shift_ = 63;
  std::int64_t size_ = 0;
};

// How one relation is drawn. fanout: picks per seed, -1 for every entry (every positive-weight entry when
// weighted; never repeated, also with replace). weights: nullptr for uniform draws, else one per edge of the
// relation, indexed by edge id (rows.eids). The counts, as DGL 2.1's sample_neighbors:
//   uniform, distinct:             min(fanout, degree)
//   uniform, with replacement:     fanout, 0 for a row without entries
//   weighted, distinct:            min(fanout, entries of positive weight), drawn one after another in
//                                  proportion to the weights of those not yet drawn (DGL's TreeSampler)
//   weighted, with replacement:    fanout, 0 for a row without positive weight, each in proportion
// Zero-weight entries are never drawn. Excluded edges (`excluded`, nullptr or empty: none) are never drawn
// either: the counts and laws above hold for the row without them (uniform: over the entries left, other picks
// than the uniform modes' own), at a set lookup per entry of the seeds' rows.
struct RowDraw {
  std::int64_t fanout = -1;
  std::uint64_t key = 0;  // the draws of this relation under the call's seed
  bool replace = false;
  const float* weights = nullptr;
  const EdgeIdSet* excluded = nullptr;
};

// rows: on the host, with edge ids, of the graph's id dtype; seeds: valid, distinct row ids.
SampledEdges draw_rows(const CsrView& rows, const std::vector<std::int64_t>& seeds, const RowDraw& how);

}  // namespace topo::detail
