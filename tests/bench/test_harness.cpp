// The benchmark harness: statistics, derived figures, the JSON report's shape, the atomic write, the suite
// registry and the machine measurements at sizes small enough to keep this file well under a second or two.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "bench/harness.hpp"
#include "bench/machine.hpp"
#include "tests/support/testing.hpp"

using namespace topo::bench;
namespace fs = std::filesystem;

namespace {

// A fresh empty directory under the system temp dir, removed at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("topo_bench_test_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

bool finite_positive(const nlohmann::json& v) { return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0; }

// A machine whose measurements take milliseconds: a 3 MB "stream" and a 128^3 sgemm.
MachineOptions tiny_machine() { return {.quick = true, .stream_working_set_bytes = 3e6, .sgemm_n = 128}; }

}  // namespace

TEST_CASE("summarize: median, min/max and p10/p90 of synthetic timings") {
  // Sorted {1,2,3,4,5}: the median is the middle one; p10 sits at rank 0.4 (1 + 0.4*(2-1)), p90 at rank 3.6.
  const Stats s = summarize({5, 1, 3, 2, 4});
  CHECK(s.reps == 5);
  CHECK(s.median_ms == doctest::Approx(3));
  CHECK(s.min_ms == doctest::Approx(1));
  CHECK(s.max_ms == doctest::Approx(5));
  CHECK(s.p10_ms == doctest::Approx(1.4));
  CHECK(s.p90_ms == doctest::Approx(4.6));

  // An even count: the median is the mean of the two middle values; one outlier does not move it much.
  const Stats even = summarize({10, 2, 1, 3});
  CHECK(even.median_ms == doctest::Approx(2.5));
  CHECK(even.max_ms == doctest::Approx(10));

  const Stats one = summarize({7});
  CHECK(one.median_ms == 7);
  CHECK(one.p10_ms == 7);
  CHECK(one.p90_ms == 7);

  CHECK_THROWS_AS(summarize({}), topo::Error);
  CHECK_THROWS_AS(summarize({1, -2}), topo::Error);
  CHECK_THROWS_AS(summarize({1, std::numeric_limits<double>::quiet_NaN()}), topo::Error);
}

TEST_CASE("time_calls: warm-up calls are not timed; the repetition count respects its bounds") {
  int calls = 0;
  TimingOptions t{.warmup_runs = 2, .target_s = 0.0, .min_reps = 5, .max_reps = 100, .max_total_s = 10};
  Stats s = time_calls([&] { ++calls; }, t);
  CHECK(s.reps == 5);
  CHECK(calls == 7);

  // A long target is cut at max_reps...
  calls = 0;
  t = {.warmup_runs = 0, .target_s = 100.0, .min_reps = 3, .max_reps = 20, .max_total_s = 100};
  s = time_calls([&] { ++calls; }, t);
  CHECK(s.reps == 20);
  CHECK(calls == 20);

  // ...and a slow op at max_total_s, keeping at least 3 samples.
  t = {.warmup_runs = 0, .target_s = 100.0, .min_reps = 50, .max_reps = 1000, .max_total_s = 0.02};
  s = time_calls([] { ::usleep(10000); }, t);
  CHECK(s.reps >= 3);
  CHECK(s.reps <= 4);
  CHECK(s.min_ms >= 10.0);
  CHECK(s.min_ms <= s.p10_ms);
  CHECK(s.p10_ms <= s.median_ms);
  CHECK(s.median_ms <= s.p90_ms);
  CHECK(s.p90_ms <= s.max_ms);
}

TEST_CASE("make_result derives bandwidth and compute figures; unset work leaves them null") {
  const Stats s = summarize({2.0, 2.0, 2.0});
  // 4e6 bytes in 2 ms = 2 GB/s; against a 4 GB/s triad that is half. 6e6 flops in 2 ms = 3 GFLOP/s of 12.
  const Result r = make_result("op", s, {.bytes_moved = 4e6, .flops = 6e6, .working_set_bytes = 1e6},
                               {.triad_gbs = 4.0, .sgemm_gflops = 12.0}, {{"shape", "[2, 3]"}, {"median_ms", -1}});
  CHECK(r.gbs == doctest::Approx(2.0));
  CHECK(r.fraction_of_stream == doctest::Approx(0.5));
  CHECK(r.gflops == doctest::Approx(3.0));
  CHECK(r.fraction_of_peak == doctest::Approx(0.25));
  const nlohmann::json j = to_json(r);
  CHECK(j["shape"] == "[2, 3]");
  CHECK(j["median_ms"].get<double>() == doctest::Approx(2.0));  // extra fields never overwrite measured ones

  const Result memory_only = make_result("copy", s, {.bytes_moved = 4e6}, {.triad_gbs = 4.0, .sgemm_gflops = 12.0});
  CHECK(std::isnan(memory_only.gflops));
  const nlohmann::json jm = to_json(memory_only);
  CHECK(jm["gflops"].is_null());
  CHECK(jm["fraction_of_peak"].is_null());
  CHECK(finite_positive(jm["gbs"]));

  CHECK_THROWS_AS(make_result("zero", Stats{}, {.bytes_moved = 1}, {.triad_gbs = 1}), topo::Error);
}

