// Measures the machine limits topo-bench reports against. See machine.hpp for what is counted.
#include "bench/machine.hpp"

#include <cblas.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/threads.hpp"
#include "kernels/dense/gemm_backend.hpp"
#include "kernels/dense/gemm_onednn.hpp"
#include "kernels/dense/fast_exp.hpp"
#include "kernels/error.hpp"
#include "kernels/sparse/simd_rows.hpp"

namespace topo::bench {
namespace {

// 64-byte aligned float array, left uninitialised so the first touch decides page placement.
struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using FloatArray = std::unique_ptr<float[], FreeDeleter>;

FloatArray allocate_floats(std::int64_t n) {
  const std::size_t bytes = (static_cast<std::size_t>(n) * sizeof(float) + 63) / 64 * 64;
  auto* p = static_cast<float*>(std::aligned_alloc(64, bytes));
  TOPO_CHECK(p != nullptr, "topo-bench: cannot allocate {} bytes", bytes);
  return FloatArray(p);
}

// One or more triad passes inside one parallel region. The static schedule of `omp for` splits [0, n) the
// same way on every pass and in the first-touch loop, so a thread keeps reading its own pages and caches.
void triad_passes(float* a, const float* b, const float* c, float s, std::int64_t n, int passes) {
#pragma omp parallel
  {
    for (int p = 0; p < passes; ++p) {
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
    }
  }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::size_t read_size_file(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text.empty()) return 0;
  std::size_t multiplier = 1;
  const char unit = text.back();
  if (unit == 'K' || unit == 'k') multiplier = 1024;
  if (unit == 'M' || unit == 'm') multiplier = 1024 * 1024;
  if (multiplier != 1) text.pop_back();
  try {
    return static_cast<std::size_t>(std::stoull(text)) * multiplier;
  } catch (const std::exception&) {
    return 0;
  }
}

// Rounds a positive count to 7 significant bits: counts within ~1% share one cached measurement.
std::int64_t round_key(std::int64_t key) {
  key = std::max<std::int64_t>(3, key);
  const std::int64_t step = std::int64_t{1} << std::max(0, static_cast<int>(std::bit_width(
                                                               static_cast<std::uint64_t>(key))) - 7);
  return std::max<std::int64_t>(3, (key + step / 2) / step * step);
}

// Passes per timed sample, from the fastest of a few calibration runs of `run(passes)`: enough that a sample
// lasts >= ~0.2 ms, so the cost of opening the parallel region and reading the clock stays small next to the
// transfer time of a cache-sized set, yet samples stay short enough that some of them fall between the time
// slices of competing processes. The fastest try, so a competing process cannot inflate the estimate.
template <class F>
int calibrate_passes(F&& run) {
  run(2);
  double per_pass = 1e9;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const auto start = std::chrono::steady_clock::now();
    run(4);
    per_pass = std::min(per_pass, std::max(seconds_since(start) / 4, 1e-9));
    if (per_pass * 4 > 0.05) break;
  }
  return static_cast<int>(std::clamp(std::ceil(2e-4 / per_pass), 1.0, 1e6));
}

}  // namespace

TriadMeasurement measure_triad(double working_set_bytes, const TimingOptions& timing) {
  TOPO_CHECK(std::isfinite(working_set_bytes) && working_set_bytes >= 12.0,
             "triad: working set of {} bytes is too small (3 arrays of at least one float)", working_set_bytes);
  const std::int64_t n = std::max<std::int64_t>(3, std::llround(working_set_bytes / 12.0));
  FloatArray a = allocate_floats(n), b = allocate_floats(n), c = allocate_floats(n);
  float* ap = a.get();
  float *bp = b.get(), *cp = c.get();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    ap[i] = 0.f;
    bp[i] = 1.f + static_cast<float>(i % 7);
    cp[i] = 2.f;
  }
  const float s = 3.f;

  const int passes = calibrate_passes([&](int p) { triad_passes(ap, bp, cp, s, n, p); });

  TriadMeasurement m;
  m.elements = n;
  m.working_set_bytes = 12.0 * static_cast<double>(n);
  m.passes_per_sample = passes;
  m.stats = time_calls([&] { triad_passes(ap, bp, cp, s, n, passes); }, timing);
  m.gbs = m.working_set_bytes * passes / (m.stats.min_ms * 1e-3) / 1e9;
  m.median_gbs = m.working_set_bytes * passes / (m.stats.median_ms * 1e-3) / 1e9;

  // The arrays are read back so the stores cannot be optimised away, and a wrong loop cannot pass as fast.
  for (std::int64_t i : {std::int64_t{0}, n / 2, n - 1}) {
    const float expected = bp[i] + s * cp[i];
    TOPO_CHECK(ap[i] == expected, "triad: a[{}] = {} after the run, expected {}", i, ap[i], expected);
  }
  return m;
}

