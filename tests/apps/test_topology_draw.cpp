// topo-topology (apps/topology/draw.*): the picture's cells, read back from the SVG, are exactly the built
// graph's edges for every shipped topology file; the numbers of small patterns are the ones counted by hand;
// bad sentence lengths are errors; the DOT output names every relation.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "apps/topology/draw.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::apps;
using topo::testing::error_of;
using topo::testing::write_temp_file;

namespace {

std::vector<std::string> shipped_files() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TOPO_SOURCE_DIR) + "/configs/topologies"))
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// (group, relation name, dst type, dst, src type, src)
using Cell = std::tuple<int, std::string, std::string, std::int64_t, std::string, std::int64_t>;

// The edges of the built graph's relations (not its blocks), padding relations left out.
std::vector<Cell> graph_cells(const TopologyLayout& layout) {
  std::vector<Cell> cells;
  const models::TopologyGraph& t = layout.built;
  for (int r = 0; r < t.graph.num_relations(); ++r) {
    const models::TopologyGraph::Origin& o = t.origins[static_cast<std::size_t>(r)];
    if (o.relation < 0) {
      CHECK(t.graph.num_edges(r) == 0);
      continue;
    }
    const CanonicalEType& et = t.graph.canonical_etype(r);
    for (const auto& [s, d] : t.graph.edges(r).pairs())
      cells.emplace_back(o.group, layout.spec.relations[static_cast<std::size_t>(o.relation)].name, et.dst_type, d,
                         et.src_type, s);
  }
  std::sort(cells.begin(), cells.end());
  return cells;
}

struct SvgCell {
  Cell cell;
  std::int64_t x, y, size;
};

std::vector<SvgCell> svg_cells(const std::string& svg) {
  static const std::regex rect(
      "<rect class=\"edge\" data-group=\"(\\d+)\" data-relation=\"([^\"]*)\" data-dst-type=\"([^\"]*)\" "
      "data-dst=\"(\\d+)\" data-src-type=\"([^\"]*)\" data-src=\"(\\d+)\" x=\"(\\d+)\" y=\"(\\d+)\" "
      "width=\"(\\d+)\" height=\"(\\d+)\"");
  std::vector<SvgCell> cells;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    CHECK(m[9] == m[10]);
    cells.push_back({{std::stoi(m[1]), m[2], m[3], std::stoll(m[4]), m[5], std::stoll(m[6])},
                     std::stoll(m[7]),
                     std::stoll(m[8]),
                     std::stoll(m[9])});
  }
  return cells;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TopologyLayout layout_of(const std::string& json, std::int64_t n) {
  return layout_topology(models::read_topology_file(write_temp_file("draw_topology.json", json)), n);
}

std::string one_relation(const std::string& builder_fields) {
  return R"({"relations": [{"name": "r", "src": "tok", "dst": "tok", )" + builder_fields + "}]}";
}

}  // namespace

TEST_CASE("topo-topology: the SVG's cells are exactly the built graph's edges, per group and relation") {
  const std::vector<std::string> files = shipped_files();
  REQUIRE(files.size() >= 6);
  for (const std::string& file : files)
    for (std::int64_t n : {1, 2, 7, 64}) {
      CAPTURE(file);
      CAPTURE(n);
      const TopologyLayout layout = layout_topology(models::read_topology_file(file), n);
      const TopologyStats stats = topology_stats(layout);
      const std::string svg = topology_svg(layout, stats);
      const std::vector<SvgCell> drawn = svg_cells(svg);
      std::vector<Cell> cells;
      for (const SvgCell& c : drawn) cells.push_back(c.cell);
      std::sort(cells.begin(), cells.end());
      const std::vector<Cell> expected = graph_cells(layout);
      REQUIRE(!expected.empty());
      CHECK(cells == expected);
      CHECK(stats.edges == static_cast<std::int64_t>(expected.size()));
      // Each relation's count in the stats is its cells' count.
      std::map<std::pair<int, std::string>, std::int64_t> per_relation;
      for (const Cell& c : expected) ++per_relation[{std::get<0>(c), std::get<1>(c)}];
      for (std::size_t k = 0; k < stats.groups.size(); ++k)
        for (std::size_t r = 0; r < layout.spec.relations.size(); ++r) {
          const auto it = per_relation.find({static_cast<int>(k), layout.spec.relations[r].name});
          CHECK(stats.groups[k].relation_edges[r] == (it == per_relation.end() ? 0 : it->second));
        }
      // Geometry: within a group's grid, column = the key's place on the axis, row = the query's.
      std::map<int, std::set<std::pair<std::int64_t, std::int64_t>>> origins;
      for (const SvgCell& c : drawn) {
        const auto& [group, relation, dst_type, dst, src_type, src] = c.cell;
        origins[group].insert({c.x - c.size * layout.axis_index(src_type, src), c.y - c.size * layout.axis_index(dst_type, dst)});
      }
      for (const auto& [group, corners] : origins) CHECK(corners.size() == 1);
      // The legend names every file relation.
      for (const models::TopologyRelation& r : layout.spec.relations)
        CHECK(count_of(svg, "class=\"legend\" data-relation=\"" + r.name + "\"") == 1);
    }
}

