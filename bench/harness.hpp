#pragma once
// The benchmark harness every topo-bench suite uses: timing (warm-up, then repeated runs summarised by
// median and spread), the Result record, the suite registry and the report (stdout table + JSON file).
//
// Byte counting, everywhere in topo-bench: `bytes_moved` is the minimum number of bytes an op must read
// plus write (each input element read once, each output element written once). Write-allocate traffic
// (the read of a destination line before it is written) is NOT counted — the STREAM convention, which the
// triad reference in machine.hpp follows too, so fraction_of_stream compares like with like.
//
// A suite is a file in bench/ that registers itself (no edit to main or CMake):
//   TOPO_BENCH_SUITE(dense, "dense kernels at a real batch's sizes") {
//     bench.run("relu", {.bytes_moved = 2 * bytes, .working_set_bytes = 2 * bytes}, [&] { topo::relu(x); });
//   }
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace topo::bench {

class Machine;

// ---- timing ----------------------------------------------------------------------------------------

// Summary of repeated timings (milliseconds). p10/p90 interpolate linearly between closest ranks.
struct Stats {
  double median_ms = 0, min_ms = 0, max_ms = 0, p10_ms = 0, p90_ms = 0;
  int reps = 0;
};
// Throws topo::Error on an empty sample or a non-finite / negative timing.
Stats summarize(std::vector<double> times_ms);

struct TimingOptions {
  int warmup_runs = 2;        // untimed calls first (page faults, caches, lazily created thread pools)
  double target_s = 0.5;      // aim for about this much timed work per benchmark...
  int min_reps = 5;           // ...but never fewer samples than this
  int max_reps = 2000;        // nor more than this (tiny ops)
  double max_total_s = 1.5;   // stop sampling past this (slow ops): at least 3 samples are kept anyway
  static TimingOptions quick() { return {1, 0.1, 3, 500, 0.4}; }
};
// Runs `fn` warmup_runs times, then samples one call per timing until the budget is met.
Stats time_calls(const std::function<void()>& fn, const TimingOptions& options = {});

// ---- results ---------------------------------------------------------------------------------------

// What an op must do at minimum; zero means "not applicable" and leaves the derived figures unset.
struct Work {
  double bytes_moved = 0;        // minimum bytes read + written (see the counting rule above)
  double flops = 0;              // floating-point operations (an FMA counts 2)
  double working_set_bytes = 0;  // distinct bytes touched: picks the triad reference size
  // The part of bytes_moved fetched as rows through an index (each row once, in the index's order): judged
  // against the gather rate for rows of gather_row_bytes at the working-set size instead of triad.
  double gathered_bytes = 0;
  double gather_row_bytes = 0;
  double exps = 0;  // exp evaluations (the kernels' exp_approx): judged against the measured exp rate
};

// This machine's limits at one result's working set (0 = not measured / not applicable).
struct Limits {
  double triad_gbs = 0;     // triad at the working-set size
  double gather_gbs = 0;    // rows of gather_row_bytes fetched through a random index, at that size
  double exps_per_s = 0;    // exp_approx evaluations per second, all threads
  double sgemm_gflops = 0;  // the matrix peak at the precision the GEMMs ran in: fp32 sgemm, or bf16 (Machine)
};

// The roofline of one result: the time each limit alone allows for its work (NaN where the work counts
// nothing for it). Memory time = streamed bytes (bytes_moved - gathered_bytes) at triad + gathered bytes at
// the gather rate, named after the larger of the two parts; the binding limit is the slowest of memory,
// exp and sgemm ("triad" | "gather" | "exp" | "sgemm"; empty when nothing is counted).
struct Bound {
  std::string limit;
  double ms = 0;  // time at the binding limit; NaN when nothing is counted
  double triad_ms = 0, gather_ms = 0, exp_ms = 0, sgemm_ms = 0;
};
// Pure arithmetic; throws topo::Error when gathered_bytes exceeds bytes_moved or a needed limit is missing.
Bound bound_of(const Work& work, const Limits& limits);

struct Result {
  std::string name;
  Stats stats;  // median_ms and the spread (min/max, p10/p90)
  Work work;
  // Derived; NaN when not applicable (no bytes / no flops counted), written as null in JSON.
  double gbs = 0, fraction_of_stream = 0, gflops = 0, fraction_of_peak = 0;
  double triad_gbs = 0;         // the triad bandwidth at this working-set size that gbs is compared to
  Limits limits;                // every limit this result was judged against
  Bound bound;                  // its roofline
  double fraction_of_bound = 0; // bound.ms / median_ms; NaN when nothing is counted
  nlohmann::json extra = nlohmann::json::object();  // free-form fields (shapes, threads, notes)
};

// Fills the derived figures from the timings and the machine's limits at the result's working set.
// Pure: no measurement happens here.
Result make_result(std::string name, const Stats& stats, const Work& work, const Limits& limits,
                   nlohmann::json extra = nlohmann::json::object());

nlohmann::json to_json(const Result& result);

// ---- report ----------------------------------------------------------------------------------------

class Report {
 public:
  void add(Result result) { results_.push_back(std::move(result)); }
  // The most recent result (throws when there is none).
  Result& last();
  // The result recorded under `full_name` ("suite/name"); throws naming it when there is none.
  Result& find(const std::string& full_name);
  const std::vector<Result>& results() const { return results_; }

  // {"machine": machine, "results": [...]}
  nlohmann::json to_json(const nlohmann::json& machine) const;
  // Human-readable table of every result.
  std::string table() const;

 private:
  std::vector<Result> results_;
};

// Writes `value` to `path` atomically: the text goes to PATH.tmp, which is then renamed over PATH, so a
// reader never sees a half-written file. Throws topo::Error naming the path on failure.
void write_json_atomically(const std::string& path, const nlohmann::json& value);

// --only's text as its '|'-separated alternatives ("a|b" -> {"a", "b"}; "" -> {}): a name is kept when it
// contains one of them, so an empty alternative ("a||b") would keep every name.
std::vector<std::string> only_alternatives(const std::string& only);

// ---- running suites --------------------------------------------------------------------------------

// Handed to a suite: times benchmarks against this run's machine limits and records them in the report.
class Runner {
 public:
  Runner(Machine& machine, Report& report, TimingOptions timing, bool quick);

  // Times fn, derives the figures, adds the result to the report (name prefixed "suite/") and returns it.
  Result run(const std::string& name, const Work& work, const std::function<void()>& fn,
             nlohmann::json extra = nlohmann::json::object());
  // The same for timings the suite took itself (several benchmarks alternated call by call, so that a
  // drifting machine load slows them alike): derives the figures from stats, records and returns the result.
  Result record(const std::string& name, const Stats& stats, const Work& work,
                nlohmann::json extra = nlohmann::json::object());

  // Adds a field to the most recent result's JSON record: figures derived from several runs (e.g. the
  // ratio of a composed kernel's time to the fused one's).
  void annotate(const std::string& key, nlohmann::json value);
  // The same for an earlier result of this suite, by the name it was run under (a fit over a whole sweep
  // annotated on the sweep's rows).
  void annotate_result(const std::string& name, const std::string& key, nlohmann::json value);
  // Where a suite writes a file that belongs with the report (a plot): next to the JSON file, named
  // "<json stem>-<name>"; empty when no JSON file was asked for.
  std::string artifact_path(const std::string& name) const;
  void set_json_path(std::string path) { json_path_ = std::move(path); }

  Machine& machine() { return machine_; }
  bool quick() const { return quick_; }
  // --profile: suites that support it break some steps down by op category (kernels/profile.hpp).
  bool profile() const { return profile_; }
  void set_profile(bool on) { profile_ = on; }
  // --sizes: the problem sizes a suite sweeps (suite models: sentence lengths), replacing its own list; empty
  // when not given.
  const std::vector<std::int64_t>& sizes() const { return sizes_; }
  void set_sizes(std::vector<std::int64_t> sizes) { sizes_ = std::move(sizes); }
  // --only: only the benchmarks whose name contains this text, or one of its '|'-separated alternatives
  // ("projection|weight gradient"), are timed and reported (empty: all); run and record return the others
  // untimed, their times NaN (so a ratio over one is NaN, written as null).
  void set_only(const std::string& only) { only_ = only_alternatives(only); }
  // True where --only leaves `name` out (a suite may skip building a left-out benchmark's inputs).
  bool skipped(const std::string& name) const;
  int threads() const;
  void set_suite(std::string suite) { suite_ = std::move(suite); }

 private:
  Machine& machine_;
  Report& report_;
  TimingOptions timing_;
  bool quick_;
  bool profile_ = false;
  std::vector<std::int64_t> sizes_;
  std::vector<std::string> only_;  // --only's alternatives; empty: every benchmark
  bool last_skipped_ = false;  // the latest run/record was left out by --only: annotate() skips it too
  std::string suite_;
  std::string json_path_;
};

struct Suite {
  std::string name;
  std::string description;
  std::function<void(Runner&)> run;
};
// Every registered suite, ordered by name. Registration happens during static initialisation.
const std::vector<Suite>& suites();
// Adds a suite; throws topo::Error on a duplicate name. Returns true so it can initialise a static.
bool register_suite(Suite suite);

// The op-category profiler's table (kernels/profile.hpp) as JSON: seconds per phase and category, for the
// categories that ran ({"gemm": {"forward_s", "backward_s"}, ...}); suites with --profile annotate it on a step.
nlohmann::json profile_json();

// Suites on real data: the paths of `files` (relative to TOPO_DATA, default ../shared/data), or, when one is
// missing, a line saying that `suite` is skipped and which file and variable to fix, and an empty list.
std::vector<std::string> data_files(const std::string& suite, const std::vector<std::string>& files);

}  // namespace topo::bench

// Defines and registers a suite: the body that follows sees `topo::bench::Runner& bench`.
#define TOPO_BENCH_SUITE(ident, description)                                                                \
  static void topo_bench_suite_##ident(::topo::bench::Runner& bench);                                      \
  [[maybe_unused]] static const bool topo_bench_registered_##ident =                                       \
      ::topo::bench::register_suite({#ident, description, &topo_bench_suite_##ident});                     \
  static void topo_bench_suite_##ident([[maybe_unused]] ::topo::bench::Runner& bench)
