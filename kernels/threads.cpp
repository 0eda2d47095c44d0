#include "kernels/threads.hpp"

#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "kernels/cgroup.hpp"
#include "kernels/error.hpp"

extern "C" void openblas_set_num_threads(int);
extern "C" int openblas_get_parallel(void);
extern "C" char* openblas_get_corename(void);
extern "C" char* openblas_get_config(void);

namespace topo {
namespace {

// A positive decimal integer, or nothing (for environment values written by launchers and users).
std::optional<long> parse_positive(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 9)
    return std::nullopt;
  const long v = std::stol(text);
  if (v <= 0) return std::nullopt;
  return v;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

int affinity_cpus() {
  // The mask may be larger than a cpu_set_t on huge machines: grow until sched_getaffinity accepts it.
  for (int cpus = CPU_SETSIZE; cpus <= (1 << 16); cpus *= 2) {
    cpu_set_t* set = CPU_ALLOC(cpus);
    const std::size_t size = CPU_ALLOC_SIZE(cpus);
    CPU_ZERO_S(size, set);
    const int rc = sched_getaffinity(0, size, set);
    const int count = rc == 0 ? CPU_COUNT_S(size, set) : 0;
    CPU_FREE(set);
    if (rc == 0) return count;
    if (errno != EINVAL) return 0;
  }
  return 0;
}

// The tightest CPU quota on the path from this process's cgroup up to the root, in CPUs (0: none).
// v2: "<quota|max> <period>" in cpu.max; v1: cpu.cfs_quota_us (-1: none) and cpu.cfs_period_us.
double cgroup_quota_cpus() {
  double best = 0;
  const auto consider = [&](double quota, double period) {
    if (quota > 0 && period > 0 && (best == 0 || quota / period < best)) best = quota / period;
  };
  for_each_cgroup_dir("cpu", [&](const std::string& dir, bool v2) {
    if (v2) {
      std::istringstream max(read_first_line(dir + "/cpu.max"));
      std::string quota;
      double period = 0;
      if (max >> quota >> period && quota != "max") consider(std::atof(quota.c_str()), period);
    } else {
      const std::string quota = read_first_line(dir + "/cpu.cfs_quota_us");
      if (!quota.empty()) consider(std::atof(quota.c_str()), std::atof(read_first_line(dir + "/cpu.cfs_period_us").c_str()));
    }
  });
  return best;
}

// Slurm's "2(x3),1" lists the tasks on each node of the step; SLURM_NODEID picks this node's entry.
std::optional<long> slurm_tasks_on_this_node(const std::string& list, long node) {
  std::stringstream in(list);
  std::string item;
  long index = 0;
  while (std::getline(in, item, ',')) {
    const auto paren = item.find("(x");
    const auto tasks = parse_positive(item.substr(0, paren));
    long repeat = 1;
    if (paren != std::string::npos) {
      const auto r = parse_positive(item.substr(paren + 2, item.size() - paren - 3));
      if (!r) return std::nullopt;
      repeat = *r;
    }
    if (!tasks) return std::nullopt;
    if (node < index + repeat) return tasks;
    index += repeat;
  }
  return std::nullopt;
}

// libgomp spins this many pause loops at a barrier or between regions before it sleeps on a futex. Its default
// is 300000, "~3 ms" by its own estimate, but a pause loop takes ~30 ns on this machine's Xeon: ~9 ms, longer
// than a scheduler slice. The value kept and the alternatives measured: docs/performance/threads.md (issue #22).
constexpr const char* kShortSpinCount = "1000";

std::mutex g_mutex;
std::optional<ThreadCount> g_choice;
std::atomic<int> g_num_threads{0};  // set_num_threads' count for every thread; 0: never set

}  // namespace

CoreLimits probe_core_limits() {
  CoreLimits l;
  l.online_cpus = static_cast<int>(std::max(0L, sysconf(_SC_NPROCESSORS_ONLN)));
  l.affinity_cpus = affinity_cpus();
  l.quota_cpus = cgroup_quota_cpus();
  l.omp_num_threads = env("OMP_NUM_THREADS");
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"}) {
    if (const auto n = parse_positive(env(name))) {
      l.local_ranks = static_cast<int>(*n);
      l.local_ranks_variable = name;
      return l;
    }
  }
  const auto node = parse_positive(env("SLURM_NODEID")).value_or(0);  // node 0 reads as unset: same entry
  for (const char* name : {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}) {
    if (const auto n = slurm_tasks_on_this_node(env(name), node)) {
      l.local_ranks = static_cast<int>(*n);
      l.local_ranks_variable = name;
      return l;
    }
  }
  return l;
}

