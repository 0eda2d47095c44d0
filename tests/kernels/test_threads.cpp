// The default thread count: the affinity mask, the cgroup quota, ranks per node, OMP_NUM_THREADS, in that
// spirit (kernels/threads.hpp); and the probe itself in a child under a one-CPU mask.
#include <doctest/doctest.h>

#include <omp.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <latch>
#include <string>
#include <thread>

#include "kernels/error.hpp"
#include "kernels/parallel.hpp"
#include "kernels/threads.hpp"

using namespace topo;

TEST_CASE("default_thread_count: mask, quota and ranks on the node each cap the count, and say so") {
  CoreLimits l;
  l.online_cpus = 16;
  l.affinity_cpus = 16;
  CHECK(default_thread_count(l).threads == 16);
  CHECK(default_thread_count(l).source == "affinity mask: 16 CPUs");

  l.affinity_cpus = 1;  // taskset -c 0
  CHECK(default_thread_count(l).threads == 1);
  CHECK(default_thread_count(l).source == "affinity mask: 1 CPU");

  l.affinity_cpus = 16;
  l.quota_cpus = 2.5;  // docker --cpus 2.5: rounded up, the kernel throttles the rest
  CHECK(default_thread_count(l).threads == 3);
  CHECK(default_thread_count(l).source == "cgroup CPU quota: 2.5 CPUs");
  l.quota_cpus = 0.5;
  CHECK(default_thread_count(l).threads == 1);
  l.quota_cpus = 64;  // a quota above the mask changes nothing
  CHECK(default_thread_count(l).threads == 16);
  CHECK(default_thread_count(l).source == "affinity mask: 16 CPUs");
  l.quota_cpus = 0;

  l.local_ranks = 4;  // mpirun -np 4 --bind-to none: a quarter of the node each
  l.local_ranks_variable = "OMPI_COMM_WORLD_LOCAL_SIZE";
  CHECK(default_thread_count(l).threads == 4);
  CHECK(default_thread_count(l).source == "16 CPUs / 4 ranks on this node (OMPI_COMM_WORLD_LOCAL_SIZE)");
  l.affinity_cpus = 2;  // the launcher bound each rank to 2 cores already: the mask is the share
  CHECK(default_thread_count(l).threads == 2);
  l.online_cpus = 2;  // mpirun -np 2 on a 2-core machine
  l.local_ranks = 2;
  CHECK(default_thread_count(l).threads == 1);
  l.local_ranks = 8;  // more ranks than cores: still one thread each
  CHECK(default_thread_count(l).threads == 1);
  l.local_ranks = 0;

  l.omp_num_threads = std::string{"3"};  // the user's OpenMP setting wins over the detection
  CHECK(default_thread_count(l).threads == 3);
  CHECK(default_thread_count(l).source == "OMP_NUM_THREADS=3");
  l.omp_num_threads = std::string{"4,2"};
  CHECK(default_thread_count(l).threads == 4);
  l.omp_num_threads = std::string{"many"};
  CHECK_THROWS_WITH_AS(default_thread_count(l), doctest::Contains("OMP_NUM_THREADS='many'"), Error);
  l.omp_num_threads = std::string{"0"};
  CHECK_THROWS_AS(default_thread_count(l), Error);
  l.omp_num_threads = std::string{"100000"};  // libgomp crashed starting such a team: refused by name
  CHECK_THROWS_WITH_AS(default_thread_count(l), doctest::Contains("OMP_NUM_THREADS='100000'"), Error);
}

TEST_CASE("configure_threads: --threads overrides the default and is remembered with its source") {
  const int saved = num_threads();
  CHECK(configure_threads(3).threads == 3);
  CHECK(num_threads() == 3);
  CHECK(thread_choice().source == "--threads 3");
  CHECK(threads_line(thread_choice()).rfind("threads: 3 (--threads 3); OpenMP waits: ", 0) == 0);
  CHECK_THROWS_WITH_AS(configure_threads(-2), doctest::Contains("--threads -2"), Error);
  // Past kMaxThreads: an error, not libgomp's SIGSEGV (100000) or a count narrowed to int (2^32 + 1 was 1).
  CHECK_THROWS_WITH_AS(configure_threads(100000), doctest::Contains("--threads 100000 must be in [0, 4096]"), Error);
  CHECK_THROWS_WITH_AS(configure_threads((std::int64_t{1} << 32) + 1), doctest::Contains("--threads 4294967297"),
                       Error);
  CHECK(num_threads() == 3);  // a refused count changes nothing
  set_num_threads(saved);
}

TEST_CASE("set_num_threads holds in every thread, also one started before it (OpenMP keeps a count per thread)") {
  const int saved = num_threads();
  const int wanted = omp_get_num_procs() + 1;  // no thread's OpenMP default
  int seen_before_any_kernel = 0, team_size = 0;
  std::latch count_set(1);
  std::thread user_thread([&] {
    count_set.wait();
    seen_before_any_kernel = num_threads();
    // A region as the kernels open one (kernels/parallel.hpp): work above the grain, on this thread.
    parallel_for(1 << 20, 1, [&](std::int64_t, std::int64_t) {
#pragma omp master
      team_size = omp_get_num_threads();
    });
  });
  set_num_threads(wanted);
  count_set.count_down();
  user_thread.join();
  CHECK(seen_before_any_kernel == wanted);
  CHECK(team_size == wanted);
  set_num_threads(saved);
}

TEST_CASE("probe_core_limits: a child under a one-CPU mask sees one CPU and defaults to one thread") {
  cpu_set_t mask;
  REQUIRE(sched_getaffinity(0, sizeof mask, &mask) == 0);
  int first = 0;
  while (!CPU_ISSET(first, &mask)) ++first;
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // no OpenMP region runs in the child: it inherits no worker threads
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) _exit(100);
    unsetenv("OMP_NUM_THREADS");
    const CoreLimits l = probe_core_limits();
    _exit(l.affinity_cpus == 1 ? default_thread_count(l).threads : 100 + l.affinity_cpus);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  // And this process: the mask it really has.
  CHECK(probe_core_limits().affinity_cpus == CPU_COUNT(&mask));
}

TEST_CASE("blas_core_override: only OpenBLAS's generic fallback is replaced, by the best family the CPU has") {
  CpuVectorFeatures avx512{.avx2_fma = true, .avx512 = true}, avx2{.avx2_fma = true, .avx512 = false}, sse{};
  CHECK(blas_core_override("Prescott", avx512) == "SkylakeX");
  CHECK(blas_core_override("PRESCOTT", avx2) == "Haswell");
  CHECK(blas_core_override("Prescott", sse).empty());  // nothing better to ask for
  CHECK(blas_core_override("Haswell", avx512).empty());  // a core OpenBLAS recognised stands
  CHECK(blas_core_override("SkylakeX", avx512).empty());
  CHECK(blas_core_override("Zen", avx2).empty());
}

TEST_CASE("prepare_runtime (run by this test program's main) leaves no AVX CPU on OpenBLAS's SSE3 kernels") {
  // A user's own OPENBLAS_CORETYPE is theirs to choose; ours comes with TOPO_BLAS_FALLBACK beside it.
  const bool user_choice = std::getenv("OPENBLAS_CORETYPE") && !std::getenv("TOPO_BLAS_FALLBACK");
  INFO(blas_line());
  if (!user_choice && (cpu_vector_features().avx512 || cpu_vector_features().avx2_fma)) {
    CHECK(blas_core_override(blas_core(), cpu_vector_features()).empty());
    CHECK(blas_core() != "Prescott");
  }
  CHECK(blas_line().rfind("BLAS: ", 0) == 0);
}
