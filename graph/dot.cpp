#include "graph/dot.hpp"

#include <array>

namespace topo {
namespace {

constexpr std::array<const char*, 6> kShapes = {"ellipse", "box", "diamond", "hexagon", "octagon", "triangle"};
constexpr std::array<const char*, 8> kColors = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072",
                                                "#80b1d3", "#fdb462", "#b3de69", "#fccde5"};
constexpr std::array<const char*, 6> kEdgeColors = {"#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02"};

}  // namespace

std::string to_dot(const HeteroGraph& g, const DotOptions& options) {
  TOPO_CHECK(options.max_nodes <= 0 || g.total_num_nodes() <= options.max_nodes,
             "to_dot: the graph has {} nodes, more than max_nodes = {}", g.total_num_nodes(), options.max_nodes);
  std::string out = "digraph topology {\n";
  for (int t = 0; t < g.num_node_types(); ++t) {
    const std::string& name = g.node_types()[t];
    for (std::int64_t i = 0; i < g.num_nodes(t); ++i)
      out += fmt::format("  \"{0}:{1}\" [label=\"{0} {1}\", shape={2}, style=filled, fillcolor=\"{3}\"];\n", name, i,
                         kShapes[t % kShapes.size()], kColors[t % kColors.size()]);
  }
  for (int r = 0; r < g.num_relations(); ++r) {
    const CanonicalEType& et = g.canonical_etype(r);
    for (const auto& [s, d] : g.edges(r).pairs())
      out += fmt::format("  \"{}:{}\" -> \"{}:{}\" [label=\"{}\", color=\"{}\"];\n", et.src_type, s, et.dst_type, d,
                         et.etype, kEdgeColors[r % kEdgeColors.size()]);
  }
  out += "}\n";
  return out;
}

std::string schema_to_dot(const HeteroGraph& g) {
  std::string out = "digraph schema {\n";
  for (int t = 0; t < g.num_node_types(); ++t)
    out += fmt::format("  \"{0}\" [label=\"{0} ({1})\", shape={2}, style=filled, fillcolor=\"{3}\"];\n",
                       g.node_types()[t], g.num_nodes(t), kShapes[t % kShapes.size()], kColors[t % kColors.size()]);
  for (int r = 0; r < g.num_relations(); ++r) {
    const CanonicalEType& et = g.canonical_etype(r);
    out += fmt::format("  \"{}\" -> \"{}\" [label=\"{} ({})\", color=\"{}\"];\n", et.src_type, et.dst_type, et.etype,
                       g.num_edges(r), kEdgeColors[r % kEdgeColors.size()]);
  }
  out += "}\n";
  return out;
}

}  // namespace topo