ThreadCount default_thread_count(const CoreLimits& l) {
  if (!l.omp_num_threads.empty()) {
    // OpenMP allows a list ("4,2": per nesting level); the first entry is ours.
    const std::string first = l.omp_num_threads.substr(0, l.omp_num_threads.find(','));
    const auto n = parse_positive(first);
    TOPO_CHECK(n.has_value() && *n <= kMaxThreads, "OMP_NUM_THREADS='{}' is not a thread count in [1, {}]",
               l.omp_num_threads, kMaxThreads);
    return {static_cast<int>(*n), fmt::format("OMP_NUM_THREADS={}", l.omp_num_threads)};
  }
  const auto plural = [](int n) { return n == 1 ? "" : "s"; };
  // The CPUs this process may run on: the mask, else the machine.
  int cpus = l.affinity_cpus > 0 ? l.affinity_cpus : std::max(l.online_cpus, 1);
  std::string source = l.affinity_cpus > 0 ? fmt::format("affinity mask: {} CPU{}", cpus, plural(cpus))
                                           : fmt::format("{} online CPU{}", cpus, plural(cpus));
  // A quota of 1.5 CPUs gives 2 threads: the kernel throttles the rest, as it would any process.
  if (l.quota_cpus > 0) {
    const int quota = std::max(1, static_cast<int>(std::ceil(l.quota_cpus - 1e-9)));
    if (quota < cpus) {
      cpus = quota;
      source = fmt::format("cgroup CPU quota: {:g} CPUs", l.quota_cpus);
    }
  }
  // Ranks on a node share its CPUs. A launcher that binds each rank to its own cores (Open MPI's default for
  // 2 ranks, srun --cpu-bind) already shrank the mask, so the share is taken of the node and capped by the mask.
  if (l.local_ranks > 1) {
    int node = l.online_cpus > 0 ? l.online_cpus : cpus;
    if (l.quota_cpus > 0) node = std::min(node, std::max(1, static_cast<int>(std::ceil(l.quota_cpus - 1e-9))));
    const int share = std::max(1, node / l.local_ranks);
    if (share < cpus) {
      cpus = share;
      source = fmt::format("{} CPU{} / {} ranks on this node ({})", node, plural(node), l.local_ranks,
                           l.local_ranks_variable);
    }
  }
  return {cpus, source};
}

bool blas_follows_openmp() {
  static const bool follows = [] {
    const bool openmp = openblas_get_parallel() == 2;  // 0: sequential build, 1: pthreads, 2: OpenMP
    if (!openmp) openblas_set_num_threads(1);
    return openmp;
  }();
  return follows;
}

void set_num_threads(int threads) {
  TOPO_CHECK(threads >= 1, "thread count must be >= 1, got {}", threads);
  g_num_threads.store(threads, std::memory_order_relaxed);
  omp_set_num_threads(threads);
  openblas_set_num_threads(blas_follows_openmp() ? threads : 1);
}

int num_threads() {
  const int wanted = g_num_threads.load(std::memory_order_relaxed);
  // Inside a region the count is the team's business (and the kernels run serially there).
  if (wanted == 0 || omp_in_parallel()) return omp_get_max_threads();
  // OpenMP keeps the count per thread: a thread that never called set_num_threads would open regions of its
  // own default size, and OpenBLAS (OpenMP build) reads the same per-thread value at each call.
  if (omp_get_max_threads() != wanted) omp_set_num_threads(wanted);
  return wanted;
}

