// topo-topology: a topology file's pattern for one sentence of n tokens, as a picture or as numbers
// (docs/topologies.md).
//   topo-topology draw configs/topologies/bigbird.json --n 64 --svg bigbird.svg   # the grid per head group
//   topo-topology draw configs/topologies/bigbird.json --n 64 --dot bigbird.dot   # Graphviz DOT of the graph
//   topo-topology draw configs/topologies/bigbird.json --n 16 --dot - | dot -Tsvg > g.svg
//   topo-topology stats configs/topologies/bigbird.json --n 64                    # edges, density, FLOPs, hops
// Exit codes: 0 done (or --help), 1 a bad argument or file (one line "topo-topology: ..."), 2 an unexpected
// internal error.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "apps/topology/draw.hpp"
#include "apps/train/cli.hpp"
#include "kernels/atomic_file.hpp"
#include "kernels/error.hpp"

namespace {

// `-`: standard output; a file is replaced atomically (a killed run leaves the old picture or the new one).
void write_output(const std::string& path, const std::string& bytes) {
  if (path == "-") {
    std::fwrite(bytes.data(), 1, bytes.size(), stdout);
    return;
  }
  topo::write_file_atomically(path, bytes);
  std::printf("-> %s\n", path.c_str());
}

int run(int argc, char** argv) {
  using namespace topo::apps;
  CLI::App app("Draws a topology file's pattern for one sentence of n tokens, or prints its numbers.", "topo-topology");
  app.require_subcommand(1);
  std::string file, svg, dot;
  std::int64_t n = 64, heads = 0;
  auto common = [&](CLI::App* sub) {
    sub->add_option("FILE", file, "the topology file (JSON, docs/topologies.md)")->required();
    // Checked here too (layout_topology checks it for every caller): CLI11 clamps 10^20 to 2^63 - 1, and its
    // range check names the value as typed.
    sub->add_option("--n", n, fmt::format("tokens in the sentence, 1..{} (default 64)", kMaxDrawTokens))
        ->check(CLI::Range(std::int64_t{1}, kMaxDrawTokens));
    sub->add_option("--heads", heads,
                    "H, the heads of the one group of a file without head_groups (default 1); a file with "
                    "head_groups: must equal their sum")
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  };
  CLI::App* draw = app.add_subcommand("draw", "write the picture (--svg) and/or the graph as Graphviz DOT (--dot)");
  common(draw);
  CLI::Option* svg_option =
      draw->add_option("--svg", svg, "write the SVG picture here (alone or -: standard output)")->expected(0, 1);
  CLI::Option* dot_option =
      draw->add_option("--dot", dot, "write Graphviz DOT of the built graph here (alone or -: standard output)")
          ->expected(0, 1);
  CLI::App* stats = app.add_subcommand("stats", "print the numbers: edges, density, attention FLOPs, hops");
  common(stats);
  if (!parse_command_line(app, argc, argv, std::cout)) return 0;
  if (svg_option->count() > 0 && svg.empty()) svg = "-";  // `--svg` alone
  if (dot_option->count() > 0 && dot.empty()) dot = "-";
  if (draw->parsed() && svg.empty() && dot.empty()) topo::fail("draw: give --svg [FILE] and/or --dot [FILE]");
  if (svg == "-" && dot == "-") topo::fail("draw: --svg and --dot cannot both go to standard output");

  const topo::models::TopologySpec spec = topo::models::read_topology_file(file);
  const TopologyLayout layout = layout_topology(spec, n);
  const TopologyStats s = topology_stats(layout, heads);
  if (stats->parsed()) std::printf("%s", stats_text(layout, s).c_str());
  if (!svg.empty()) write_output(svg, topology_svg(layout, s));
  if (!dot.empty()) write_output(dot, topology_dot(layout));
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return topo::apps::run_tool("topo-topology", run, argc, argv); }
