#include "apps/topology/draw.hpp"

#include <algorithm>
#include <array>
#include <deque>

#include "graph/dot.hpp"
#include "kernels/error.hpp"

namespace topo::apps {

namespace {

std::vector<std::int64_t> host_ids(const Tensor& t) {
  if (!t.defined()) return {};
  if (t.dtype() == DType::I64) return t.to_vector<std::int64_t>();
  const auto v = t.to_vector<std::int32_t>();
  return {v.begin(), v.end()};
}

// The in_sequence types leading the tok axis, with their node counts, in file order.
std::vector<std::pair<std::string, std::int64_t>> leads(const models::TopologySpec& spec) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (const models::TopologyNodeType& t : spec.node_types)
    if (t.in_sequence) out.emplace_back(t.name, t.count);
  return out;
}

bool has_own_head_groups(const models::TopologySpec& spec) {
  return !(spec.head_groups.size() == 1 && spec.head_groups[0].heads.empty());
}

// Out-neighbours on the axis over every group's edges (key -> query).
std::vector<std::vector<std::int64_t>> adjacency(const TopologyLayout& layout) {
  std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(layout.side()));
  // A group with 0 heads in every layer (a group switched off, e.g. to ablate it) attends nowhere: its edges
  // carry nothing, so they are no hop. Groups with heads in some layer count (the path over every layer).
  std::vector<bool> attends;
  for (const models::TopologyHeadGroup& g : layout.spec.head_groups) attends.push_back(g.attends());
  for (const TopologyCell& c : topology_cells(layout))
    if (attends[static_cast<std::size_t>(c.group)])
      out[static_cast<std::size_t>(layout.axis_index(c.src_type, c.src))].push_back(
          layout.axis_index(c.dst_type, c.dst));
  for (auto& next : out) {
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
  }
  return out;
}