TEST_CASE("topo-topology: a window of radius 1 at n = 5 has 13 edges and a path of 4 hops") {
  const TopologyLayout layout = layout_of(one_relation(R"("builder": "window", "radius": 1)"), 5);
  const TopologyStats s = topology_stats(layout);
  CHECK(s.side == 5);
  CHECK(s.edges == 13);
  CHECK(s.groups.at(0).density == doctest::Approx(13.0 / 25.0));
  CHECK(s.flops_vs_dense_grid.at(0) == doctest::Approx(13.0 / 25.0));
  CHECK(s.flops_vs_dense_tokens.at(0) == doctest::Approx(13.0 / 25.0));
  CHECK(s.hops == 4);
  CHECK(s.from_node == 0);
  CHECK(s.to_node == 4);
  const std::vector<std::int64_t> d = hops_from(layout, 2);
  CHECK(d == std::vector<std::int64_t>{2, 1, 0, 1, 2});
}

TEST_CASE("topo-topology: a ring of 8 has 16 edges and a path of 4 hops; a full relation 1 hop") {
  const TopologyStats ring = topology_stats(layout_of(one_relation(R"("builder": "ring")"), 8));
  CHECK(ring.edges == 16);
  CHECK(ring.hops == 4);
  const TopologyStats full = topology_stats(layout_of(one_relation(R"("builder": "full")"), 6));
  CHECK(full.edges == 36);
  CHECK(full.groups.at(0).density == doctest::Approx(1.0));
  CHECK(full.hops == 1);
}

TEST_CASE("topo-topology: self only never reaches another token") {
  const TopologyStats s = topology_stats(layout_of(one_relation(R"("builder": "self")"), 3));
  CHECK(s.edges == 3);
  CHECK(s.hops == -1);
  CHECK(s.from_node == 0);
  CHECK(s.to_node == 1);
  CHECK(stats_text(layout_of(one_relation(R"("builder": "self")"), 3), s).find("unreachable: tok 0 never reaches tok 1") !=
        std::string::npos);
}

TEST_CASE("topo-topology: a group with 0 heads in every layer is no hop") {
  // The full group is switched off (0 heads): its edges stay in the picture and the counts, but no head moves
  // information over them, so tokens 0 and 2 are 2 window hops apart, not 1 full hop.
  const std::string off = R"({"relations": [{"name": "w", "src": "tok", "dst": "tok", "builder": "window", "radius": 1},
      {"name": "f", "src": "tok", "dst": "tok", "builder": "full"}],
      "head_groups": [{"heads": 4, "relations": ["w"]}, {"heads": 0, "relations": ["f"]}]})";
  const TopologyStats s = topology_stats(layout_of(off, 5));
  CHECK(s.edges == 13 + 25);
  CHECK(s.hops == 4);
  // With heads in some layer, the group's edges are hops.
  const std::string later = R"({"relations": [{"name": "w", "src": "tok", "dst": "tok", "builder": "window", "radius": 1},
      {"name": "f", "src": "tok", "dst": "tok", "builder": "full"}],
      "head_groups": [{"heads": [4, 2], "relations": ["w"]}, {"heads": [0, 2], "relations": ["f"]}]})";
  CHECK(topology_stats(layout_of(later, 5)).hops == 1);
}

TEST_CASE("topo-topology: custom_topology's pattern, counted by hand") {
  const models::TopologySpec spec =
      models::read_topology_file(std::string(TOPO_SOURCE_DIR) + "/configs/topologies/custom_topology.json");
  // n = 5: window |i-j| <= 1 holds 13 pairs; dilated |i-j| = 3 adds (0,3) (3,0) (1,4) (4,1); global position 0
  // adds what is left of row 0 and column 0: (0,2) (0,4) (2,0) (4,0).
  const TopologyStats s5 = topology_stats(layout_topology(spec, 5));
  CHECK(s5.edges == 21);
  CHECK(s5.groups.at(0).relation_edges == std::vector<std::int64_t>{13, 4, 4});
  CHECK(s5.hops == 2);  // 1 -> 3 is neither a neighbour nor 3 apart: 1 -> 0 -> 3
  CHECK(topology_stats(layout_topology(spec, 3)).hops == 1);  // every pair is a neighbour or involves token 0
  CHECK(topology_stats(layout_topology(spec, 1)).hops == 0);
  CHECK(topology_stats(layout_topology(spec, 64)).hops == 2);  // through token 0
}