SgemmMeasurement measure_sgemm(int n, const TimingOptions& timing) {
  TOPO_CHECK(n > 0, "sgemm peak: matrix size {} must be positive", n);
  const std::int64_t elements = static_cast<std::int64_t>(n) * n;
  FloatArray a = allocate_floats(elements), b = allocate_floats(elements), c = allocate_floats(elements);
  float *ap = a.get(), *bp = b.get(), *cp = c.get();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < elements; ++i) {
    ap[i] = static_cast<float>(i % 13) * 0.01f;
    bp[i] = static_cast<float>(i % 11) * 0.01f;
    cp[i] = 0.f;
  }
  SgemmMeasurement m;
  m.n = n;
  m.stats = time_calls(
      [&] { cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, ap, n, bp, n, 0.f, cp, n); },
      timing);
  const double flops = 2.0 * n * static_cast<double>(n) * n;
  m.gflops = flops / (m.stats.min_ms * 1e-3) / 1e9;
  m.median_gflops = flops / (m.stats.median_ms * 1e-3) / 1e9;
  TOPO_CHECK(std::isfinite(cp[elements - 1]), "sgemm peak: non-finite result");
  return m;
}

Bf16PeakMeasurement measure_bf16_peak(int n, const TimingOptions& timing) {
  TOPO_CHECK(n > 0, "bf16 peak: matrix size {} must be positive", n);
  TOPO_CHECK(bf16_gemm_supported(), "bf16 peak: this CPU does not report AVX512_BF16");
  const std::int64_t elements = static_cast<std::int64_t>(n) * n;
  FloatArray c = allocate_floats(elements);
  float* cp = c.get();
  Bf16PeakMeasurement m;
  m.gemm.n = n;
  if (cpu::onednn_built()) {
    // Operands in bf16 already (1.0 and 0.5: 0x3f80, 0x3f00), so only the matrix units are timed.
    std::vector<std::uint16_t> a(static_cast<std::size_t>(elements), 0x3f80), b(static_cast<std::size_t>(elements), 0x3f00);
    m.kernel = cpu::onednn_version();
    m.gemm.stats = time_calls([&] { cpu::onednn_gemm_bf16_bits(false, false, n, n, n, 1.f, a.data(), b.data(), 0.f, cp, n); },
                              timing);
    TOPO_CHECK(cp[elements - 1] == 0.5f * static_cast<float>(n), "bf16 peak: c = {}, expected {}", cp[elements - 1],
               0.5f * static_cast<float>(n));
  } else {
    FloatArray a = allocate_floats(elements), b = allocate_floats(elements);
    std::fill_n(a.get(), elements, 1.f);
    std::fill_n(b.get(), elements, 0.5f);
    m.kernel = "own AVX512_BF16 kernel";
    const GemmPrecisionGuard g(Precision::bf16);
    const GemmBackendGuard gb(Precision::bf16, GemmBackend::own);
    m.gemm.stats = time_calls([&] { cpu::sgemm(false, false, n, n, n, 1.f, a.get(), n, b.get(), n, 0.f, cp, n); }, timing);
  }
  const double flops = 2.0 * n * static_cast<double>(n) * n;
  m.gemm.gflops = flops / (m.gemm.stats.min_ms * 1e-3) / 1e9;
  m.gemm.median_gflops = flops / (m.gemm.stats.median_ms * 1e-3) / 1e9;
  return m;
}