TEST_CASE("bound_of: the slowest limit binds; memory time adds streamed and gathered parts") {
  // 4e6 bytes at 4 GB/s: 1 ms of triad; 6e6 flops at 12 GFLOP/s: 0.5 ms of sgemm -> triad binds at 1 ms.
  Bound b = bound_of({.bytes_moved = 4e6, .flops = 6e6}, {.triad_gbs = 4.0, .sgemm_gflops = 12.0});
  CHECK(b.limit == "triad");
  CHECK(b.ms == doctest::Approx(1.0));
  CHECK(b.triad_ms == doctest::Approx(1.0));
  CHECK(b.sgemm_ms == doctest::Approx(0.5));
  CHECK(std::isnan(b.gather_ms));
  CHECK(std::isnan(b.exp_ms));

  // 3e6 of 4e6 bytes gathered at 1 GB/s (3 ms) + 1e6 streamed at 4 GB/s (0.25 ms): memory 3.25 ms, named
  // after its larger part.
  b = bound_of({.bytes_moved = 4e6, .gathered_bytes = 3e6, .gather_row_bytes = 1200},
               {.triad_gbs = 4.0, .gather_gbs = 1.0});
  CHECK(b.limit == "gather");
  CHECK(b.ms == doctest::Approx(3.25));
  CHECK(b.triad_ms == doctest::Approx(0.25));
  CHECK(b.gather_ms == doctest::Approx(3.0));
  // A small gathered part leaves the sum named triad.
  b = bound_of({.bytes_moved = 4e6, .gathered_bytes = 1e5, .gather_row_bytes = 24}, {.triad_gbs = 4.0, .gather_gbs = 1.0});
  CHECK(b.limit == "triad");
  CHECK(b.ms == doctest::Approx(0.975 + 0.1));

  // 1e9 exps at 1e11 per s = 10 ms beats 1 ms of memory: exp binds.
  b = bound_of({.bytes_moved = 4e6, .exps = 1e9}, {.triad_gbs = 4.0, .exps_per_s = 1e11});
  CHECK(b.limit == "exp");
  CHECK(b.ms == doctest::Approx(10.0));
  // 2.4e8 flops at 12 GFLOP/s = 20 ms: sgemm binds.
  b = bound_of({.bytes_moved = 4e6, .flops = 2.4e8, .exps = 1e9},
               {.triad_gbs = 4.0, .exps_per_s = 1e11, .sgemm_gflops = 12.0});
  CHECK(b.limit == "sgemm");
  CHECK(b.ms == doctest::Approx(20.0));

  // Nothing counted: no limit, no time.
  b = bound_of({}, {});
  CHECK(b.limit.empty());
  CHECK(std::isnan(b.ms));

  // Inconsistent work or a limit that was not measured is an error, not a silent infinity.
  CHECK_THROWS_AS(bound_of({.bytes_moved = 1e6, .gathered_bytes = 2e6}, {.triad_gbs = 4, .gather_gbs = 1}), topo::Error);
  CHECK_THROWS_AS(bound_of({.bytes_moved = 1e6, .gathered_bytes = 5e5}, {.triad_gbs = 4}), topo::Error);
  CHECK_THROWS_AS(bound_of({.exps = 10}, {}), topo::Error);
}

