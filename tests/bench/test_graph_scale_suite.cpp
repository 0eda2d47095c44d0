// Suite `graph_scale` (bench/graph_scale_bench.cpp) run as a user runs it, at tiny graphs: `topo-bench graph_scale
// --quick --sizes 2000,4000 --json FILE`. The report must hold both models' rows at both sizes with the step's
// time per edge, both memory figures and the graph's bytes, the largest rows finite log-log slopes, and the two
// plots must be written. No timing is asserted.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/testing.hpp"

TEST_CASE("graph_scale suite: every model's rows carry time per edge, step memory, graph bytes and finite slopes") {
  const auto dir = topo::testing::fresh_temp_dir("graph_scale_suite");
  const std::string json = (dir / "gs.json").string();
  const std::string command = std::string("\"") + TOPO_BENCH_EXE +
                              "\" graph_scale --quick --threads 1 --sizes 2000,4000 --json \"" + json + "\" > \"" +
                              json + ".log\" 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream log(json + ".log");
  const std::string output((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  INFO(output);
  REQUIRE(status == 0);
  std::ifstream in(json);
  REQUIRE(in.good());
  const nlohmann::json report = nlohmann::json::parse(in);
  const auto find_row = [&](const std::string& name) -> const nlohmann::json* {
    for (const nlohmann::json& r : report.at("results"))
      if (r.at("name") == "graph_scale/" + name) return &r;
    return nullptr;
  };
  for (const std::string model : {"gcn", "sage-mean", "gat"}) {
    for (const std::string nodes : {"2000", "4000"}) {
      const std::string name = model + " nodes=" + nodes;
      CAPTURE(name);
      const nlohmann::json* r = find_row(name);
      REQUIRE(r != nullptr);
      for (const char* field : {"ns_per_edge", "allocator_step_peak_bytes", "rss_step_bytes", "graph_bytes",
                                "working_set_bytes", "ratio_to_first", "loss"}) {
        CAPTURE(field);
        CHECK(r->contains(field));
      }
      CHECK(r->at("ns_per_edge").get<double>() > 0);
      CHECK(r->at("allocator_step_peak_bytes").get<double>() > 0);
      // Degree 20 (a little fewer after dropped repeats) in both directions, plus a self loop per node.
      const double per_node = r->at("edges").get<double>() / r->at("nodes").get<double>();
      CHECK(per_node > 18);
      CHECK(per_node < 22);
      CHECK(r->at("graph_bytes").at("features").get<double>() == r->at("nodes").get<double>() * 128 * 4);
    }
    const nlohmann::json* last = find_row(model + " nodes=4000");
    REQUIRE(last != nullptr);
    REQUIRE(last->contains("loglog_slope"));
    CHECK(last->at("loglog_slope").at("points") == 2);
    for (const char* slope : {"step_time", "allocator_step_peak"}) {
      CAPTURE(slope);
      REQUIRE(last->at("loglog_slope").at(slope).is_number());
      CHECK(std::isfinite(last->at("loglog_slope").at(slope).get<double>()));
    }
    CHECK(last->at("working_set_passes_llc_at_edges").get<double>() > 0);
  }
  for (const char* plot : {"gs-time.svg", "gs-memory.svg"}) {
    CAPTURE(plot);
    CHECK(std::filesystem::exists(dir / plot));
  }
}
