#include "graph/sampling_draws.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <utility>

#include "graph/sampling.hpp"
#include "kernels/parallel.hpp"

namespace topo::detail {

EdgeIdSet::EdgeIdSet(const std::vector<std::int64_t>& ids) {
  if (ids.empty()) return;
  std::uint64_t slots = 16;
  shift_ = 60;
  while (slots < 2 * ids.size()) {
    slots *= 2;
    --shift_;
  }
  slots_.assign(slots, -1);
  mask_ = slots - 1;
  for (const std::int64_t id : ids) {
    std::uint64_t s = slot_of(id);
    while (slots_[s] >= 0 && slots_[s] != id) s = (s + 1) & mask_;
    if (slots_[s] < 0) {
      slots_[s] = id;
      ++size_;
    }
  }
}

std::int64_t sample_distinct_into(std::int64_t n, std::int64_t k, std::uint64_t state, std::int64_t* out) {
  if (k >= n) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = i;
    return n;
  }
  for (std::int64_t m = 0, j = n - k; j < n; ++j, ++m) {
    state = splitmix64(state);
    const std::int64_t t = static_cast<std::int64_t>(state % static_cast<std::uint64_t>(j + 1));
    out[m] = std::find(out, out + m, t) == out + m ? t : j;
  }
  std::sort(out, out + k);
  return k;
}

namespace {

// Node v's stream of draws in a relation: a function of (relation key, node) only.
inline std::uint64_t row_state(std::uint64_t key, std::int64_t v) {
  return splitmix64(key ^ splitmix64(static_cast<std::uint64_t>(v)));
}

// A uniform double in (0, 1) from a draw's top 53 bits; never 0, so its logarithm is finite.
inline double open_unit(std::uint64_t state) { return (static_cast<double>(state >> 11) + 0.5) * 0x1p-53; }

// Picks out.eid[at .. at + k) (positions in v's row, which starts at `first`) become seed i's edges. A row
// lists its edges by increasing edge id, so ascending positions give ascending edge ids.
template <class T>
inline void positions_to_edges(const T* indices, const T* eids, std::int64_t first, std::int64_t v, std::int64_t i,
                               std::int64_t at, std::int64_t k, SampledEdges& out) {
  for (std::int64_t j = at; j < at + k; ++j) {
    const std::int64_t e = first + out.eid[j];
    out.neighbor[j] = indices[e];
    out.node[j] = v;
    out.eid[j] = eids[e];
    out.seed_index[j] = i;
  }
}

// A thread's scratch for the weighted draws and the exclusions, grown to the longest row it meets and reused
// across its seeds.
struct Scratch {
  std::vector<double> cumulative;                      // [degree] running sums of a row's weights
  std::vector<std::pair<double, std::int64_t>> keyed;  // [positive entries] (key, position in the row)
  std::vector<std::int64_t> left;                      // [entries not excluded] their positions, ascending
};

// Whether a row entry's edge is one of how's excluded ids.
template <class T>
inline bool is_excluded(const T* eids, std::int64_t e, const RowDraw& how) {
  return how.excluded != nullptr && how.excluded->contains(static_cast<std::int64_t>(eids[e]));
}

// The two passes of every mode. count(first, degree) -> a row's picks (it may scan the row, so this pass is
// parallel too); pick(first, degree, k, state, positions, scratch) writes the row's k picks, ascending
// positions in 0..degree-1. work_per_seed: parallel_for's grain estimate. The rows are read in place (a host
// graph's, never copied: a batch of seeds touches only its own rows, so sampling costs what it draws, not the
// graph's size).
template <class T, class Count, class Pick>
SampledEdges draw_in_two_passes(const CsrView& rows, const std::vector<std::int64_t>& seeds, std::uint64_t key,
                                std::int64_t work_per_seed, Count&& count, Pick&& pick) {
  const T* indptr = rows.indptr.data<T>();
  const T* indices = rows.indices.data<T>();
  const T* eids = rows.eids.data<T>();
  const auto n = static_cast<std::int64_t>(seeds.size());
  // Seeds are scattered over the graph: each one's indptr entry, row and edge ids are cache misses that only
  // a fetch issued seeds ahead overlaps (kAhead: ~ the misses a core keeps in flight).
  constexpr std::int64_t kAhead = 16;
  std::vector<std::int64_t> offset(static_cast<std::size_t>(n) + 1, 0);
  parallel_for(n, work_per_seed, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      if (i + kAhead < end) __builtin_prefetch(indptr + seeds[i + kAhead]);
      const std::int64_t first = indptr[seeds[i]];
      offset[i + 1] = count(first, indptr[seeds[i] + 1] - first);
    }
  });
  for (std::int64_t i = 0; i < n; ++i) {  // with replacement a fan-out of 2^62 is a caller's number, not a count
    const std::int64_t draws = offset[i + 1];
    TOPO_CHECK(!__builtin_add_overflow(draws, offset[i], &offset[i + 1]),
               "sampling: the draws of {} seeds overflow int64 ({} at seed {})", n, draws, i);
  }
  SampledEdges out;
  for (auto* v : {&out.neighbor, &out.node, &out.eid, &out.seed_index}) v->resize(static_cast<std::size_t>(offset[n]));
  parallel_for(n, work_per_seed, [&](std::int64_t begin, std::int64_t end) {
    Scratch scratch;
    for (std::int64_t i = begin; i < end; ++i) {
      if (i + kAhead / 2 < end) {  // the row's first line (a fan-out's picks land in a row of ~20 edges)
        const std::int64_t ahead = indptr[seeds[i + kAhead / 2]];
        __builtin_prefetch(indices + ahead);
        __builtin_prefetch(eids + ahead);
      }
      const std::int64_t v = seeds[i], first = indptr[v], at = offset[i], k = offset[i + 1] - at;
      if (k == 0) continue;
      // the picks (positions in v's row) land in eid's slots, then become the edges
      pick(first, indptr[v + 1] - first, k, row_state(key, v), out.eid.data() + at, scratch);
      positions_to_edges(indices, eids, first, v, i, at, k, out);
    }
  });
  return out;
}

