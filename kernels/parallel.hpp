#pragma once
// parallel_for: OpenMP over [0, n) in contiguous chunks, serial below `grain` items of work.
// Tiny ops run serially because starting a parallel region costs more than they do (cf. DGL PR #2412).
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "kernels/profile.hpp"
#include "kernels/threads.hpp"

namespace topo {

// Roughly the number of scalar operations below which a parallel region is not worth opening: ~50-100 us of
// one core's work. A region costs a fork and a join (~2 us while the other threads still spin, tens of us
// once they sleep, a scheduler slice while another process holds their core), and a training step of the
// small models crosses one per op: 2^15 opened ~160 regions per MR step, 2^18 opens ~50 (docs/performance/threads.md).
inline constexpr std::int64_t kParallelGrain = 1 << 18;

// f(begin, end) over contiguous chunks of [0, n). `work_per_item` scales the grain check.
template <class F>
void parallel_for(std::int64_t n, std::int64_t work_per_item, F&& f) {
  if (n <= 0) return;
  const int threads = num_threads();
  if (threads <= 1 || n * std::max<std::int64_t>(work_per_item, 1) < kParallelGrain || omp_in_parallel()) {
    f(std::int64_t{0}, n);
    return;
  }
  profile::count_parallel_region();
#pragma omp parallel num_threads(threads)
  {
    const std::int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const std::int64_t chunk = (n + nt - 1) / nt;
    const std::int64_t begin = std::min(n, t * chunk), end = std::min(n, begin + chunk);
    if (begin < end) f(begin, end);
  }
}

}  // namespace topo
