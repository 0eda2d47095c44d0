// Timing, results, the report and the suite registry (see harness.hpp).
#include "bench/harness.hpp"

#include "kernels/atomic_file.hpp"
#include "kernels/memory.hpp"
#include "kernels/profile.hpp"

#include <filesystem>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "bench/machine.hpp"
#include "kernels/error.hpp"

namespace topo::bench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Value at quantile q of sorted data, interpolating linearly between the closest ranks.
double quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(position));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (position - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::string bytes_str(double bytes) { return bytes <= 0 ? std::string("-") : format_bytes(bytes); }

std::string figure(double v, const char* format) {
  return std::isfinite(v) ? fmt::format(fmt::runtime(format), v) : std::string("-");
}

std::vector<Suite>& registry() {
  static std::vector<Suite> suites;
  return suites;
}

}  // namespace

Stats summarize(std::vector<double> times_ms) {
  TOPO_CHECK(!times_ms.empty(), "summarize: no timings");
  for (double t : times_ms) TOPO_CHECK(std::isfinite(t) && t >= 0, "summarize: invalid timing {} ms", t);
  std::sort(times_ms.begin(), times_ms.end());
  Stats s;
  s.reps = static_cast<int>(times_ms.size());
  s.min_ms = times_ms.front();
  s.max_ms = times_ms.back();
  s.median_ms = quantile(times_ms, 0.5);
  s.p10_ms = quantile(times_ms, 0.1);
  s.p90_ms = quantile(times_ms, 0.9);
  return s;
}

Stats time_calls(const std::function<void()>& fn, const TimingOptions& options) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < options.warmup_runs; ++i) fn();
  std::vector<double> times;
  const auto start = clock::now();
  for (;;) {
    const auto t0 = clock::now();
    fn();
    const auto t1 = clock::now();
    times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    const double elapsed = std::chrono::duration<double>(t1 - start).count();
    const int reps = static_cast<int>(times.size());
    if (reps >= options.max_reps) break;
    if (reps >= options.min_reps && elapsed >= options.target_s) break;
    if (reps >= 3 && elapsed >= options.max_total_s) break;
  }
  return summarize(std::move(times));
}

Bound bound_of(const Work& work, const Limits& limits) {
  TOPO_CHECK(work.gathered_bytes >= 0 && work.gathered_bytes <= work.bytes_moved,
             "bound: {} gathered bytes of {} moved", work.gathered_bytes, work.bytes_moved);
  auto time_ms = [](double amount, double rate_per_s, const char* what) {
    if (amount <= 0) return kNaN;
    TOPO_CHECK(rate_per_s > 0 && std::isfinite(rate_per_s), "bound: no {} limit for {} units of work", what, amount);
    return amount / rate_per_s * 1e3;
  };
  Bound b;
  const double streamed = work.bytes_moved - work.gathered_bytes;
  b.triad_ms = time_ms(streamed, limits.triad_gbs * 1e9, "triad");
  b.gather_ms = time_ms(work.gathered_bytes, limits.gather_gbs * 1e9, "gather");
  b.exp_ms = time_ms(work.exps, limits.exps_per_s, "exp");
  b.sgemm_ms = time_ms(work.flops, limits.sgemm_gflops * 1e9, "sgemm");
  auto or_zero = [](double v) { return std::isnan(v) ? 0.0 : v; };
  const double memory_ms = or_zero(b.triad_ms) + or_zero(b.gather_ms);
  const char* memory = or_zero(b.gather_ms) > or_zero(b.triad_ms) ? "gather" : "triad";
  b.ms = 0;
  for (const auto& [ms, name] : {std::pair{memory_ms, memory}, std::pair{or_zero(b.exp_ms), "exp"},
                                 std::pair{or_zero(b.sgemm_ms), "sgemm"}}) {
    if (ms > b.ms) b.ms = ms, b.limit = name;
  }
  if (b.limit.empty()) b.ms = kNaN;
  return b;
}

Result make_result(std::string name, const Stats& stats, const Work& work, const Limits& limits,
                   nlohmann::json extra) {
  TOPO_CHECK(stats.median_ms > 0, "benchmark {}: median time {} ms is not positive", name, stats.median_ms);
  Result r;
  r.name = std::move(name);
  r.stats = stats;
  r.work = work;
  r.limits = limits;
  r.extra = std::move(extra);
  const double seconds = stats.median_ms * 1e-3;
  r.gbs = work.bytes_moved > 0 ? work.bytes_moved / seconds / 1e9 : kNaN;
  r.triad_gbs = work.bytes_moved > 0 ? limits.triad_gbs : kNaN;
  r.fraction_of_stream = work.bytes_moved > 0 && limits.triad_gbs > 0 ? r.gbs / limits.triad_gbs : kNaN;
  r.gflops = work.flops > 0 ? work.flops / seconds / 1e9 : kNaN;
  r.fraction_of_peak = work.flops > 0 && limits.sgemm_gflops > 0 ? r.gflops / limits.sgemm_gflops : kNaN;
  r.bound = bound_of(work, limits);
  r.fraction_of_bound = r.bound.ms / stats.median_ms;  // NaN when nothing is counted
  return r;
}