// parallel_for's cost hint for a seed's picks (~32 operations each): the fan-out clamped, so that a caller's
// fan-out of 2^62 (a count no row reaches) neither overflows nor says more than a long row would.
std::int64_t pick_work(std::int64_t fanout) { return 32 * std::clamp<std::int64_t>(fanout, 8, std::int64_t{1} << 24); }

// Uniform without replacement, the benchmarked path (topo-graph sample): Floyd's draw of min(fanout, degree)
// positions (every one for fanout -1). ~32 scalar operations a pick (the draw, the repeat check, three
// gathers): a 1,024-seed batch at fan-out 10 is worth two threads.
template <class T>
SampledEdges draw_uniform_distinct(const CsrView& rows, const std::vector<std::int64_t>& seeds,
                                   std::int64_t fanout, std::uint64_t key) {
  return draw_in_two_passes<T>(
      rows, seeds, key, pick_work(fanout),
      [fanout](std::int64_t, std::int64_t degree) { return fanout < 0 ? degree : std::min(fanout, degree); },
      [](std::int64_t, std::int64_t degree, std::int64_t k, std::uint64_t state, std::int64_t* positions, Scratch&) {
        sample_distinct_into(degree, k, state, positions);
      });
}

// Uniform with replacement: `fanout` independent positions of a non-empty row.
template <class T>
SampledEdges draw_uniform_with_replacement(const CsrView& rows, const std::vector<std::int64_t>& seeds,
                                           std::int64_t fanout, std::uint64_t key) {
  return draw_in_two_passes<T>(
      rows, seeds, key, pick_work(fanout),
      [fanout](std::int64_t, std::int64_t degree) { return degree == 0 ? std::int64_t{0} : fanout; },
      [](std::int64_t, std::int64_t degree, std::int64_t k, std::uint64_t state, std::int64_t* positions, Scratch&) {
        for (std::int64_t m = 0; m < k; ++m) {
          state = splitmix64(state);
          positions[m] = static_cast<std::int64_t>(state % static_cast<std::uint64_t>(degree));
        }
        std::sort(positions, positions + k);
      });
}

// Uniform over the entries whose edges are not excluded, with or without replacement: the two uniform modes'
// draws over the positions left (Floyd's, or independent ones), mapped back to the row's positions. The law is
// theirs on the row without those edges; the picks differ from theirs even on rows without excluded entries.
template <class T>
SampledEdges draw_uniform_excluding(const CsrView& rows, const std::vector<std::int64_t>& seeds, const RowDraw& how) {
  const T* eids = rows.eids.data<T>();
  const std::int64_t fanout = how.fanout;
  const bool replace = how.replace && fanout >= 0;  // fanout -1 takes every edge left once, as the uniform modes
  const auto count = [&](std::int64_t first, std::int64_t degree) {
    std::int64_t left = 0;
    for (std::int64_t e = first; e < first + degree; ++e) left += !is_excluded(eids, e, how);
    if (replace) return left == 0 ? std::int64_t{0} : fanout;
    return fanout < 0 ? left : std::min(fanout, left);
  };
  const auto pick = [&](std::int64_t first, std::int64_t degree, std::int64_t k, std::uint64_t state,
                        std::int64_t* positions, Scratch& scratch) {
    auto& left = scratch.left;
    left.clear();
    for (std::int64_t j = 0; j < degree; ++j)
      if (!is_excluded(eids, first + j, how)) left.push_back(j);
    const auto n_left = static_cast<std::int64_t>(left.size());
    if (replace) {
      for (std::int64_t m = 0; m < k; ++m) {
        state = splitmix64(state);
        positions[m] = static_cast<std::int64_t>(state % static_cast<std::uint64_t>(n_left));
      }
      std::sort(positions, positions + k);
    } else {
      sample_distinct_into(n_left, k, state, positions);
    }
    for (std::int64_t m = 0; m < k; ++m) positions[m] = left[positions[m]];  // ascending stays ascending
  };
  // the uniform modes' ~32 operations a pick, and a set lookup per row entry (rows of ~20 entries)
  return draw_in_two_passes<T>(rows, seeds, how.key, 16 * 20 + pick_work(fanout), count, pick);
}