std::vector<std::int64_t> bfs(const std::vector<std::vector<std::int64_t>>& next, std::int64_t from) {
  std::vector<std::int64_t> dist(next.size(), -1);
  std::deque<std::int64_t> queue{from};
  dist[static_cast<std::size_t>(from)] = 0;
  while (!queue.empty()) {
    const std::int64_t u = queue.front();
    queue.pop_front();
    for (std::int64_t v : next[static_cast<std::size_t>(u)])
      if (dist[static_cast<std::size_t>(v)] < 0) {
        dist[static_cast<std::size_t>(v)] = dist[static_cast<std::size_t>(u)] + 1;
        queue.push_back(v);
      }
  }
  return dist;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// Tableau 10 and two more: one colour per file relation.
constexpr std::array<const char*, 12> kRelationColors = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                                         "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                                                         "#9c755f", "#bab0ac", "#17becf", "#8c564b"};
const char* relation_color(int relation) {
  return kRelationColors[static_cast<std::size_t>(relation) % kRelationColors.size()];
}

std::string heads_text(const GroupStats& g) {
  if (g.heads.size() == 1) return fmt::format("{} head{}", g.heads[0], g.heads[0] == 1 ? "" : "s");
  return fmt::format("heads {} in layers 1..{}", fmt::join(g.heads, ", "), g.heads.size());
}

std::string group_edges_text(const models::TopologySpec& spec, int k, const GroupStats& g) {
  std::vector<std::string> parts;
  for (int r : spec.head_groups[static_cast<std::size_t>(k)].relations)
    parts.push_back(fmt::format("{} {}", spec.relations[static_cast<std::size_t>(r)].name,
                                g.relation_edges[static_cast<std::size_t>(r)]));
  return fmt::format("{} edges ({})", g.edges, fmt::join(parts, ", "));
}

std::string group_relations_text(const models::TopologySpec& spec, int k) {
  std::vector<std::string> names;
  for (int r : spec.head_groups[static_cast<std::size_t>(k)].relations)
    names.push_back(spec.relations[static_cast<std::size_t>(r)].name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string hops_text(const TopologyStats& s) {
  if (s.hops < 0)
    return fmt::format("unreachable: tok {} never reaches tok {}", s.from_node, s.to_node);
  if (s.lead + s.tokens < 2) return "0 hops (a single tok node)";
  return fmt::format("{} hop{} (tok {} -> tok {})", s.hops, s.hops == 1 ? "" : "s", s.from_node, s.to_node);
}

std::string ratio(double x) { return fmt::format("{:.4f}", x); }

}  // namespace

std::int64_t TopologyLayout::axis_index(const std::string& type, std::int64_t node) const {
  const auto it = std::find(axis_types.begin(), axis_types.end(), type);
  TOPO_CHECK(it != axis_types.end(), "topology layout: no node type '{}'", type);
  const auto t = static_cast<std::size_t>(it - axis_types.begin());
  TOPO_CHECK(node >= 0 && axis_offsets[t] + node < axis_offsets[t + 1], "topology layout: no node {} of '{}'", node,
             type);
  return axis_offsets[t] + node;
}

TopologyLayout layout_topology(const models::TopologySpec& spec, std::int64_t tokens) {
  TOPO_CHECK(tokens >= 1 && tokens <= kMaxDrawTokens, "--n must be between 1 and {} tokens, got {}{}", kMaxDrawTokens,
             tokens, tokens > kMaxDrawTokens ? " (a grid of more is unreadable, and its SVG grows as n^2)" : "");
  TopologyLayout layout;
  layout.spec = spec;
  layout.tokens = tokens;
  layout.built = models::build_topology(spec, {tokens});
  layout.axis_types = layout.built.graph.node_types();
  layout.axis_offsets = {0};
  for (const std::string& type : layout.axis_types)
    layout.axis_offsets.push_back(layout.axis_offsets.back() + layout.built.graph.num_nodes(type));
  return layout;
}

std::vector<TopologyCell> topology_cells(const TopologyLayout& layout) {
  std::vector<TopologyCell> cells;
  const models::TopologyGraph& t = layout.built;
  for (std::size_t d = 0; d < t.blocks.size(); ++d)
    for (std::size_t k = 0; k < t.blocks[d].size(); ++k) {
      const Block& block = t.blocks[d][k];
      const std::vector<std::int64_t> indptr = host_ids(block.in.indptr), indices = host_ids(block.in.indices),
                                      eids = host_ids(block.in.eids);
      for (std::int64_t row = 0; row < block.num_dst; ++row)
        for (std::int64_t j = indptr[static_cast<std::size_t>(row)]; j < indptr[static_cast<std::size_t>(row) + 1]; ++j) {
          const int relation = block.relation_of_edge(eids[static_cast<std::size_t>(j)]);
          const models::TopologyGraph::Origin& origin = t.origins[static_cast<std::size_t>(relation)];
          TOPO_CHECK(origin.relation >= 0 && origin.group == static_cast<int>(k),
                     "topology cells: block edge of graph relation {} (group {}, file relation {}) in group {}'s "
                     "block",
                     relation, origin.group, origin.relation, k);
          const std::int64_t id = indices[static_cast<std::size_t>(j)];
          std::size_t s = 0;
          while (s + 1 < block.src_types.size() && id >= block.src_offsets[s + 1]) ++s;
          cells.push_back({static_cast<int>(k), origin.relation, block.dst_type, block.src_types[s], row,
                           id - block.src_offsets[s]});
        }
    }
  return cells;
}

std::vector<std::int64_t> hops_from(const TopologyLayout& layout, std::int64_t from) {
  TOPO_CHECK(from >= 0 && from < layout.axis_offsets[1], "hops_from: no tok node {}", from);
  return bfs(adjacency(layout), from);
}

TopologyStats topology_stats(const TopologyLayout& layout, std::int64_t heads) {
  const models::TopologySpec& spec = layout.spec;
  TopologyStats s;
  s.tokens = layout.tokens;
  s.side = layout.side();
  s.lead = spec.lead_count();
  for (const models::TopologyHeadGroup& g : spec.head_groups)
    if (g.per_layer) s.layers = std::max<std::int64_t>(s.layers, static_cast<std::int64_t>(g.heads.size()));
  TOPO_CHECK(heads >= 0, "--heads must be >= 1, got {}", heads);
  if (!has_own_head_groups(spec)) {
    s.heads = heads == 0 ? 1 : heads;
  } else {
    for (const models::TopologyHeadGroup& g : spec.head_groups) s.heads += g.heads_in_layer(0, 0);
    if (heads != 0) s.heads = heads;
    spec.check_heads(s.heads, s.layers);  // the groups' sums agree in every layer (and with --heads)
  }

  s.groups.resize(spec.head_groups.size());
  for (std::size_t k = 0; k < s.groups.size(); ++k) {
    GroupStats& g = s.groups[k];
    const models::TopologyHeadGroup& hg = spec.head_groups[k];
    if (hg.per_layer)
      g.heads = hg.heads;
    else
      g.heads = {hg.heads_in_layer(0, s.heads)};
    g.relation_edges.assign(spec.relations.size(), 0);
  }
  const std::vector<TopologyCell> cells = topology_cells(layout);
  for (const TopologyCell& c : cells) {
    GroupStats& g = s.groups[static_cast<std::size_t>(c.group)];
    ++g.edges;
    ++g.relation_edges[static_cast<std::size_t>(c.relation)];
  }
  const double grid = static_cast<double>(s.side) * static_cast<double>(s.side);
  for (GroupStats& g : s.groups) {
    g.density = static_cast<double>(g.edges) / grid;
    s.edges += g.edges;
  }
  for (std::int64_t l = 0; l < s.layers; ++l) {
    std::int64_t eh = 0;
    for (std::size_t k = 0; k < s.groups.size(); ++k)
      eh += spec.head_groups[k].heads_in_layer(static_cast<std::size_t>(l), s.heads) * s.groups[k].edges;
    s.edge_heads.push_back(eh);
    const double h = static_cast<double>(s.heads), n = static_cast<double>(s.tokens);
    s.flops_vs_dense_grid.push_back(static_cast<double>(eh) / (h * grid));
    s.flops_vs_dense_tokens.push_back(static_cast<double>(eh) / (h * n * n));
  }

  // Longest shortest path between two distinct tok nodes; the first unreachable pair (by source, then
  // destination) ends the search.
  const auto next = adjacency(layout);
  const std::int64_t tok = layout.axis_offsets[1];
  for (std::int64_t from = 0; from < tok && s.hops >= 0; ++from) {
    const std::vector<std::int64_t> dist = bfs(next, from);
    for (std::int64_t to = 0; to < tok; ++to) {
      if (to == from) continue;
      const std::int64_t d = dist[static_cast<std::size_t>(to)];
      if (d < 0) {
        s.hops = -1, s.from_node = from, s.to_node = to;
        break;
      }
      if (d > s.hops) s.hops = d, s.from_node = from, s.to_node = to;
    }
  }
  return s;
}

std::string stats_text(const TopologyLayout& layout, const TopologyStats& s) {
  const models::TopologySpec& spec = layout.spec;
  std::string out = fmt::format("{}: one sentence of {} token{}\n", spec.source, s.tokens, s.tokens == 1 ? "" : "s");
  std::vector<std::string> types;
  for (std::size_t t = 0; t < layout.axis_types.size(); ++t) {
    const std::int64_t count = layout.axis_offsets[t + 1] - layout.axis_offsets[t];
    std::string text = fmt::format("{} {}", layout.axis_types[t], count);
    if (layout.axis_types[t] == models::kTokenType && s.lead > 0) {
      std::vector<std::string> parts;
      for (const auto& [name, c] : leads(spec)) parts.push_back(fmt::format("{} {}", name, c));
      text += fmt::format(" ({} + {} tokens)", fmt::join(parts, " + "), s.tokens);
    }
    types.push_back(text);
  }
  out += fmt::format("grid: {0} x {0} nodes (n' = {0}: {1})\n", s.side, fmt::join(types, ", "));
  out += fmt::format("heads: H = {}{}\n", s.heads,
                     has_own_head_groups(spec) ? " (the head groups' sum)" : " (one group with every head; --heads H)");
  for (std::size_t k = 0; k < s.groups.size(); ++k) {
    const GroupStats& g = s.groups[k];
    out += fmt::format("group {}: {}; {}\n", k, group_relations_text(spec, static_cast<int>(k)), heads_text(g));
    out += fmt::format("  {}\n", group_edges_text(spec, static_cast<int>(k), g));
    out += fmt::format("  density: {} (edges / n'^2 = {} / {}^2)\n", ratio(g.density), g.edges, s.side);
  }
  out += fmt::format("edges, all groups: {}\n", s.edges);
  out += "attention FLOPs per layer, against dense attention at this n (4 * d_head FLOPs per edge and head: "
         "q.k and the weighted sum of v; projections, softmax and feed-forward not counted):\n";
  for (std::int64_t l = 0; l < s.layers; ++l) {
    const auto i = static_cast<std::size_t>(l);
    const std::string indent = s.layers > 1 ? "    " : "  ";
    if (s.layers > 1) out += fmt::format("  layer {}:\n", l + 1);
    out += fmt::format("{}edge-heads (sum over groups of heads * edges): {}\n", indent, s.edge_heads[i]);
    out += fmt::format("{}against dense over the grid (H * n'^2 = {}): {}\n", indent, s.heads * s.side * s.side,
                       ratio(s.flops_vs_dense_grid[i]));
    out += fmt::format("{}against dense over the tokens (H * n^2 = {}): {}\n", indent, s.heads * s.tokens * s.tokens,
                       ratio(s.flops_vs_dense_tokens[i]));
  }
  out += fmt::format("longest shortest path between tok nodes (key -> query, every group, through any node type): {}\n",
                     hops_text(s));
  return out;
}

std::string topology_svg(const TopologyLayout& layout, const TopologyStats& s) {
  const models::TopologySpec& spec = layout.spec;
  const std::int64_t side = layout.side();
  // A grid of about 1100 px: cells of 16 px (n' <= 68) down to 2 px (n' <= 550), 1 px beyond.
  const std::int64_t cell = std::clamp<std::int64_t>(1100 / side, 1, 16);
  const std::int64_t grid = side * cell;
  const std::int64_t left = 90, line = 16, font = 12;
  std::int64_t width = left + grid + 30;  // widened to the longest line of text below
  // Tick every `step` nodes, step*cell >= 24 px so the numbers do not overlap.
  std::int64_t step = 1;
  for (std::int64_t candidate : {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000})
    if (candidate * cell >= 24) {
      step = candidate;
      break;
    }
  // Section boundaries on the axis: the tok axis's leads apart, then each type.
  struct Section {
    std::string name;
    std::int64_t first, end, local_first;  // axis range [first, end), local id of `first`
  };
  std::vector<Section> sections;
  for (std::size_t t = 0; t < layout.axis_types.size(); ++t) {
    const std::int64_t a = layout.axis_offsets[t], b = layout.axis_offsets[t + 1];
    if (layout.axis_types[t] == models::kTokenType) {
      std::int64_t p = a;
      for (const auto& [name, c] : leads(spec)) {
        sections.push_back({name, p, p + c, p - a});
        p += c;
      }
      sections.push_back({"tok", p, b, p - a});
    } else {
      sections.push_back({layout.axis_types[t], a, b, 0});
    }
  }

  std::string body;
  std::int64_t y = 24;
  auto text = [&](std::int64_t x, std::int64_t yy, const std::string& t, const std::string& extra = "") {
    width = std::max<std::int64_t>(width, x + static_cast<std::int64_t>(t.size()) * 7 + 10);
    body += fmt::format("<text x=\"{}\" y=\"{}\"{}>{}</text>\n", x, yy, extra, xml_escape(t));
  };
  text(10, y, fmt::format("{}: one sentence of {} token{}", spec.source, s.tokens, s.tokens == 1 ? "" : "s"),
       " font-weight=\"bold\"");
  y += line;
  text(10, y, "rows: queries (destinations); columns: keys (sources); a filled cell is an edge key -> query");
  y += line;
  text(10, y, fmt::format("edges, all groups: {}; H = {} head{}; longest shortest path between tok nodes: {}", s.edges,
                          s.heads, s.heads == 1 ? "" : "s", hops_text(s)));
  y += line;
  for (std::int64_t l = 0; l < s.layers; ++l) {
    const auto i = static_cast<std::size_t>(l);
    text(10, y, fmt::format("attention FLOPs{}: {} of dense over the {}x{} grid, {} of dense over the {} tokens",
                            s.layers > 1 ? fmt::format(" (layer {})", l + 1) : "", ratio(s.flops_vs_dense_grid[i]),
                            side, side, ratio(s.flops_vs_dense_tokens[i]), s.tokens));
    y += line;
  }
  // Legend: one swatch per file relation.
  y += 4;
  std::int64_t x = 10;
  for (std::size_t r = 0; r < spec.relations.size(); ++r) {
    const models::TopologyRelation& rel = spec.relations[r];
    const std::string label = fmt::format("{} ({} -> {}, {})", rel.name, rel.src, rel.dst, models::builder_name(rel.builder));
    const auto w = static_cast<std::int64_t>(label.size()) * 7 + 30;
    if (x + w > std::max<std::int64_t>(width, 760) && x > 10) x = 10, y += line;
    body += fmt::format("<rect class=\"legend\" data-relation=\"{}\" x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" "
                        "fill=\"{}\"/>\n",
                        xml_escape(rel.name), x, y - 10, relation_color(static_cast<int>(r)));
    text(x + 16, y, label);
    x += w;
  }
  y += line + 8;

  const std::vector<TopologyCell> cells = topology_cells(layout);
  for (std::size_t k = 0; k < s.groups.size(); ++k) {
    const GroupStats& g = s.groups[k];
    const int group = static_cast<int>(k);
    text(10, y, fmt::format("group {}: {}; {}", k, group_relations_text(spec, group), heads_text(g)),
         " font-weight=\"bold\"");
    y += line;
    text(10, y, fmt::format("{}; density {} = {} / {}^2",
                            group_edges_text(spec, group, g), ratio(g.density), g.edges, side));
    y += line + 8;
    // Column section names, then tick numbers, then the grid.
    const std::int64_t top = y + 2 * line;
    for (const Section& sec : sections) {
      if (sec.end == sec.first) continue;
      const std::int64_t cx = left + (sec.first + sec.end) * cell / 2;
      text(cx, y + font, sec.name, " text-anchor=\"middle\" font-weight=\"bold\"");
      const std::int64_t cy = top + (sec.first + sec.end) * cell / 2;
      text(left - 36, cy + 4, sec.name, " text-anchor=\"end\" font-weight=\"bold\"");
      for (std::int64_t i = sec.first; i < sec.end; ++i) {
        const std::int64_t local = sec.local_first + (i - sec.first);
        // Every step-th node and the section's first; none so close to the next section's first that they touch.
        if (i != sec.first && (local % step != 0 || (sec.end - i) * cell < 20)) continue;
        text(left + i * cell + cell / 2, top - 4, std::to_string(local), " text-anchor=\"middle\" font-size=\"9\"");
        text(left - 4, top + i * cell + cell / 2 + 3, std::to_string(local), " text-anchor=\"end\" font-size=\"9\"");
      }
    }
    body += fmt::format("<g class=\"grid\" data-group=\"{}\">\n", k);
    body += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f4f4f4\" stroke=\"#999\"/>\n", left,
                        top, grid, grid);
    for (const TopologyCell& c : cells) {
      if (c.group != group) continue;
      const std::int64_t row = layout.axis_index(c.dst_type, c.dst), col = layout.axis_index(c.src_type, c.src);
      body += fmt::format(
          "<rect class=\"edge\" data-group=\"{}\" data-relation=\"{}\" data-dst-type=\"{}\" data-dst=\"{}\" "
          "data-src-type=\"{}\" data-src=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n",
          c.group, xml_escape(spec.relations[static_cast<std::size_t>(c.relation)].name), xml_escape(c.dst_type), c.dst,
          xml_escape(c.src_type), c.src, left + col * cell, top + row * cell, cell, cell, relation_color(c.relation));
    }
    // Section boundaries across the grid.
    for (const Section& sec : sections) {
      if (sec.first == 0) continue;
      const std::int64_t p = sec.first * cell;
      body += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#333\"/>\n", left + p, top,
                          top + grid);
      body += fmt::format("<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\" stroke=\"#333\"/>\n", top + p, left,
                          left + grid);
    }
    body += "</g>\n";
    y = top + grid + 2 * line;
  }

  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"{2}\" shape-rendering=\"crispEdges\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n{3}</svg>\n",
      width, y, font, body);
}

std::string topology_dot(const TopologyLayout& layout) {
  const models::TopologyGraph& t = layout.built;
  DotOptions options;
  options.max_nodes = 0;  // layout_topology already bounds n
  std::string dot = to_dot(t.graph, options);
  std::string header = fmt::format("  // {}: one sentence of {} tokens; edges key -> query\n", layout.spec.source,
                                   layout.tokens);
  for (int r = 0; r < t.graph.num_relations(); ++r) {
    const models::TopologyGraph::Origin& o = t.origins[static_cast<std::size_t>(r)];
    if (o.relation < 0) continue;
    const CanonicalEType& et = t.graph.canonical_etype(r);
    header += fmt::format("  // relation {} (head group {}, {} -> {}, graph edge type \"{}\"): {} edges\n",
                          layout.spec.relations[static_cast<std::size_t>(o.relation)].name, o.group, et.src_type,
                          et.dst_type, et.etype, t.graph.num_edges(r));
  }
  const std::size_t first_line = dot.find('\n') + 1;
  dot.insert(first_line, header);
  return dot;
}

}  // namespace topo::apps