TEST_CASE("topo-topology: Star's grid holds tok, emb and relay; paths go through the relay") {
  const TopologyLayout layout =
      layout_topology(models::read_topology_file(std::string(TOPO_SOURCE_DIR) + "/configs/topologies/star.json"), 4);
  CHECK(layout.axis_types == std::vector<std::string>{"tok", "emb", "relay"});
  const TopologyStats s = topology_stats(layout);
  CHECK(s.side == 9);
  // tok: self 4, token 4, ring 8, from_relay 4; relay: to_relay 4, relay_self 1.
  CHECK(s.edges == 25);
  CHECK(s.hops == 2);
  CHECK(s.flops_vs_dense_tokens.at(0) == doctest::Approx(25.0 / 16.0));
}

TEST_CASE("topo-topology: FLOPs weight each group's edges by its heads") {
  const std::string file = R"({"relations": [{"name": "me", "src": "tok", "dst": "tok", "builder": "self"},
                                             {"name": "all", "src": "tok", "dst": "tok", "builder": "full"}],
                               "head_groups": [{"heads": 1, "relations": ["me"]}, {"heads": 3, "relations": ["all"]}]})";
  const TopologyLayout layout = layout_of(file, 4);
  const TopologyStats s = topology_stats(layout);
  CHECK(s.heads == 4);
  CHECK(s.edges == 4 + 16);
  CHECK(s.edge_heads.at(0) == 1 * 4 + 3 * 16);
  CHECK(s.flops_vs_dense_tokens.at(0) == doctest::Approx(52.0 / 64.0));
  CHECK(error_of([&] { (void)topology_stats(layout, 5); }).find("sum to 4") != std::string::npos);
}

TEST_CASE("topo-topology: n = 0 and n > 1024 are errors") {
  const models::TopologySpec spec =
      models::read_topology_file(std::string(TOPO_SOURCE_DIR) + "/configs/topologies/bigbird.json");
  CHECK(error_of([&] { (void)layout_topology(spec, 0); }).find("--n must be between 1 and 1024 tokens, got 0") !=
        std::string::npos);
  CHECK(error_of([&] { (void)layout_topology(spec, 1025); }).find("got 1025") != std::string::npos);
  CHECK(error_of([&] { (void)layout_topology(spec, 1024); }).empty());
}

TEST_CASE("topo-topology: the DOT output names every relation and holds every edge") {
  for (const std::string& file : shipped_files()) {
    CAPTURE(file);
    const TopologyLayout layout = layout_topology(models::read_topology_file(file), 64);
    const std::string dot = topology_dot(layout);
    CHECK(dot.starts_with("digraph"));
    for (const models::TopologyRelation& r : layout.spec.relations)
      CHECK(count_of(dot, "// relation " + r.name + " ") >= 1);
    CHECK(static_cast<std::int64_t>(count_of(dot, "[label=\"")) ==
          layout.side() + topology_stats(layout).edges);  // a label per node and per edge
  }
}

TEST_CASE("topo-topology's command line: draw to a file or standard output, stats, one-line errors") {
  const std::string program =
      (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "topo-topology").string();
  const std::string file = std::string(TOPO_SOURCE_DIR) + "/configs/topologies/bigbird.json";
  const auto dir = topo::testing::fresh_temp_dir("topology_cli");
  auto run = [&](const std::string& args, int* status) {
    const std::string out = (dir / "out.txt").string();
    *status = std::system((program + " " + args + " > " + out + " 2>&1").c_str());
    std::ifstream in(out);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  int status = 0;
  CHECK(run("draw " + file + " --n 8 --dot", &status).find("digraph topology {") != std::string::npos);
  CHECK(status == 0);
  CHECK(run("draw " + file + " --n 8 --svg", &status).find("<svg ") != std::string::npos);
  CHECK(run("draw " + file + " --n 8 --svg " + (dir / "b.svg").string(), &status).find("-> ") != std::string::npos);
  CHECK(std::filesystem::file_size(dir / "b.svg") > 1000);
  CHECK(run("stats " + file + " --n 8", &status).find("edges, all groups:") != std::string::npos);
  const std::string bad = topo::testing::write_temp_file(
      "cli_bad.json", R"({"relations": [{"name": "a", "src": "tok", "dst": "tok", "builder": "window", "radius": -1}]})");
  const std::string message = run("draw " + bad + " --n 8 --dot", &status);
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(message == "topo-topology: " + bad + ": relations[0].radius: must be >= 0, got -1\n");
  CHECK(run("draw " + file + " --n 8", &status).find("give --svg [FILE] and/or --dot [FILE]") != std::string::npos);
  std::filesystem::remove_all(dir);
}
