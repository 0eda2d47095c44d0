// topo-bench-allreduce: the time of dist::Communicator::allreduce_sum alone, per message size, on the ranks
// mpirun starts (issue #18: the communication part of a data-parallel step, apart from the skew between
// ranks that a training step adds). Before every repetition a barrier lines the ranks up; rank 0 prints the
// minimum and median over repetitions (the minimum is the figure least disturbed by a loaded machine),
// algorithm bandwidth (bytes / time) and bus bandwidth (x 2(N-1)/N, what a ring moves per rank: comparable
// with a link's bandwidth, as nccl-tests reports it).
//   mpirun -np 2 build/bin/topo-bench-allreduce [REPS [KIB...]]     (default 50 reps; 64 1700 16384 KiB)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dist/communicator.hpp"
#include "kernels/error.hpp"
#include "kernels/threads.hpp"

int main(int argc, char** argv) {
  topo::prepare_runtime(argv);
  try {
    auto world = topo::dist::init_world(&argc, &argv);
    topo::configure_threads();
    const int reps = argc > 1 ? std::atoi(argv[1]) : 50;
    TOPO_CHECK(reps > 0, "repetitions must be positive, got '{}'", argv[1]);
    std::vector<long> kib;
    for (int i = 2; i < argc; ++i) kib.push_back(std::atol(argv[i]));
    if (kib.empty()) kib = {64, 1700, 16384};
    const double n = world->size();
    if (world->is_root())
      std::printf("allreduce_sum over %d ranks (%s), %d repetitions\n%10s %12s %12s %14s %14s\n", world->size(),
                  world->backend().c_str(), reps, "KiB", "min ms", "median ms", "algbw GB/s", "busbw GB/s");
    for (long k : kib) {
      TOPO_CHECK(k > 0, "message size must be positive KiB, got {}", k);
      topo::Tensor t = topo::Tensor::full({k * 1024 / 4}, 1.f);
      std::vector<double> ms;
      for (int r = -3; r < reps; ++r) {  // 3 warm-up rounds
        world->barrier();
        const auto t0 = std::chrono::steady_clock::now();
        world->allreduce_sum(t);
        const double dt = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (r >= 0) ms.push_back(dt);
      }
      std::sort(ms.begin(), ms.end());
      const double bytes = double(t.nbytes()), best = ms.front(), median = ms[ms.size() / 2];
      if (world->is_root())
        std::printf("%10ld %12.3f %12.3f %14.2f %14.2f\n", k, best, median, bytes / best / 1e6,
                    bytes / best / 1e6 * 2 * (n - 1) / n);
    }
    return 0;
  } catch (const topo::Error& e) {
    std::fprintf(stderr, "topo-bench-allreduce: error: %s\n", e.what());
    return 1;
  }
}