GatherMeasurement measure_gather(double working_set_bytes, double row_bytes, const TimingOptions& timing) {
  TOPO_CHECK(std::isfinite(row_bytes) && row_bytes >= 4.0, "gather: rows of {} bytes are below one float", row_bytes);
  TOPO_CHECK(std::isfinite(working_set_bytes) && working_set_bytes > 0, "gather: working set of {} bytes",
             working_set_bytes);
  constexpr std::int64_t kGroup = 8;  // rows summed into one output row (a window's in-degree is 9)
  const std::int64_t w = std::llround(row_bytes / 4.0);
  const std::int64_t rows = std::max<std::int64_t>(kGroup, std::llround(working_set_bytes / (4.0 * w)));
  FloatArray table = allocate_floats(rows * w);
  float* tp = table.get();
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t f = 0; f < w; ++f) tp[r * w + f] = static_cast<float>((r + f) % 5);
  std::vector<std::int32_t> index(static_cast<std::size_t>(rows));
  std::iota(index.begin(), index.end(), 0);
  std::shuffle(index.begin(), index.end(), std::mt19937(12345));
  const std::int32_t* idx = index.data();
  const std::int64_t groups = (rows + kGroup - 1) / kGroup;
  double checksum = 0;  // column 0 of every group's sum, read back so nothing is optimised away

  auto run = [&](int passes) {
    double total = 0;
#pragma omp parallel reduction(+ : total)
    {
      std::vector<float> out(static_cast<std::size_t>(w));
      for (int p = 0; p < passes; ++p) {
#pragma omp for schedule(static)
        for (std::int64_t g = 0; g < groups; ++g) {
          const std::int64_t first = g * kGroup, count = std::min(kGroup, rows - first);
          simd::accumulate_rows(
              count, [&](std::int64_t j) { return tp + static_cast<std::int64_t>(idx[first + j]) * w; },
              [](std::int64_t, std::int64_t) { return 1.f; }, 1, w, out.data());
          total += out[0];
        }
      }
    }
    checksum = total;
  };
  const int passes = calibrate_passes(run);
  GatherMeasurement m;
  m.rows = rows;
  m.row_floats = w;
  m.working_set_bytes = 4.0 * static_cast<double>(rows * w);
  m.passes_per_sample = passes;
  m.stats = time_calls([&] { run(passes); }, timing);
  m.gbs = m.working_set_bytes * passes / (m.stats.min_ms * 1e-3) / 1e9;
  m.median_gbs = m.working_set_bytes * passes / (m.stats.median_ms * 1e-3) / 1e9;
  double expected = 0;  // every row's column 0 once per pass
  for (std::int64_t r = 0; r < rows; ++r) expected += static_cast<double>(r % 5);
  TOPO_CHECK(checksum == expected * passes, "gather: checksum {} after the run, expected {}", checksum,
             expected * passes);
  return m;
}