TEST_CASE("make_result: fraction_of_bound = time at the binding limit / median; JSON names the limit") {
  const Stats s = summarize({4.0, 4.0, 4.0});
  // Memory: 2e6 streamed at 2 GB/s (1 ms) + 1e6 gathered at 1 GB/s (1 ms) = 2 ms of 4 ms measured.
  const Result r = make_result("gather op", s, {.bytes_moved = 3e6, .gathered_bytes = 1e6, .gather_row_bytes = 1200},
                               {.triad_gbs = 2.0, .gather_gbs = 1.0});
  CHECK(r.fraction_of_bound == doctest::Approx(0.5));
  const nlohmann::json j = to_json(r);
  CHECK(j["bound"] == "triad");  // a tie goes to triad
  CHECK(j["bound_ms"].get<double>() == doctest::Approx(2.0));
  CHECK(j["fraction_of_bound"].get<double>() == doctest::Approx(0.5));
  CHECK(j["bound_ms_by_limit"]["gather"].get<double>() == doctest::Approx(1.0));
  CHECK(j["bound_ms_by_limit"]["exp"].is_null());

  const nlohmann::json none = to_json(make_result("uncounted", s, {}, {}));
  CHECK(none["bound"].is_null());
  CHECK(none["fraction_of_bound"].is_null());
}

TEST_CASE("write_json_atomically leaves a complete file and no .tmp, replaces an old one, fails cleanly") {
  TempDir dir;
  const fs::path file = dir.path / "out.json";
  nlohmann::json big = nlohmann::json::array();
  for (int i = 0; i < 10000; ++i) big.push_back({{"i", i}, {"name", "result"}});
  const nlohmann::json value = {{"machine", {{"stream_gbs", 1.5}}}, {"results", big}};

  { std::ofstream(file) << "old contents, not json"; }
  write_json_atomically(file.string(), value);
  int entries = 0;  // only out.json: no temp file of any name is left behind
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path)) ++entries;
  CHECK(entries == 1);
  CHECK(read_json(file) == value);

  const fs::path missing = dir.path / "no_such_dir" / "out.json";
  CHECK_THROWS_AS(write_json_atomically(missing.string(), value), topo::Error);
  CHECK_FALSE(fs::exists(missing));
}

TEST_CASE("measure_triad returns a positive bandwidth for a small working set, quickly") {
  const TriadMeasurement m = measure_triad(256 * 1024, TimingOptions::quick());
  CHECK(m.elements == std::llround(256 * 1024 / 12.0));
  CHECK(m.working_set_bytes == doctest::Approx(12.0 * static_cast<double>(m.elements)));
  CHECK(m.passes_per_sample >= 1);
  CHECK(std::isfinite(m.gbs));
  CHECK(m.gbs > 0);
  CHECK(m.stats.median_ms > 0);
  CHECK_THROWS_AS(measure_triad(4, TimingOptions::quick()), topo::Error);
}

TEST_CASE("measure_gather and measure_exp return positive rates on small inputs, quickly") {
  const GatherMeasurement g = measure_gather(256 * 1024, 1200, TimingOptions::quick());
  CHECK(g.row_floats == 300);
  CHECK(g.rows == std::llround(256 * 1024 / 1200.0));
  CHECK(g.working_set_bytes == doctest::Approx(1200.0 * static_cast<double>(g.rows)));
  CHECK(g.gbs > 0);
  CHECK(g.gbs >= g.median_gbs);  // the limit is the best sample
  // Rows narrower than a cache line and a table smaller than one group still measure.
  CHECK(measure_gather(100, 24, TimingOptions::quick()).rows == 8);
  CHECK_THROWS_AS(measure_gather(1e6, 2, TimingOptions::quick()), topo::Error);

  const ExpMeasurement e = measure_exp(TimingOptions::quick());
  CHECK(e.threads >= 1);
  CHECK(e.exps_per_s > 0);
  CHECK(e.exps_per_s >= e.median_exps_per_s);
}

TEST_CASE("a result run at bf16 is judged against the bf16 peak, one at fp32 against sgemm's; the JSON has both") {
  Machine machine(tiny_machine());
  Report report;
  Runner runner(machine, report, TimingOptions{.warmup_runs = 1, .target_s = 0.0, .min_reps = 3}, true);
  std::vector<float> x(1 << 12, 1.f);
  const auto work = [&] {
    for (float& v : x) v = v * 0.5f + 1.f;
  };
  const double flops = 2.0 * static_cast<double>(x.size());
  const Result fp32 = runner.run("fp32", {.flops = flops}, work);
  CHECK(fp32.limits.sgemm_gflops == machine.sgemm_gflops());
  CHECK(fp32.extra["peak"] == "fp32");
  const nlohmann::json m = machine.to_json();
  CHECK(m["gemm_backend_fp32"].is_string());
  CHECK(m["gemm_backend_bf16"].is_string());
  if (!topo::bf16_gemm_supported()) {
    CHECK(m["bf16_gflops"].is_null());
    return;
  }
  CHECK(finite_positive(m["bf16_gflops"]));
  CHECK_FALSE(m["bf16_peak_kernel"].get<std::string>().empty());
  const topo::GemmPrecisionGuard bf16_gemms(topo::Precision::bf16);
  const Result bf16 = runner.run("bf16", {.flops = flops}, work);
  CHECK(bf16.limits.sgemm_gflops == machine.bf16_gflops());
  CHECK(bf16.extra["peak"] == "bf16");
}

