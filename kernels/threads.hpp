#pragma once
// The CPU thread count and the OpenMP wait policy of every program: one source of truth.
//
// Default thread count = the cores this process may really use, the smallest of
//   - the affinity mask (sched_getaffinity: taskset, cgroup cpusets, numactl),
//   - the cgroup CPU quota of a container (v2 cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us), rounded up,
//   - under mpirun / srun, the usable cores divided by the ranks on this node (OMPI_COMM_WORLD_LOCAL_SIZE,
//     MPI_LOCALNRANKS, SLURM_NTASKS_PER_NODE, ...), at least 1.
// OMP_NUM_THREADS, when set, replaces the detection; `--threads N` replaces both.
//
// Wait policy: libgomp's default lets a thread that waits at a barrier or between regions spin ~9 ms here before
// it sleeps. When another process holds the core that the awaited thread needs, every one of a step's
// hundreds of regions then costs a scheduler slice (two trainings at once on 2 cores: 30x slower each).
// `prepare_runtime` makes threads spin ~30 us, then sleep on a futex (docs/performance/threads.md, issue #22).
#include <cstdint>
#include <string>

namespace topo {

// What the process may use, as read from the OS and the environment. Zero means "no limit found".
struct CoreLimits {
  int online_cpus = 0;              // CPUs online in the machine
  int affinity_cpus = 0;            // CPUs in the affinity mask
  double quota_cpus = 0;            // cgroup CPU quota in CPUs (quota / period)
  int local_ranks = 0;              // ranks of this job on this node, from the launcher's environment
  std::string local_ranks_variable; // the variable local_ranks came from
  std::string omp_num_threads;      // OMP_NUM_THREADS as set (empty: unset)
};
CoreLimits probe_core_limits();

struct ThreadCount {
  int threads = 1;
  std::string source;  // human-readable: where the count came from, e.g. "affinity mask: 1 CPU"
};
// The default count for these limits (pure; probe_core_limits() gives the real ones).
// Throws topo::Error when OMP_NUM_THREADS is set but is not a positive integer.
ThreadCount default_thread_count(const CoreLimits& limits);

// The thread count of the CPU kernels (OpenMP regions, and OpenBLAS, whose OpenMP build follows it), for the
// whole process as torch.set_num_threads: OpenMP keeps its count per thread, so num_threads() hands this one
// to the calling thread's OpenMP before a kernel opens a region. Kernels ask num_threads(), never OpenMP.
// Before any set_num_threads, each thread has OpenMP's default (OMP_NUM_THREADS, else every CPU).
void set_num_threads(int threads);
int num_threads();

// The most threads --threads, a config's `threads` or OMP_NUM_THREADS may ask for: far past any machine here,
// and far short of 100000, where libgomp failed to start its team and crashed (SIGSEGV in GOMP_parallel).
inline constexpr int kMaxThreads = 4096;

// Sets OpenMP's and OpenBLAS's thread count: `requested` > 0 (from --threads), else the default for this
// process. The choice is remembered for thread_choice(). Throws topo::Error for requested < 0 or past
// kMaxThreads (taken as int64, so a config's 2^32 + 1 is refused rather than narrowed to 1).
ThreadCount configure_threads(std::int64_t requested = 0);
// The last configure_threads() choice; before any, the default this process would get (not applied).
ThreadCount thread_choice();

// Call first thing in main(), with main's argv. Sets what libgomp and OpenBLAS read only while they load
// (before main), then re-executes the program once so that they see it:
//   - unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set, GOMP_SPINCOUNT = a short spin (threads.cpp says how
//     short, and why);
//   - unless OPENBLAS_CORETYPE is set, and only when OpenBLAS fell back to its generic x86-64 kernels on a CPU
//     it does not know (it names it "Prescott"), OPENBLAS_CORETYPE = the best kernel family the CPU supports
//     (blas_core_override). Debian's OpenBLAS 0.3.21 takes this project's Xeons (family 6, model 207) for
//     Prescott and runs SSE3 sgemm at ~1/5 of the AVX-512 kernels' rate (docs/performance/threads.md, issue #20).
// Returns only when no re-exec happened (nothing to set, or exec failed).
void prepare_runtime(char** argv);

// What the CPU offers the BLAS kernels (pure input of blas_core_override).
struct CpuVectorFeatures {
  bool avx2_fma = false;  // AVX2 and FMA
  bool avx512 = false;    // AVX-512 F, CD, BW, DQ and VL (OpenBLAS's SkylakeX kernels)
};
CpuVectorFeatures cpu_vector_features();
// The OPENBLAS_CORETYPE to request when OpenBLAS detected `detected_core` on a CPU with `features`: "SkylakeX"
// or "Haswell" when it fell back to "Prescott" (case-insensitive) and the CPU can do better; empty otherwise
// (a core OpenBLAS recognised is left alone).
std::string blas_core_override(const std::string& detected_core, const CpuVectorFeatures& features);
// Whether the loaded OpenBLAS is its OpenMP build, which gcc builds link: set_num_threads passes it the count
// and cpu::sgemm leaves a call's threading to it. Its pthreads build (the default a clang build takes, so that
// one process never loads two OpenMP runtimes) keeps a pool of its own that omp_set_num_threads() cannot
// reach: it is kept at one thread from the first call here on, and cpu::sgemm threads its calls as it does
// the own kernel's, so that a product's bits do not depend on where the library's threads would cut it.
bool blas_follows_openmp();

// The vector instructions the CPU kernels were compiled for (the build's one -march): "avx512" (F, CD, BW,
// DQ, VL intrinsics), "avx2" (AVX2 and FMA; the sparse kernels' 8-float paths) or "generic" (plain loops).
// The sparse and dense kernels pick their paths by it at compile time; reported beside the BLAS kernels.
const char* kernel_isa();
// One log line: "CPU kernels: avx512 (this CPU: AVX-512)".
std::string kernel_isa_line();

// One log line: "BLAS: OpenBLAS 0.3.21 ... SkylakeX kernels (OPENBLAS_CORETYPE set by topograph: ...)".
std::string blas_line();
// The kernel family OpenBLAS runs in this process ("SkylakeX", "Prescott", ...).
std::string blas_core();

// How OpenMP threads wait in this process, e.g. "spin 1000 then sleep (GOMP_SPINCOUNT)".
std::string wait_policy();
// One log line: "threads: 2 (affinity mask: 2 CPUs); OpenMP waits: spin 1000 then sleep (...)".
std::string threads_line(const ThreadCount& count);

}  // namespace topo