ThreadCount configure_threads(std::int64_t requested) {
  TOPO_CHECK(requested >= 0 && requested <= kMaxThreads,
             "--threads {} must be in [0, {}] (0: the cores this process may use)", requested, kMaxThreads);
  const ThreadCount choice = requested > 0
                                 ? ThreadCount{static_cast<int>(requested), fmt::format("--threads {}", requested)}
                                 : default_thread_count(probe_core_limits());
  set_num_threads(choice.threads);
  std::lock_guard<std::mutex> lock(g_mutex);
  g_choice = choice;
  return choice;
}

ThreadCount thread_choice() {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_choice) return *g_choice;
  }
  return default_thread_count(probe_core_limits());
}

void prepare_runtime(char** argv) {
  // Each variable is set only when unset, so the re-executed program finds nothing left to do: no loop.
  std::vector<const char*> set;
  auto put = [&](const char* name, const std::string& value) {
    if (setenv(name, value.c_str(), 1) == 0) set.push_back(name);
  };
  if (!std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT")) {
    put("GOMP_SPINCOUNT", kShortSpinCount);
    put("TOPO_SHORT_SPIN", "1");  // tells wait_policy() that the spin is ours, not the user's
  }
  if (!std::getenv("OPENBLAS_CORETYPE")) {
    const std::string detected = blas_core();
    const std::string core = blas_core_override(detected, cpu_vector_features());
    if (!core.empty()) {
      put("OPENBLAS_CORETYPE", core);
      put("TOPO_BLAS_FALLBACK", detected);  // what OpenBLAS had detected, for blas_line()
    }
  }
  if (set.empty()) return;
  execv("/proc/self/exe", argv);
  // exec failed (no /proc?): run on with the libraries' defaults, as wait_policy() and blas_line() then say.
  for (const char* name : set) unsetenv(name);
}

CpuVectorFeatures cpu_vector_features() {
  __builtin_cpu_init();
  CpuVectorFeatures f;
  f.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  f.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl");
  return f;
}

std::string blas_core_override(const std::string& detected_core, const CpuVectorFeatures& features) {
  std::string lower = detected_core;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower != "prescott") return "";  // OpenBLAS knew this CPU (or was told): its choice stands
  if (features.avx512) return "SkylakeX";
  if (features.avx2_fma) return "Haswell";
  return "";
}

std::string blas_core() {
  const char* core = openblas_get_corename();
  return core ? core : "unknown";
}

const char* kernel_isa() {
#if defined(__AVX512F__) && defined(__AVX512CD__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
  return "avx512";
#elif defined(__AVX2__) && defined(__FMA__)
  return "avx2";
#else
  return "generic";
#endif
}

std::string kernel_isa_line() {
  const CpuVectorFeatures f = cpu_vector_features();
  return fmt::format("CPU kernels: {} (this CPU: {})", kernel_isa(),
                     f.avx512 ? "AVX-512" : f.avx2_fma ? "AVX2 + FMA, no AVX-512" : "no AVX2");
}

std::string blas_line() {
  const char* config = openblas_get_config();
  const std::string fallback = env("TOPO_BLAS_FALLBACK");
  const std::string why = !fallback.empty()
                              ? fmt::format("OPENBLAS_CORETYPE set by topograph: OpenBLAS took this CPU for {}", fallback)
                          : !env("OPENBLAS_CORETYPE").empty() ? std::string("OPENBLAS_CORETYPE")
                                                               : std::string("detected by OpenBLAS");
  return fmt::format("BLAS: {}; {} kernels ({})", config ? config : "OpenBLAS", blas_core(), why);
}

std::string wait_policy() {
  const std::string spin = env("GOMP_SPINCOUNT"), policy = env("OMP_WAIT_POLICY");
  if (!spin.empty())
    return fmt::format("spin {} then sleep ({})", spin,
                       env("TOPO_SHORT_SPIN").empty() ? "GOMP_SPINCOUNT" : "topograph's default, GOMP_SPINCOUNT");
  if (!policy.empty()) return fmt::format("OMP_WAIT_POLICY={}", policy);
  return "libgomp's default (spin ~3 ms then sleep)";
}

std::string threads_line(const ThreadCount& count) {
  return fmt::format("threads: {} ({}); OpenMP waits: {}", count.threads, count.source, wait_policy());
}

}  // namespace topo
