// Suite `long` (bench/long_bench.cpp) run as a user runs it, at tiny sizes: `topo-bench long --quick --sizes
// 64,128 --json FILE`. The report must hold every pattern's rows with the memory fields, ratios and slopes, and
// the activation bytes the tape kept must be near bench/long_activations.hpp's analytical count (a tensor kept
// twice, or one the count forgot, moves the ratio past the bounds). No timing is asserted.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/long_activations.hpp"
#include "tests/support/testing.hpp"

namespace {

nlohmann::json run_long_suite(const std::filesystem::path& json) {
  const std::string command = std::string("\"") + TOPO_BENCH_EXE + "\" long --quick --threads 1 --sizes 64,128 --json \"" +
                              json.string() + "\" > \"" + json.string() + ".log\" 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream log(json.string() + ".log");
  const std::string output((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  INFO(output);
  REQUIRE(status == 0);
  std::ifstream in(json);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

// How far the high-water RSS may read under an RSS read before it. The kernel resets the mark to the RSS of the
// moment and raises it only as pages are unmapped, and since Linux 6.2 it keeps a process's resident pages in
// per-CPU counters that a read sums without each CPU's pending batch (max(32, 2 x CPUs) pages): a few pages
// faulted between the reset and the read, or a batch not yet folded in, put the mark under the RSS. CI saw 50 KB.
const double rss_count_slack = [] {
  const double cpus = double(std::max(1L, sysconf(_SC_NPROCESSORS_CONF)));
  return std::max(double(1 << 20), cpus * std::max(32.0, 2 * cpus) * double(sysconf(_SC_PAGESIZE)));
}();

const nlohmann::json* find_row(const nlohmann::json& report, const std::string& name) {
  for (const nlohmann::json& r : report.at("results"))
    if (r.at("name") == "long/" + name) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("long suite: every pattern's rows carry time, MFU, both peaks and kept activations near the count") {
  const auto dir = topo::testing::fresh_temp_dir("long_suite");
  const nlohmann::json report = run_long_suite(dir / "long.json");
  for (const std::string pattern : {"star", "multiscale 1-9", "window+global", "dense"}) {
    // n = 64 and 128 as one sequence; n = 64 twice over, the largest n's tokens per batch.
    for (const std::string row : {" n=64 x1", " n=128 x1", " n=64 x2"}) {
      const std::string name = pattern + row;
      CAPTURE(name);
      const nlohmann::json* r = find_row(report, name);
      REQUIRE(r != nullptr);
      for (const char* field : {"us_per_token", "mfu", "peak_rss_bytes", "allocator_peak_bytes",
                                "allocator_step_peak_bytes", "kept_activation_bytes", "analytical_kept_bytes",
                                "topology_bytes", "per_token", "ratio_to_first"}) {
        CAPTURE(field);
        CHECK(r->contains(field));
      }
      CHECK(r->at("us_per_token").get<double>() > 0);
      CHECK(r->at("hidden") == 100);
      CHECK(r->at("tokens").get<std::int64_t>() == r->at("n").get<std::int64_t>() * r->at("sentences").get<std::int64_t>());
      // The peaks hold the step: the allocator's covers what was live before plus what the forward kept.
      const double peak = r->at("allocator_peak_bytes").get<double>(), kept = r->at("kept_activation_bytes").get<double>();
      CHECK(peak >= r->at("allocator_live_before_step_bytes").get<double>() + kept);
      // The RSS mark holds the RSS before the step, up to the kernel's counting (rss_count_slack).
      CHECK(r->at("peak_rss_bytes").get<double>() >= r->at("rss_before_step_bytes").get<double>() - rss_count_slack);
      // Kept for backward against the analytical count: within 1.5x either way even at 64 tokens.
      const double ratio = r->at("kept_over_analytical").get<double>();
      CHECK(ratio > 1 / 1.5);
      CHECK(ratio < 1.5);
    }
    const nlohmann::json* first = find_row(report, pattern + " n=64 x1");
    REQUIRE(first != nullptr);
    CHECK(first->at("ratio_to_first").at("us_per_token").get<double>() == doctest::Approx(1.0));
    CHECK(first->at("ratio_to_first").at("first_n") == 64);
    const nlohmann::json* last = find_row(report, pattern + " n=128 x1");
    REQUIRE(last != nullptr);
    REQUIRE(last->contains("loglog_slope"));
    CHECK(last->at("loglog_slope").at("points") == 2);
    CHECK(last->at("loglog_slope").at("step_time").is_number());
  }
  for (const char* plot : {"long-time.svg", "long-memory.svg", "long-rss.svg"}) {
    CAPTURE(plot);
    CHECK(std::filesystem::exists(dir / plot));
  }
}

TEST_CASE("long suite: the analytical counts grow linearly in tokens and with the layers") {
  using topo::bench::ActivationShape;
  const ActivationShape one{1024, 1, 100, 10, 2}, two{2048, 1, 100, 10, 2}, four{4096, 1, 100, 10, 2},
      deeper{1024, 1, 100, 10, 4};
  for (auto count : {topo::bench::star_kept_bytes, topo::bench::multiscale_band_kept_bytes,
                     topo::bench::window_global_kept_bytes, topo::bench::dense_kept_bytes}) {
    // Linear in tokens past the per-call constants (the stacked projection weights): equal steps, equal growth.
    CHECK(count(four) - count(two) == doctest::Approx(2 * (count(two) - count(one))).epsilon(0.01));
    CHECK(count(four) / count(one) > 3.5);
    CHECK(count(deeper) > 1.8 * count(one));
  }
  // Star keeps 11 [N, d] floats per layer, the feed-forward-free [CLS] models 6, the dense Transformer 16.
  CHECK(topo::bench::star_kept_bytes(one) > topo::bench::multiscale_band_kept_bytes(one));
  CHECK(topo::bench::dense_kept_bytes(one) > topo::bench::star_kept_bytes(one));
}

TEST_CASE("long suite: sizes that are not increasing lengths are an error naming them") {
  const auto dir = topo::testing::fresh_temp_dir("long_suite_bad");
  const std::string log = (dir / "out.log").string();
  const std::string command = std::string("\"") + TOPO_BENCH_EXE + "\" long --quick --sizes 128,64 > \"" + log + "\" 2>&1";
  CHECK(std::system(command.c_str()) != 0);
  std::ifstream in(log);
  const std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(output.find("--sizes must be increasing, got 128,64") != std::string::npos);
}
