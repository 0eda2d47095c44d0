#pragma once
// topo-topology's work: a topology file's graph for one sentence of n tokens, as a picture (SVG written by hand),
// as Graphviz DOT, and as numbers (edges, density, attention FLOPs against dense attention, the longest
// shortest path between tokens). docs/topologies.md says what each number means.
//
// The grid. Every node of the sentence's graph sits on one axis, type by type in spec.graph_types() order: tok
// first (its in_sequence nodes, e.g. [CLS], at positions 0..c-1, then the n tokens), then emb when a relation
// reads it, then the types of "nodes". A head group's picture is that axis squared: row = query (destination),
// column = key (source); each edge of the group's blocks fills one cell, coloured by the file relation that
// holds it (after the group's de-duplication, topology_graph.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "models/topology_transformer/topology_file.hpp"
#include "models/topology_transformer/topology_graph.hpp"

namespace topo::apps {

// The largest n topo-topology draws or counts (a picture of more is unreadable, and n^2 cells get large).
inline constexpr std::int64_t kMaxDrawTokens = 1024;

// One sentence's topology, built and laid out on the grid axis.
struct TopologyLayout {
  models::TopologySpec spec;
  std::int64_t tokens = 0;
  models::TopologyGraph built;             // build_topology(spec, {tokens})
  std::vector<std::string> axis_types;     // spec.graph_types()
  std::vector<std::int64_t> axis_offsets;  // [types + 1]: type t's node k sits at axis_offsets[t] + k
  std::int64_t side() const { return axis_offsets.back(); }  // n': nodes on the axis
  std::int64_t axis_index(const std::string& type, std::int64_t node) const;
};
// Throws topo::Error for tokens outside 1..kMaxDrawTokens and whatever build_topology throws.
TopologyLayout layout_topology(const models::TopologySpec& spec, std::int64_t tokens);

// One edge of a head group's blocks: key `src` of src_type -> query `dst` of dst_type (ids local to the type).
struct TopologyCell {
  int group = 0;
  int relation = 0;  // index into spec.relations
  std::string dst_type, src_type;
  std::int64_t dst = 0, src = 0;
  friend bool operator==(const TopologyCell&, const TopologyCell&) = default;
  friend auto operator<=>(const TopologyCell&, const TopologyCell&) = default;
};
// Every edge of every group's blocks, read from the blocks' CSR (padding relations hold none).
std::vector<TopologyCell> topology_cells(const TopologyLayout& layout);

struct GroupStats {
  std::vector<std::int64_t> heads;        // per layer (one entry when the group's heads do not vary)
  std::int64_t edges = 0;
  std::vector<std::int64_t> relation_edges;  // [spec.relations]: edges the group keeps of each (0 if not in it)
  double density = 0;                     // edges / side^2
};

struct TopologyStats {
  std::int64_t tokens = 0, side = 0, lead = 0;  // n, n' (grid side), in_sequence nodes on the tok axis
  std::int64_t heads = 0;                 // H, every group's heads together (per layer)
  std::int64_t layers = 1;                // per-layer head lists' length (1 without any)
  std::vector<GroupStats> groups;
  std::int64_t edges = 0;                 // all groups
  // Per layer: sum over groups of heads * edges (the edge-heads attention scores and weights are computed
  // for), and its ratio to dense attention over the grid (H * side^2) and over the n tokens (H * n^2).
  std::vector<std::int64_t> edge_heads;
  std::vector<double> flops_vs_dense_grid, flops_vs_dense_tokens;
  // The longest shortest path from one tok node to another over every group's edges (key -> query), in hops;
  // -1 when some tok node never reaches another: then from_node never reaches to_node.
  std::int64_t hops = 0;
  std::int64_t from_node = 0, to_node = 0;  // tok positions: the pair that attains `hops` (or is unreachable)
};
// heads: H for a file without head_groups (its one group has every head); for a file with head_groups,
// 0 takes the groups' own sum, anything else must match it (check_heads).
TopologyStats topology_stats(const TopologyLayout& layout, std::int64_t heads = 0);

// The shortest path lengths from tok node `from` to every node of the axis over every group's edges (-1:
// unreachable), by breadth-first search. Exposed for tests.
std::vector<std::int64_t> hops_from(const TopologyLayout& layout, std::int64_t from);

// What `topo-topology stats` prints.
std::string stats_text(const TopologyLayout& layout, const TopologyStats& stats);
// The picture: one grid per head group with its numbers, and a legend of the file relations' colours. Every
// edge cell is <rect class="edge" data-group=.. data-relation="name" data-dst-type=.. data-dst=..
// data-src-type=.. data-src=.. .../>.
std::string topology_svg(const TopologyLayout& layout, const TopologyStats& stats);
// Graphviz DOT of the built graph (graph/dot.hpp), with a comment per file relation and group edge count.
std::string topology_dot(const TopologyLayout& layout);

}  // namespace topo::apps