ExpMeasurement measure_exp(const TimingOptions& timing) {
  constexpr std::int64_t kPerThread = 4096;  // 16 KiB in + 16 KiB out: L1-resident
  ExpMeasurement m;
  m.per_thread = kPerThread;
  m.threads = omp_get_max_threads();
  std::vector<double> sums(static_cast<std::size_t>(m.threads), 0.0);
  auto run = [&](int passes) {
#pragma omp parallel
    {
      alignas(64) float x[kPerThread], y[kPerThread];
      for (std::int64_t i = 0; i < kPerThread; ++i) x[i] = -10.f * static_cast<float>(i) / kPerThread;
      for (int p = 0; p < passes; ++p) {
        // The softmax kernels' loop shape: one vectorized exp_approx per element.
#pragma omp simd
        for (std::int64_t i = 0; i < kPerThread; ++i) y[i] = exp_approx(x[i]);
        x[p % kPerThread] = y[(p * 7) % kPerThread] - 10.f;  // a dependence between passes: no pass is skipped
      }
      sums[static_cast<std::size_t>(omp_get_thread_num())] = y[0] + y[kPerThread - 1];
    }
  };
  m.passes_per_sample = calibrate_passes(run);
  m.stats = time_calls([&] { run(m.passes_per_sample); }, timing);
  const double exps = static_cast<double>(kPerThread) * m.passes_per_sample * m.threads;
  m.exps_per_s = exps / (m.stats.min_ms * 1e-3);
  m.median_exps_per_s = exps / (m.stats.median_ms * 1e-3);
  for (double s : sums) TOPO_CHECK(std::isfinite(s) && s > 0, "exp rate: non-finite or zero result {}", s);
  return m;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string model = line.substr(colon + 1);
        model.erase(0, model.find_first_not_of(" \t"));
        return model;
      }
    }
  }
  return "unknown";
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  return (in >> load) ? load : -1.0;
}

std::size_t last_level_cache_bytes() {
  for (const char* path : {"/sys/devices/system/cpu/cpu0/cache/index3/size",
                           "/sys/devices/system/cpu/cpu0/cache/index2/size"}) {
    if (const std::size_t bytes = read_size_file(path); bytes > 0) return bytes;
  }
#ifdef _SC_LEVEL3_CACHE_SIZE
  if (const long bytes = sysconf(_SC_LEVEL3_CACHE_SIZE); bytes > 0) return static_cast<std::size_t>(bytes);
#endif
  return std::size_t{32} << 20;
}

Machine::Machine(MachineOptions options)
    : options_(options),
      cpu_model_(cpu_model_name()),
      llc_bytes_(last_level_cache_bytes()),
      load_at_start_(load_average()) {}

int Machine::threads() const { return omp_get_max_threads(); }

TimingOptions Machine::triad_timing() const {
  TimingOptions t = options_.quick ? TimingOptions::quick() : TimingOptions{};
  t.target_s = options_.quick ? 0.05 : 0.2;  // many sizes get measured: keep each short, the spread is small
  return t;
}

double Machine::stream_working_set_bytes() const {
  // Each array four times the last-level cache: nothing survives in cache between passes.
  return options_.stream_working_set_bytes > 0 ? options_.stream_working_set_bytes
                                               : 3.0 * 4.0 * static_cast<double>(llc_bytes_);
}

double Machine::stream_gbs() { return triad_gbs(stream_working_set_bytes()); }

double Machine::triad_gbs(double working_set_bytes) {
  TOPO_CHECK(std::isfinite(working_set_bytes) && working_set_bytes >= 12.0,
             "triad_gbs: working set of {} bytes is too small", working_set_bytes);
  // Sizes within ~1% share one measurement (elements per array rounded to 7 significant bits): relu's
  // 2x and mul's 2x-plus-a-row working sets need not be measured twice, the bandwidth cannot tell them apart.
  const std::int64_t key = round_key(std::llround(working_set_bytes / 12.0));
  auto it = triad_.find(key);
  if (it == triad_.end()) it = triad_.emplace(key, measure_triad(12.0 * key, triad_timing())).first;
  return it->second.gbs;
}

double Machine::gather_gbs(double working_set_bytes, double row_bytes) {
  TOPO_CHECK(std::isfinite(row_bytes) && row_bytes >= 4.0, "gather_gbs: rows of {} bytes", row_bytes);
  TOPO_CHECK(std::isfinite(working_set_bytes) && working_set_bytes >= row_bytes, "gather_gbs: working set of {} bytes",
             working_set_bytes);
  const std::int64_t w = std::llround(row_bytes / 4.0);
  const std::pair<std::int64_t, std::int64_t> key{w, round_key(std::llround(working_set_bytes / 4.0))};
  auto it = gather_.find(key);
  if (it == gather_.end()) it = gather_.emplace(key, measure_gather(4.0 * key.second, 4.0 * w, triad_timing())).first;
  return it->second.gbs;
}

