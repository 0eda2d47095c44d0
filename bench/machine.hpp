#pragma once
// This machine's speed limits, measured in the same run as the benchmarks they judge:
// - stream triad a[i] = b[i] + s*c[i] bandwidth, all OpenMP threads, at any working-set size (cached per
//   size), so a memory-bound op is compared with triad at ITS OWN working-set size (L2, L3 or DRAM);
// - sgemm peak: cblas_sgemm (the OpenMP build of OpenBLAS) on large square matrices;
// - bf16 peak (CPUs with AVX512_BF16): a bf16 x bf16 -> fp32 GEMM on large square matrices, oneDNN's matmul on
//   operands already in bf16 (AMX tiles where the CPU has them), on all threads; in a build without oneDNN the
//   own kernel through cpu::sgemm (its conversion included). A benchmark run at bf16 precision is judged
//   against it (its `fraction_of_peak`, hence the models' MFU), one at fp32 against the sgemm peak;
// - gather: rows of a given width fetched through a random permutation index (each row once per pass,
//   summed 8 at a time in registers by simd::accumulate_rows, the sparse kernels' own loop), at any
//   working-set size and row width (cached per pair): the limit of a kernel that reads rows through an index;
// - exp: evaluations per second of exp_approx (the exp every softmax kernel uses) over L1-resident
//   vectors, all threads: the limit of an exp-bound kernel.
// A limit is the BEST sample (STREAM reports its best rate too): the cores may be shared with other
// processes, which can only slow a sample down, so the fastest one is the most faithful to the hardware.
// Benchmarks report their median against it, so a fraction near 1 means "at the limit".
// Triad bytes: 3 arrays x 4 bytes per element per pass (read b, read c, write a). Write-allocate traffic
// on a is NOT counted (STREAM's convention, and the rule every Work::bytes_moved follows).
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "bench/harness.hpp"
#include "kernels/dense/gemm.hpp"

namespace topo::bench {

struct TriadMeasurement {
  double working_set_bytes = 0;  // 3 * elements * 4, after rounding to whole elements
  std::int64_t elements = 0;     // per array
  int passes_per_sample = 0;     // triad passes inside one timed sample (small sets need many)
  Stats stats;                   // per sample
  double gbs = 0;                // 12 * elements * passes / fastest sample time (STREAM's "best rate")
  double median_gbs = 0;         // the same at the median sample time
};

// Triad on three float arrays whose total size is about `working_set_bytes` (at least 3 elements each).
// Arrays are first-touched in parallel with the same static schedule the timed loop uses, so each thread
// works on memory local to it; a timed sample runs several passes inside one parallel region (one
// `omp for` each, implicit barrier between passes). Throws topo::Error on a working set below 12 bytes.
TriadMeasurement measure_triad(double working_set_bytes, const TimingOptions& timing);

struct SgemmMeasurement {
  int n = 0;  // C[n,n] = A[n,n] @ B[n,n]
  Stats stats;
  double gflops = 0;         // 2 n^3 / fastest call: the peak
  double median_gflops = 0;  // 2 n^3 / median call
};
SgemmMeasurement measure_sgemm(int n, const TimingOptions& timing);
// The bf16 peak at n^3 (see above); `kernel` says which ran. Throws topo::Error on a CPU without AVX512_BF16.
struct Bf16PeakMeasurement {
  SgemmMeasurement gemm;
  std::string kernel;  // "oneDNN 2.6.3 (avx512_core_bf16)" or "own AVX512_BF16 kernel"
};
Bf16PeakMeasurement measure_bf16_peak(int n, const TimingOptions& timing);

struct GatherMeasurement {
  double working_set_bytes = 0;  // table bytes: rows * row_floats * 4
  std::int64_t rows = 0, row_floats = 0;
  int passes_per_sample = 0;
  Stats stats;
  double gbs = 0;         // gathered table bytes * passes / fastest sample
  double median_gbs = 0;  // the same at the median sample
};
// Table of about working_set_bytes in rows of row_bytes (rounded to whole floats, at least 8 rows). Throws
// topo::Error on a row below one float.
GatherMeasurement measure_gather(double working_set_bytes, double row_bytes, const TimingOptions& timing);

struct ExpMeasurement {
  std::int64_t per_thread = 0;  // floats each thread transforms per pass (L1-resident)
  int threads = 0, passes_per_sample = 0;
  Stats stats;
  double exps_per_s = 0;         // at the fastest sample
  double median_exps_per_s = 0;  // at the median sample
};
ExpMeasurement measure_exp(const TimingOptions& timing);

std::string cpu_model_name();          // /proc/cpuinfo "model name", or "unknown"
// The 1-minute load average (/proc/loadavg), or -1. The cores may be shared: a load near or above the
// thread count means other processes competed for them and the figures of this run are pessimistic.
double load_average();
std::size_t last_level_cache_bytes();  // sysfs / sysconf, 32 MiB when neither answers

struct MachineOptions {
  bool quick = false;                   // shorter timings
  double stream_working_set_bytes = 0;  // 0: three arrays of 4x the last-level cache each
  int sgemm_n = 2048;                   // the peak sgemm's square size
};

// The limits of this run, measured lazily and cached (one Machine per topo-bench run).
class Machine {
 public:
  explicit Machine(MachineOptions options = {});

  int threads() const;  // omp_get_max_threads() now
  const std::string& cpu_model() const { return cpu_model_; }
  std::size_t llc_bytes() const { return llc_bytes_; }

  // Triad bandwidth with each array 4x the last-level cache: the DRAM limit (GB/s).
  double stream_gbs();
  double stream_working_set_bytes() const;
  // sgemm at sgemm_n^3 (best GFLOP/s).
  double sgemm_gflops();
  // The bf16 GEMM peak at sgemm_n^3 (best GFLOP/s); 0 on a CPU without AVX512_BF16.
  double bf16_gflops();
  // The peak a GEMM at this precision is judged against: bf16_gflops() or sgemm_gflops().
  double matrix_peak_gflops(Precision p);
  // Triad bandwidth at this working-set size (GB/s), measured on first request for that size (sizes
  // within ~1% of one another share a measurement).
  double triad_gbs(double working_set_bytes);
  // Gather rate (GB/s of gathered rows) at this working-set size and row width, measured on first request
  // (sizes within ~1% share a measurement).
  double gather_gbs(double working_set_bytes, double row_bytes);
  // exp_approx evaluations per second, all threads (measured once).
  double exps_per_s();
  // Measures the standard ladder of working-set sizes (256 KiB .. 64 MiB) plus stream and sgemm.
  void measure_all();

  // {"stream_gbs", "sgemm_gflops", "exps_per_s", "threads", "cpu_model",
  //  "triad": [{"working_set_bytes", "gbs", ...}], "gather": [{"working_set_bytes", "row_bytes", "gbs", ...}], ...}
  // Measures stream and sgemm first if that has not happened yet.
  nlohmann::json to_json();

 private:
  TimingOptions triad_timing() const;
  MachineOptions options_;
  std::string cpu_model_;
  std::size_t llc_bytes_;
  double load_at_start_;
  std::map<std::int64_t, TriadMeasurement> triad_;  // by elements per array
  std::optional<SgemmMeasurement> sgemm_;
  std::optional<Bf16PeakMeasurement> bf16_;  // kernel empty: no AVX512_BF16
  std::map<std::pair<std::int64_t, std::int64_t>, GatherMeasurement> gather_;  // by (row floats, table floats)
  std::optional<ExpMeasurement> exp_;
};

}  // namespace topo::bench