nlohmann::json to_json(const Result& r) {
  nlohmann::json j = {{"name", r.name},
                      {"median_ms", r.stats.median_ms},
                      {"min_ms", r.stats.min_ms},
                      {"max_ms", r.stats.max_ms},
                      {"p10_ms", r.stats.p10_ms},
                      {"p90_ms", r.stats.p90_ms},
                      {"reps", r.stats.reps},
                      {"bytes_moved", r.work.bytes_moved},
                      {"flops", r.work.flops},
                      {"working_set_bytes", r.work.working_set_bytes},
                      {"gbs", number_or_null(r.gbs)},
                      {"triad_gbs", number_or_null(r.triad_gbs)},
                      {"fraction_of_stream", number_or_null(r.fraction_of_stream)},
                      {"gflops", number_or_null(r.gflops)},
                      {"fraction_of_peak", number_or_null(r.fraction_of_peak)},
                      {"gathered_bytes", r.work.gathered_bytes},
                      {"exps", r.work.exps},
                      {"bound", r.bound.limit.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.bound.limit)},
                      {"bound_ms", number_or_null(r.bound.ms)},
                      {"bound_ms_by_limit", {{"triad", number_or_null(r.bound.triad_ms)},
                                             {"gather", number_or_null(r.bound.gather_ms)},
                                             {"exp", number_or_null(r.bound.exp_ms)},
                                             {"sgemm", number_or_null(r.bound.sgemm_ms)}}},
                      {"fraction_of_bound", number_or_null(r.fraction_of_bound)}};
  if (r.extra.is_object()) {
    for (const auto& [key, value] : r.extra.items()) {
      if (!j.contains(key)) j[key] = value;  // free-form fields never overwrite the measured ones
    }
  }
  return j;
}

nlohmann::json Report::to_json(const nlohmann::json& machine) const {
  nlohmann::json results = nlohmann::json::array();
  for (const Result& r : results_) results.push_back(bench::to_json(r));
  return {{"machine", machine}, {"results", results}};
}

std::string Report::table() const {
  std::size_t width = 4;
  for (const Result& r : results_) width = std::max(width, r.name.size());
  std::string out = fmt::format("{:<{}}  {:>10}  {:>21}  {:>9}  {:>8}  {:>7}  {:>9}  {:>6}  {:>9}  {:>6}  {:>6}\n",
                                "name", width, "median ms", "p10..p90 ms", "WS", "GB/s", "triad", "%triad", "GFLOP/s",
                                "%peak", "bound", "%bound");
  for (const Result& r : results_) {
    out += fmt::format("{:<{}}  {:>10.4f}  {:>21}  {:>9}  {:>8}  {:>7}  {:>9}  {:>6}  {:>9}  {:>6}  {:>6}\n", r.name, width,
                       r.stats.median_ms, fmt::format("{:.4f}..{:.4f}", r.stats.p10_ms, r.stats.p90_ms),
                       bytes_str(r.work.working_set_bytes), figure(r.gbs, "{:.1f}"), figure(r.triad_gbs, "{:.1f}"),
                       figure(100 * r.fraction_of_stream, "{:.1f}%"), figure(r.gflops, "{:.1f}"),
                       figure(100 * r.fraction_of_peak, "{:.1f}%"), r.bound.limit.empty() ? "-" : r.bound.limit,
                       figure(100 * r.fraction_of_bound, "{:.1f}%"));
  }
  return out;
}

void write_json_atomically(const std::string& path, const nlohmann::json& value) {
  TOPO_CHECK(!path.empty(), "write_json: empty output path");
  write_file_atomically(path, value.dump(2) + "\n");
}

Runner::Runner(Machine& machine, Report& report, TimingOptions timing, bool quick)
    : machine_(machine), report_(report), timing_(timing), quick_(quick) {}

int Runner::threads() const { return omp_get_max_threads(); }

namespace {
// What run and record return for a benchmark --only leaves out: its work as stated, no time (NaN).
Result skipped_result(const std::string& full_name, const Work& work) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Result r;
  r.name = full_name;
  r.work = work;
  r.stats = Stats{nan, nan, nan, nan, nan, 0};
  r.gbs = r.fraction_of_stream = r.gflops = r.fraction_of_peak = r.triad_gbs = r.fraction_of_bound = nan;
  return r;
}
}  // namespace