// Weighted, with or without replacement. Without: Efraimidis and Spirakis's keys, -log(u) / w per positive
// entry, the k smallest kept: the same law as drawing one after another in proportion to the weights left
// (DGL's), in one pass and one partial sort. With: k inverse-CDF draws on the row's running sums (a
// zero-weight entry spans no interval, so it is never hit).
template <class T>
SampledEdges draw_weighted(const CsrView& rows, const std::vector<std::int64_t>& seeds, const RowDraw& how) {
  const T* eids = rows.eids.data<T>();
  const std::int64_t fanout = how.fanout;
  std::atomic<std::int64_t> bad_edge{std::numeric_limits<std::int64_t>::max()};
  const auto weight = [&](std::int64_t e) {  // of row entry e: 0 if excluded, else its weight
    return is_excluded(eids, e, how) ? 0.f : how.weights[eids[e]];
  };
  const auto usable = [](float w) { return w > 0.f && w <= std::numeric_limits<float>::max(); };  // positive, finite
  // Counting reads every weight of a seed's row, so it is also where bad weights are found (only the rows
  // sampled are read: a call costs its seeds' rows, not the graph's edges).
  const auto count = [&](std::int64_t first, std::int64_t degree) {
    std::int64_t positive = 0;
    for (std::int64_t e = first; e < first + degree; ++e) {
      const float w = weight(e);
      if (usable(w)) {
        ++positive;
      } else if (!(w == 0.f)) {  // negative, NaN or infinite
        std::int64_t seen = bad_edge.load(std::memory_order_relaxed);
        const std::int64_t id = eids[e];
        while (id < seen && !bad_edge.compare_exchange_weak(seen, id, std::memory_order_relaxed)) {
        }
      }
    }
    if (how.replace) return positive == 0 ? std::int64_t{0} : fanout < 0 ? positive : fanout;
    return fanout < 0 ? positive : std::min(fanout, positive);
  };
  const auto pick = [&](std::int64_t first, std::int64_t degree, std::int64_t k, std::uint64_t state,
                        std::int64_t* positions, Scratch& scratch) {
    if (!how.replace || fanout < 0) {
      auto& keyed = scratch.keyed;
      keyed.clear();
      for (std::int64_t j = 0; j < degree; ++j)
        if (usable(weight(first + j))) keyed.emplace_back(0.0, j);
      if (k < static_cast<std::int64_t>(keyed.size())) {  // else every positive entry, in row order
        for (auto& [entry_key, j] : keyed) {
          state = splitmix64(state);
          entry_key = -std::log(open_unit(state)) / weight(first + j);
        }
        std::nth_element(keyed.begin(), keyed.begin() + k, keyed.end());
      }
      for (std::int64_t m = 0; m < k; ++m) positions[m] = keyed[m].second;
    } else {
      auto& cumulative = scratch.cumulative;
      cumulative.resize(static_cast<std::size_t>(degree));
      double total = 0;
      std::int64_t last_positive = 0;
      for (std::int64_t j = 0; j < degree; ++j) {
        const float w = weight(first + j);
        if (usable(w)) {
          total += w;
          last_positive = j;
        }
        cumulative[j] = total;
      }
      for (std::int64_t m = 0; m < k; ++m) {
        state = splitmix64(state);
        const auto hit = std::upper_bound(cumulative.begin(), cumulative.end(), open_unit(state) * total);
        // u * total can round up to total itself: then the last positive entry is the one meant
        positions[m] = hit == cumulative.end() ? last_positive : hit - cumulative.begin();
      }
    }
    std::sort(positions, positions + k);
  };
  // ~16 operations a row entry (the weight gathered twice, a key or a running sum) on rows of ~20 entries
  SampledEdges out = draw_in_two_passes<T>(rows, seeds, how.key, 16 * 20 + pick_work(fanout),
                                           count, pick);
  if (bad_edge.load() != std::numeric_limits<std::int64_t>::max()) out.bad_weight_edge = bad_edge.load();
  return out;
}

template <class T>
SampledEdges draw_rows_of(const CsrView& rows, const std::vector<std::int64_t>& seeds, const RowDraw& how) {
  if (how.weights != nullptr) return draw_weighted<T>(rows, seeds, how);
  if (how.excluded != nullptr && !how.excluded->empty()) return draw_uniform_excluding<T>(rows, seeds, how);
  if (how.replace && how.fanout >= 0) return draw_uniform_with_replacement<T>(rows, seeds, how.fanout, how.key);
  return draw_uniform_distinct<T>(rows, seeds, how.fanout, how.key);  // fanout -1 takes every edge, as DGL's
}

}  // namespace

SampledEdges draw_rows(const CsrView& rows, const std::vector<std::int64_t>& seeds, const RowDraw& how) {
  return rows.dtype() == DType::I64 ? draw_rows_of<std::int64_t>(rows, seeds, how)
                                    : draw_rows_of<std::int32_t>(rows, seeds, how);
}

}  // namespace topo::detail
