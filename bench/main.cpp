// topo-bench SUITE [--json FILE] [--threads N] [--quick] [--profile] [--sizes N,N,...] [--precision fp32|bf16]
// Measures this machine's limits (triad bandwidth per working-set size, sgemm peak), runs one registered
// suite (or `all`), prints a table and optionally writes the JSON report. Suites register themselves from
// their own files (TOPO_BENCH_SUITE in bench/*_bench.cpp): nothing here names them.
#include <cblas.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <limits>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/harness.hpp"
#include "bench/machine.hpp"
#include "kernels/error.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/dense/gemm_backend.hpp"
#include "kernels/threads.hpp"

namespace {

std::string suite_list() {
  std::string out;
  for (const auto& s : topo::bench::suites()) out += fmt::format("  {:<10} {}\n", s.name, s.description);
  return out;
}

int run(const std::string& suite_name, const std::string& json_path, int threads, bool quick, bool profile,
        const std::vector<std::int64_t>& sizes, const std::string& precision, const std::string& only) {
  using namespace topo::bench;
  const auto& all = suites();
  std::vector<const Suite*> chosen;
  for (const Suite& s : all) {
    if (suite_name == "all" || s.name == suite_name) chosen.push_back(&s);
  }
  TOPO_CHECK(!chosen.empty() || suite_name == "all", "unknown suite '{}'; known suites:\n{}  all        every suite",
             suite_name, suite_list());
  // Checked before the suites run, not after: a report that cannot be written lost a whole run's results.
  if (!json_path.empty()) {
    const std::filesystem::path folder = std::filesystem::path(json_path).parent_path();
    const std::string dir = folder.empty() ? "." : folder.string();
    TOPO_CHECK(std::filesystem::is_directory(dir), "--json {}: the folder {} does not exist", json_path, dir);
    TOPO_CHECK(!std::filesystem::is_directory(json_path), "--json {}: it is a directory, not a file", json_path);
    TOPO_CHECK(::access(dir.c_str(), W_OK) == 0, "--json {}: the folder {} is not writable", json_path, dir);
  }
  const topo::ThreadCount count = topo::configure_threads(threads);
  const topo::PrecisionChoice gemm_precision = topo::configure_gemm_precision(precision);
  Machine machine({.quick = quick});
  std::fprintf(stderr, "%s\n%s\n%s\n%s\n%s\nmeasuring machine limits...\n", topo::threads_line(count).c_str(),
               topo::kernel_isa_line().c_str(), topo::blas_line().c_str(), topo::gemm_backend_line().c_str(),
               gemm_precision.line.c_str());
  if (const double load = load_average(); load > 0.5) {
    std::fprintf(stderr, "warning: load average %.2f before starting: other processes share the cores, "
                 "expect pessimistic and noisy figures\n", load);
  }
  machine.measure_all();
  Report report;
  Runner runner(machine, report, quick ? TimingOptions::quick() : TimingOptions{}, quick);
  runner.set_json_path(json_path);
  runner.set_profile(profile);
  runner.set_sizes(sizes);
  runner.set_only(only);
  for (const Suite* s : chosen) {
    std::fprintf(stderr, "suite %s\n", s->name.c_str());
    runner.set_suite(s->name);
    s->run(runner);
  }
  TOPO_CHECK(only.empty() || !report.results().empty(), "--only '{}' matched no benchmark of {} (names: `topo-bench {} "
             "--json FILE` lists them, each row's \"name\")", only, suite_name == "all" ? "any suite" : "suite " + suite_name,
             suite_name);

  nlohmann::json machine_json = machine.to_json();  // after the suites: includes every triad size used
  machine_json["gemm_precision"] = topo::precision_name(gemm_precision.used);
  fmt::print("machine: {} | {} threads | stream triad {:.1f} GB/s | sgemm {:.1f} GFLOP/s | bf16 {:.1f} GFLOP/s | "
             "load {:.2f} -> {:.2f}\n",
             machine.cpu_model(), machine.threads(), machine.stream_gbs(), machine.sgemm_gflops(), machine.bf16_gflops(),
             machine_json["load_average_start"].get<double>(), machine_json["load_average_end"].get<double>());
  std::string ladder;
  for (const auto& t : machine_json["triad"]) {
    ladder += fmt::format(" {:.2f} MiB: {:.0f} GB/s |", t["working_set_bytes"].get<double>() / 1048576.0,
                          t["gbs"].get<double>());
  }
  fmt::print("triad by working set:{}\n\n{}", ladder, report.table());
  if (!json_path.empty()) {
    write_json_atomically(json_path, report.to_json(machine_json));
    fmt::print("wrote {}\n", json_path);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  topo::prepare_runtime(argv);  // may re-execute this program once, before anything else runs
  CLI::App app{"topo-bench: Topograph benchmarks, judged against this machine's measured limits"};
  std::string suite, json_path, precision = "fp32", only;
  int threads = 0;
  bool quick = false, list = false, profile = false;
  std::vector<std::int64_t> sizes;
  app.add_option("suite", suite, "suite to run, or `all`");
  app.add_option("--json", json_path, "write the JSON report here (atomically)");
  // CLI::Range, not CLI::PositiveNumber: its message for 0 read "not in range 0.000000 to 1.79...e308".
  app.add_option("--threads", threads, "OpenMP (and OpenBLAS) threads; default: the cores this process may use")
      ->check(CLI::Range(1, std::numeric_limits<int>::max()));
  app.add_flag("--quick", quick, "fewer repetitions (smoke runs, CI)");
  app.add_flag("--list", list, "list the suites and exit");
  app.add_option("--sizes", sizes, "problem sizes to sweep instead of the suite's own (models: sentence lengths)")
      ->delimiter(',')
      ->check(CLI::Range(std::int64_t{1}, std::numeric_limits<std::int64_t>::max()));
  app.add_option("--precision", precision,
                 "GEMM precision of the suites: fp32 | bf16 (AVX512_BF16 CPUs; fp32 elsewhere, said on stderr); a "
                 "bf16 row is judged against the machine's bf16 peak; suite models also times Star at fp32 for the ratio");
  app.add_option("--only", only, "only the benchmarks whose name contains this text, or one of its |-separated alternatives (e.g. "
                 "flash_attention, \"projection|weight gradient\"); the others are not timed");
  app.add_flag("--profile", profile, "where a step's time goes, by op category (suite models: the Star train step)");
  CLI11_PARSE(app, argc, argv);
  if (app.count("--only") > 0) {
    // An empty alternative is contained in every name: `--only ''` or 'a||b' would run the whole suite.
    const std::vector<std::string> parts = topo::bench::only_alternatives(only);
    if (parts.empty() || std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); })) {
      std::fprintf(stderr, "topo-bench: --only '%s': an empty text (or alternative) would match every benchmark\n",
                   only.c_str());
      return 2;
    }
  }

  if (list || suite.empty()) {
    std::printf("suites:\n%s  all        every suite\n", suite_list().c_str());
    return list ? 0 : 2;
  }
  try {
    return run(suite, json_path, threads, quick, profile, sizes, precision, only);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "topo-bench: %s\n", e.what());
    return 1;
  }
}