Result Runner::run(const std::string& name, const Work& work, const std::function<void()>& fn,
                   nlohmann::json extra) {
  const std::string full_name = suite_.empty() ? name : suite_ + "/" + name;
  last_skipped_ = skipped(name);
  if (last_skipped_) return skipped_result(full_name, work);
  std::fprintf(stderr, "  running %s\n", full_name.c_str());
  return record(name, time_calls(fn, timing_), work, std::move(extra));
}

std::vector<std::string> only_alternatives(const std::string& only) {
  std::vector<std::string> out;
  if (only.empty()) return out;
  for (std::size_t begin = 0;;) {
    const std::size_t end = only.find('|', begin);
    out.push_back(only.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
    if (end == std::string::npos) return out;
    begin = end + 1;
  }
}

bool Runner::skipped(const std::string& name) const {
  if (only_.empty()) return false;
  for (const std::string& part : only_)
    if (name.find(part) != std::string::npos) return false;
  return true;
}

Result Runner::record(const std::string& name, const Stats& stats, const Work& work, nlohmann::json extra) {
  const std::string full_name = suite_.empty() ? name : suite_ + "/" + name;
  last_skipped_ = skipped(name);
  if (last_skipped_) return skipped_result(full_name, work);
  // A benchmark that did not state its working set is judged at the size of the bytes it moves.
  const double working_set = work.working_set_bytes > 0 ? work.working_set_bytes : work.bytes_moved;
  Limits limits;
  if (work.bytes_moved > 0) limits.triad_gbs = machine_.triad_gbs(std::max(working_set, 12.0));
  if (work.gathered_bytes > 0) limits.gather_gbs = machine_.gather_gbs(working_set, work.gather_row_bytes);
  if (work.exps > 0) limits.exps_per_s = machine_.exps_per_s();
  // A GEMM-bound benchmark run at bf16 is judged against the bf16 peak, at fp32 against sgemm's.
  const Precision precision = gemm_precision();
  if (work.flops > 0) limits.sgemm_gflops = machine_.matrix_peak_gflops(precision);
  if (work.flops > 0) extra["peak"] = precision_name(precision);
  Result r = make_result(full_name, stats, work, limits, std::move(extra));
  report_.add(r);
  return r;
}

const std::vector<Suite>& suites() { return registry(); }

bool register_suite(Suite suite) {
  auto& all = registry();
  for (const Suite& s : all) TOPO_CHECK(s.name != suite.name, "topo-bench: suite '{}' registered twice", suite.name);
  TOPO_CHECK(suite.name != "all", "topo-bench: 'all' is reserved, not a suite name");
  const auto at = std::lower_bound(all.begin(), all.end(), suite,
                                   [](const Suite& a, const Suite& b) { return a.name < b.name; });
  all.insert(at, std::move(suite));
  return true;
}

Result& Report::last() {
  TOPO_CHECK(!results_.empty(), "no benchmark result recorded yet");
  return results_.back();
}

nlohmann::json profile_json() {
  const profile::Table t = profile::snapshot();
  nlohmann::json j = nlohmann::json::object();
  for (int c = 0; c < static_cast<int>(profile::Category::Count); ++c) {
    const auto& f = t[0][static_cast<std::size_t>(c)];
    const auto& b = t[1][static_cast<std::size_t>(c)];
    if (f.calls + b.calls == 0) continue;
    j[profile::category_name(static_cast<profile::Category>(c))] = {{"forward_s", f.seconds}, {"backward_s", b.seconds}};
  }
  return j;
}

Result& Report::find(const std::string& full_name) {
  for (Result& r : results_)
    if (r.name == full_name) return r;
  fail("no benchmark result named '{}' recorded", full_name);
}

void Runner::annotate(const std::string& key, nlohmann::json value) {
  if (!last_skipped_) report_.last().extra[key] = std::move(value);
}

void Runner::annotate_result(const std::string& name, const std::string& key, nlohmann::json value) {
  if (skipped(name)) return;
  report_.find(suite_.empty() ? name : suite_ + "/" + name).extra[key] = std::move(value);
}

std::string Runner::artifact_path(const std::string& name) const {
  if (json_path_.empty()) return "";
  const std::filesystem::path json(json_path_);
  return (json.parent_path() / (json.stem().string() + "-" + name)).string();
}

std::vector<std::string> data_files(const std::string& suite, const std::vector<std::string>& files) {
  const char* env = std::getenv("TOPO_DATA");
  const std::string dir = env ? env : "../shared/data";
  std::vector<std::string> paths;
  for (const std::string& f : files) {
    paths.push_back(dir + "/" + f);
    if (!std::filesystem::exists(paths.back())) {
      fmt::print("{}: skipped, {} is missing (set TOPO_DATA to the data folder)\n", suite, paths.back());
      return {};
    }
  }
  return paths;
}

}  // namespace topo::bench