double Machine::exps_per_s() {
  if (!exp_) exp_ = measure_exp(triad_timing());
  return exp_->exps_per_s;
}

double Machine::sgemm_gflops() {
  if (!sgemm_) {
    sgemm_ = measure_sgemm(options_.sgemm_n, options_.quick ? TimingOptions::quick() : TimingOptions{});
  }
  return sgemm_->gflops;
}

double Machine::bf16_gflops() {
  if (!bf16_) {
    bf16_ = bf16_gemm_supported()
                ? measure_bf16_peak(options_.sgemm_n, options_.quick ? TimingOptions::quick() : TimingOptions{})
                : Bf16PeakMeasurement{};
  }
  return bf16_->gemm.gflops;
}

double Machine::matrix_peak_gflops(Precision p) { return p == Precision::bf16 ? bf16_gflops() : sgemm_gflops(); }

void Machine::measure_all() {
  for (double kib : {256.0, 1024.0, 4096.0, 16384.0, 65536.0}) triad_gbs(kib * 1024);
  stream_gbs();
  sgemm_gflops();
  bf16_gflops();
  exps_per_s();
}

nlohmann::json Machine::to_json() {
  const double stream = stream_gbs();
  const double peak = sgemm_gflops();
  nlohmann::json triad = nlohmann::json::array();
  for (const auto& [key, m] : triad_) {
    triad.push_back({{"working_set_bytes", m.working_set_bytes},
                     {"gbs", m.gbs},
                     {"median_gbs", m.median_gbs},
                     {"min_ms", m.stats.min_ms},
                     {"median_ms", m.stats.median_ms},
                     {"p10_ms", m.stats.p10_ms},
                     {"p90_ms", m.stats.p90_ms},
                     {"passes_per_sample", m.passes_per_sample}});
  }
  nlohmann::json gather = nlohmann::json::array();
  for (const auto& [key, m] : gather_) {
    gather.push_back({{"working_set_bytes", m.working_set_bytes},
                      {"row_bytes", 4 * m.row_floats},
                      {"gbs", m.gbs},
                      {"median_gbs", m.median_gbs},
                      {"min_ms", m.stats.min_ms},
                      {"median_ms", m.stats.median_ms},
                      {"passes_per_sample", m.passes_per_sample}});
  }
  const double exps = exps_per_s();
  const double bf16 = bf16_gflops();
  return {{"stream_gbs", stream},
          {"exps_per_s", exps},
          {"exp_median_per_s", exp_->median_exps_per_s},
          {"gather", gather},
          {"stream_working_set_bytes", 12.0 * static_cast<double>(std::llround(stream_working_set_bytes() / 12.0))},
          {"sgemm_gflops", peak},
          {"sgemm_median_gflops", sgemm_->median_gflops},
          {"sgemm_n", sgemm_->n},
          {"bf16_gflops", bf16 > 0 ? nlohmann::json(bf16) : nlohmann::json()},
          {"bf16_median_gflops", bf16 > 0 ? nlohmann::json(bf16_->gemm.median_gflops) : nlohmann::json()},
          {"bf16_peak_kernel", bf16_->kernel},
          {"gemm_backend_fp32", gemm_backend_name(gemm_backend(Precision::fp32))},
          {"gemm_backend_bf16", gemm_backend_name(gemm_backend(Precision::bf16))},
          {"gemm_backends", gemm_backend_line()},
          {"threads", threads()},
          {"blas", blas_line()},
          {"kernel_isa", kernel_isa()},
          {"cpu_model", cpu_model_},
          {"llc_bytes", llc_bytes_},
          {"load_average_start", load_at_start_},
          {"load_average_end", load_average()},
          {"limit_statistic", "best sample (min time) for triad, gather, exp, sgemm and bf16; benchmarks report their median"},
          {"bytes_counted", "reads + writes; write-allocate traffic not counted (triad: 12 bytes per element)"},
          {"triad", triad}};
}

}  // namespace topo::bench