TEST_CASE("--only: a benchmark whose name lacks the text is neither timed nor reported, nor annotated") {
  Machine machine(tiny_machine());
  Report report;
  Runner runner(machine, report, TimingOptions{.warmup_runs = 1, .target_s = 0.0, .min_reps = 3}, true);
  runner.set_suite("unit");
  runner.set_only("backward");
  int calls = 0;
  const Result kept = runner.run("attention backward", {.flops = 1.0}, [&] { ++calls; });
  CHECK(calls >= 4);  // the warm-up and at least three timed
  CHECK(std::isfinite(kept.stats.median_ms));
  calls = 0;
  const Result left = runner.run("attention forward", {.flops = 1.0}, [&] { ++calls; });
  CHECK(calls == 0);
  CHECK(left.name == "unit/attention forward");
  CHECK(std::isnan(left.stats.median_ms));
  runner.annotate("ratio", 2.0);                     // meant for the row left out: not the kept one
  runner.annotate_result("attention forward", "ratio", 2.0);  // no such row: nothing happens
  REQUIRE(report.results().size() == 1);
  CHECK(report.results()[0].name == "unit/attention backward");
  CHECK_FALSE(report.results()[0].extra.contains("ratio"));
  CHECK(std::isnan(runner.record("forward again", Stats{1, 1, 1, 1, 1, 3}, {.flops = 1.0}).stats.median_ms));
  CHECK(report.results().size() == 1);
  // Alternatives: a name containing any of them is kept.
  runner.set_only("projection|weight gradient");
  CHECK_FALSE(runner.skipped("dense/projection [N, 128] @ [128, 16]"));
  CHECK_FALSE(runner.skipped("dense/weight gradient [N, 16]^T @ [N, 8]"));
  CHECK(runner.skipped("dense/relu"));
  runner.set_only("");
  CHECK_FALSE(runner.skipped("anything"));
}

TEST_CASE("the report's JSON has the machine block and one record per result, every number finite") {
  Machine machine(tiny_machine());
  Report report;
  Runner runner(machine, report, TimingOptions{.warmup_runs = 1, .target_s = 0.0, .min_reps = 3}, true);
  runner.set_suite("unit");
  std::vector<float> src(1 << 14, 1.f), dst(1 << 14);
  const double bytes = 2.0 * sizeof(float) * static_cast<double>(src.size());
  const Result copy = runner.run("copy", {.bytes_moved = bytes, .working_set_bytes = bytes},
                                 [&] { std::copy(src.begin(), src.end(), dst.begin()); }, {{"elements", src.size()}});
  CHECK(copy.name == "unit/copy");
  runner.run("fma", {.bytes_moved = bytes, .flops = 2.0 * static_cast<double>(src.size())}, [&] {
    for (std::size_t i = 0; i < src.size(); ++i) dst[i] = dst[i] * 0.5f + src[i];
  });
  // Half its bytes gathered in rows of 64 floats, and one exp per element: every limit gets measured.
  const Result gathered = runner.run(
      "gather+exp", {.bytes_moved = bytes, .working_set_bytes = bytes, .gathered_bytes = bytes / 2,
                     .gather_row_bytes = 256, .exps = static_cast<double>(src.size())},
      [&] { std::copy(src.begin(), src.end(), dst.begin()); });
  CHECK(gathered.limits.gather_gbs == machine.gather_gbs(bytes, 256));  // cached: the same figure
  CHECK(gathered.limits.exps_per_s == machine.exps_per_s());
  CHECK(gathered.limits.triad_gbs == machine.triad_gbs(bytes));
  CHECK(gathered.limits.sgemm_gflops == 0);  // no flops counted: no sgemm limit needed
  CHECK(gathered.fraction_of_bound > 0);

  // Triad is measured once per working-set size: asking again returns the cached figure, not a new one.
  const double triad = machine.triad_gbs(bytes);
  CHECK(machine.triad_gbs(bytes) == triad);
  CHECK(machine.triad_gbs(bytes + 12) == triad);  // within 1%: the same measurement
  CHECK(copy.triad_gbs == triad);
  CHECK_THROWS_AS(machine.triad_gbs(4), topo::Error);

  const nlohmann::json j = report.to_json(machine.to_json());
  REQUIRE(j.contains("machine"));
  REQUIRE(j.contains("results"));
  const auto& m = j["machine"];
  CHECK(finite_positive(m["stream_gbs"]));
  CHECK(finite_positive(m["sgemm_gflops"]));
  CHECK(finite_positive(m["threads"]));
  CHECK(m["cpu_model"].is_string());
  REQUIRE(m["triad"].is_array());
  CHECK(m["triad"].size() >= 2);  // the stream size and the benchmarks' working set
  for (const auto& t : m["triad"]) {
    CHECK(finite_positive(t["working_set_bytes"]));
    CHECK(finite_positive(t["gbs"]));
  }
  CHECK(finite_positive(m["exps_per_s"]));
  REQUIRE(m["gather"].size() == 1);
  CHECK(m["gather"][0]["row_bytes"] == 256);
  CHECK(finite_positive(m["gather"][0]["gbs"]));

  REQUIRE(j["results"].size() == 3);
  for (const auto& r : j["results"]) {
    CHECK(r["name"].is_string());
    for (const char* key : {"median_ms", "min_ms", "max_ms", "p10_ms", "p90_ms", "reps", "bytes_moved", "gbs",
                            "fraction_of_stream", "triad_gbs", "bound_ms", "fraction_of_bound"}) {
      INFO(r["name"], " ", key);
      CHECK(finite_positive(r[key]));
    }
    CHECK(r.contains("flops"));
    CHECK(r.contains("gflops"));
    CHECK(r.contains("fraction_of_peak"));
    CHECK(r.contains("working_set_bytes"));
  }
  CHECK(j["results"][0]["elements"] == src.size());
  CHECK(j["results"][0]["gflops"].is_null());
  CHECK(finite_positive(j["results"][1]["gflops"]));
  CHECK(finite_positive(j["results"][1]["fraction_of_peak"]));
  // The fma result stated no working set: it is judged against triad at the size of the bytes it moves.
  CHECK(j["results"][1]["triad_gbs"] == j["results"][0]["triad_gbs"]);
  CHECK(j["results"][0]["bound"] == "triad");
  CHECK(j["results"][2]["bound_ms_by_limit"]["gather"].is_number());

  const std::string table = report.table();
  CHECK(table.find("unit/copy") != std::string::npos);
  CHECK(table.find("unit/fma") != std::string::npos);
}

TEST_CASE("record: timings a suite took itself become a result with the same derived figures") {
  Machine machine(tiny_machine());
  Report report;
  Runner runner(machine, report, TimingOptions{.warmup_runs = 1, .target_s = 0.0, .min_reps = 3}, true);
  runner.set_suite("unit");
  const double bytes = 1 << 20;
  const Result r = runner.record("alternated", summarize({4.0, 2.0, 3.0}), {.bytes_moved = bytes}, {{"rounds", 3}});
  CHECK(r.name == "unit/alternated");
  CHECK(r.stats.median_ms == 3.0);
  CHECK(r.stats.reps == 3);
  CHECK(r.gbs == doctest::Approx(bytes / 3e-3 / 1e9));
  CHECK(r.triad_gbs == machine.triad_gbs(bytes));
  REQUIRE(report.results().size() == 1);
  CHECK(report.results()[0].extra["rounds"] == 3);
  CHECK_THROWS_AS(runner.record("empty", summarize({}), {}), topo::Error);
}

TOPO_BENCH_SUITE(test_registered, "registered from the test file") { bench.run("nothing", {}, [] {}); }

TEST_CASE("suites register themselves, sorted by name; duplicates and 'all' are refused") {
  const auto& all = suites();
  const auto found = std::find_if(all.begin(), all.end(), [](const Suite& s) { return s.name == "test_registered"; });
  REQUIRE(found != all.end());
  CHECK(found->description == "registered from the test file");
  CHECK(std::is_sorted(all.begin(), all.end(), [](const Suite& a, const Suite& b) { return a.name < b.name; }));
  CHECK_THROWS_AS(register_suite({"test_registered", "again", [](Runner&) {}}), topo::Error);
  CHECK_THROWS_AS(register_suite({"all", "reserved", [](Runner&) {}}), topo::Error);
  register_suite({"aaa_first", "sorts first", [](Runner&) {}});
  CHECK(suites().front().name == "aaa_first");
}
