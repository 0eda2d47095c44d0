#include "models/topology_transformer/topology_graph.hpp"

#include <algorithm>
#include <map>

#include "graph/builders.hpp"
#include "graph/sampling.hpp"
#include "kernels/error.hpp"

namespace topo::models {

namespace {

// Where a type's nodes sit on its axis: node k at position first + k, on an axis `length` long.
struct Axis {
  std::int64_t first = 0, count = 0, length = 0;
};

Axis axis_of(const TopologySpec& spec, const std::string& type, std::int64_t tokens) {
  const std::int64_t lead = spec.lead_count();
  if (type == kTokenType) return {0, lead + tokens, lead + tokens};
  if (type == kEmbeddingType) return {lead, tokens, lead + tokens};
  const std::int64_t m = spec.nodes_in_sentence(type, tokens);
  return {0, m, m};
}

}  // namespace

std::int64_t window_radius(const TopologyRelation& r, std::int64_t tokens) {
  if (r.width > 0) return (r.width - 1) / 2;
  if (r.width_divisor > 0) return (builders::fractional_widths({tokens}, r.width_divisor)[0] - 1) / 2;
  return r.radius;
}

namespace {

// At most how many edges relation_edges gives `r` in a sentence of `tokens` tokens, without building them.
std::int64_t relation_edge_bound(const TopologySpec& spec, const TopologyRelation& r, std::int64_t tokens) {
  const Axis src = axis_of(spec, r.src, tokens), dst = axis_of(spec, r.dst, tokens);
  const std::int64_t s = src.count, d = dst.count;
  switch (r.builder) {
    case TopologyBuilderKind::Window: return d * std::min(2 * std::min(window_radius(r, tokens), s) + 1, s);
    case TopologyBuilderKind::Dilated: return d * std::min(2 * std::min(r.reach, s), s);
    case TopologyBuilderKind::Ring: return d * 2;
    case TopologyBuilderKind::Block: return d * std::min(r.size, s);
    case TopologyBuilderKind::Self: return d;
    case TopologyBuilderKind::Global: {
      // The listed positions read every source, the others read the listed ones.
      const std::int64_t listed =
          std::min<std::int64_t>(static_cast<std::int64_t>(r.positions.size()), std::max(src.length, dst.length));
      return listed * s + d * listed;
    }
    case TopologyBuilderKind::Random: return d * std::min(r.per_node, s);
    case TopologyBuilderKind::All:
    case TopologyBuilderKind::Full: return d * s;
  }
  return d * s;
}

}  // namespace

SentenceEdges relation_edges(const TopologySpec& spec, const TopologyRelation& r, std::int64_t tokens) {
  const Axis src = axis_of(spec, r.src, tokens), dst = axis_of(spec, r.dst, tokens);
  SentenceEdges out;
  std::vector<std::int64_t> globals;  // global: the listed positions, sorted once
  if (r.builder == TopologyBuilderKind::Global) {
    globals = r.positions;
    std::sort(globals.begin(), globals.end());
    globals.erase(std::unique(globals.begin(), globals.end()), globals.end());
  }
  // At least an edge per destination for most patterns: reserved up front, so a sentence no memory can hold
  // (a caller's length of 2^40) fails at once with std::bad_alloc instead of growing for minutes first.
  out.src.reserve(static_cast<std::size_t>(dst.count));
  out.dst.reserve(static_cast<std::size_t>(dst.count));
  // Source at position p (skipped when no source node sits there).
  auto add = [&](std::int64_t p, std::int64_t d) {
    const std::int64_t s = p - src.first;
    if (s >= 0 && s < src.count) out.src.push_back(s), out.dst.push_back(d);
  };
  for (std::int64_t d = 0; d < dst.count; ++d) {
    const std::int64_t q = dst.first + d;  // the destination's position
    switch (r.builder) {
      case TopologyBuilderKind::Window: {
        // Only the positions a source can hold: a radius past the sentence is the whole sentence.
        const std::int64_t radius = std::min(window_radius(r, tokens), src.length);
        for (std::int64_t p = std::max(q - radius, src.first); p <= std::min(q + radius, src.first + src.count - 1); ++p)
          add(p, d);
        break;
      }
      case TopologyBuilderKind::Dilated: {
        const std::int64_t reach = std::min(r.reach, src.length), step = std::min(r.dilation, src.length + 1);
        for (std::int64_t m = -reach; m <= reach; ++m)
          if (m != 0) add(q + m * step, d);
        break;
      }
      case TopologyBuilderKind::Ring: {
        // builders::ring's closed ring: the predecessor, then the successor (each once, never the node itself).
        const std::int64_t a = dst.length;
        if (a < 2) break;
        const std::int64_t prev = (q - 1 + a) % a, next = (q + 1) % a;
        add(prev, d);
        if (next != prev) add(next, d);
        break;
      }
      case TopologyBuilderKind::Block: {
        const std::int64_t size = std::min(r.size, src.length + 1), first = q / size * size;
        for (std::int64_t p = first; p < first + size; ++p) add(p, d);
        break;
      }
      case TopologyBuilderKind::Self:
        add(q, d);
        break;
      case TopologyBuilderKind::Global: {
        if (std::binary_search(globals.begin(), globals.end(), q)) {
          for (std::int64_t p = src.first; p < src.first + src.count; ++p) add(p, d);
        } else {
          for (std::int64_t p : globals) add(p, d);
        }
        break;
      }
      case TopologyBuilderKind::Random: {
        // The draws depend on (seed, sentence length, destination) only.
        const std::uint64_t state = splitmix64(splitmix64(splitmix64(r.seed) ^ static_cast<std::uint64_t>(tokens)) ^
                                               static_cast<std::uint64_t>(d));
        for (std::int64_t s : sample_distinct(src.count, r.per_node, state)) add(src.first + s, d);
        break;
      }
      case TopologyBuilderKind::All:
      case TopologyBuilderKind::Full:
        for (std::int64_t s = 0; s < src.count; ++s) add(src.first + s, d);
        break;
    }
  }
  return out;
}

namespace {

// The graph relations of one head group into one destination type, for a sentence of some length: each
// file relation's edges minus the pairs an earlier relation of the group holds.
struct GroupPlan {
  int group = 0;
  std::string dst;
  std::vector<int> relations;              // file relations, group order; -1: padding for a source type
  std::vector<std::string> src_types;      // per entry of `relations`
};

std::string relation_label(const TopologySpec& spec, const TopologyGraph::Origin& o, const std::string& src,
                           const std::string& dst) {
  const std::string name =
      o.relation >= 0 ? spec.relations[static_cast<std::size_t>(o.relation)].name : fmt::format("pad:{}:{}", src, dst);
  return spec.head_groups.size() == 1 ? name : fmt::format("g{}:{}", o.group, name);
}

std::string group_text(const TopologySpec& spec, int group) {
  const TopologyHeadGroup& g = spec.head_groups[static_cast<std::size_t>(group)];
  std::vector<std::string> names;
  for (int r : g.relations) names.push_back(spec.relations[static_cast<std::size_t>(r)].name);
  return fmt::format("{} ({})", g.path, fmt::join(names, ", "));
}

}  // namespace

TopologyGraph build_topology(const TopologySpec& spec, const std::vector<std::int64_t>& lengths, Device device) {
  TOPO_CHECK(!lengths.empty(), "{}: a topology for an empty batch", spec.source);
  for (std::size_t b = 0; b < lengths.size(); ++b)
    TOPO_CHECK(lengths[b] >= 1, "{}: sentence {} has length {} (must be >= 1)", spec.source, b, lengths[b]);
  TopologyGraph t;
  t.lengths = lengths;
  t.dst_types = spec.destination_types();
  const std::vector<std::string> types = spec.graph_types();

  // The plans: per destination type, per group, the relations in group order, then padding so that every
  // group's block into the type reads the same source types (GraphMultiHeadAttention's head groups share them).
  std::vector<GroupPlan> plans;
  for (const std::string& dst : t.dst_types) {
    std::vector<std::string> sources;
    for (const TopologyHeadGroup& g : spec.head_groups)
      for (int r : g.relations)
        if (spec.relations[static_cast<std::size_t>(r)].dst == dst) sources.push_back(spec.relations[static_cast<std::size_t>(r)].src);
    for (std::size_t k = 0; k < spec.head_groups.size(); ++k) {
      GroupPlan plan{static_cast<int>(k), dst, {}, {}};
      for (int r : spec.head_groups[k].relations)
        if (spec.relations[static_cast<std::size_t>(r)].dst == dst)
          plan.relations.push_back(r), plan.src_types.push_back(spec.relations[static_cast<std::size_t>(r)].src);
      for (const std::string& type : types)
        if (std::find(sources.begin(), sources.end(), type) != sources.end() &&
            std::find(plan.src_types.begin(), plan.src_types.end(), type) == plan.src_types.end())
          plan.relations.push_back(-1), plan.src_types.push_back(type);
      plans.push_back(std::move(plan));
    }
  }

  // Per distinct sentence length: every plan entry's de-duplicated edges, and the in-edge check.
  std::map<std::int64_t, std::vector<std::vector<SentenceEdges>>> by_length;  // [plan][entry]
  for (std::int64_t n : lengths) {
    if (by_length.count(n)) continue;
    // The sentence's size before any edge is built: what every group's relations can hold, with the relation
    // that holds the most named.
    std::int64_t bound = 0, largest = 0;
    int largest_relation = 0;
    for (const GroupPlan& plan : plans)
      for (int r : plan.relations) {
        if (r < 0) continue;
        const std::int64_t edges = relation_edge_bound(spec, spec.relations[static_cast<std::size_t>(r)], n);
        bound += edges;
        if (edges > largest) largest = edges, largest_relation = r;
      }
    if (bound > kMaxSentenceEdges) {
      const TopologyRelation& r = spec.relations[static_cast<std::size_t>(largest_relation)];
      // A file the band kernel can run has a path without a graph, which a run with --attention graph gave up.
      const bool band_kind = band_runs(spec);
      fail("{}: {}: a sentence of {} token{} would hold up to {} edges ({} of them '{}', {} {} -> {}); a sentence's "
           "graph holds at most {} (full attention over 2048 tokens): use fewer nodes or a sparser builder{}",
           spec.source, r.path, n, n == 1 ? "" : "s", bound, largest, r.name, builder_name(r.builder), r.src, r.dst,
           kMaxSentenceEdges,
           band_kind ? "; with --attention auto, head groups of one window or full relation over the tokens into "
                       "them run as a band and build no graph"
                     : "");
    }
    std::vector<std::vector<SentenceEdges>>& per_plan = by_length[n];
    for (const GroupPlan& plan : plans) {
      std::vector<SentenceEdges> entries;
      std::map<std::string, std::vector<std::int64_t>> held;  // per source type: dst * count + src, sorted
      std::vector<std::int64_t> in_degree(static_cast<std::size_t>(spec.nodes_in_sentence(plan.dst, n)), 0);
      for (std::size_t e = 0; e < plan.relations.size(); ++e) {
        if (plan.relations[e] < 0) {  // padding: no edges
          entries.emplace_back();
          continue;
        }
        SentenceEdges edges = relation_edges(spec, spec.relations[static_cast<std::size_t>(plan.relations[e])], n);
        // Only relations that share their source type with another of the plan take part in de-duplication:
        // the later ones drop what the earlier ones hold (keys dst * count + src, kept sorted).
        const std::string& type = plan.src_types[e];
        const bool shared_before = std::find(plan.src_types.begin(), plan.src_types.begin() + static_cast<std::ptrdiff_t>(e),
                                             type) != plan.src_types.begin() + static_cast<std::ptrdiff_t>(e);
        const bool shared_after = std::find(plan.src_types.begin() + static_cast<std::ptrdiff_t>(e) + 1,
                                            plan.src_types.end(), type) != plan.src_types.end();
        if (shared_before || shared_after) {
          const std::int64_t count = spec.nodes_in_sentence(type, n);
          std::vector<std::int64_t>& h = held[type];
          SentenceEdges kept;
          std::vector<std::int64_t> keys;
          for (std::size_t i = 0; i < edges.size(); ++i) {
            const std::int64_t key = edges.dst[i] * count + edges.src[i];
            if (!h.empty() && std::binary_search(h.begin(), h.end(), key)) continue;
            kept.src.push_back(edges.src[i]), kept.dst.push_back(edges.dst[i]), keys.push_back(key);
          }
          edges = std::move(kept);
          if (shared_after) {
            std::sort(keys.begin(), keys.end());  // by dst, then src (a ring lists a wrapped predecessor last)
            const std::size_t before = h.size();
            h.insert(h.end(), keys.begin(), keys.end());
            std::inplace_merge(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(before), h.end());
          }
        }
        for (std::int64_t d : edges.dst) ++in_degree[static_cast<std::size_t>(d)];
        entries.push_back(std::move(edges));
      }
      // A group switched off (0 heads in every layer) takes no softmax, so a node it leaves without an in-edge is
      // no error.
      for (std::size_t i = 0; i < in_degree.size(); ++i)
        if (in_degree[i] == 0 && spec.head_groups[static_cast<std::size_t>(plan.group)].attends())
          fail("{}: {}: node {} of '{}' in a sentence of {} token{} has no in-edge, so its attention (softmax) "
               "would be empty; add a relation that reaches it (e.g. self)",
               spec.source, group_text(spec, plan.group), i, plan.dst, n, n == 1 ? "" : "s");
      per_plan.push_back(std::move(entries));
    }
  }

  // Batched edges: sentence b's nodes of a type follow those of sentences 0..b-1.
  std::map<std::string, std::vector<std::int64_t>> counts;  // per type: nodes per sentence
  for (const std::string& type : types)
    for (std::int64_t n : lengths) counts[type].push_back(spec.nodes_in_sentence(type, n));
  std::vector<NodeTypeSpec> node_types;
  for (const std::string& type : types) node_types.push_back(builders::node_type(type, counts[type]));
  std::vector<RelationSpec> relations;
  std::vector<std::vector<std::string>> plan_names(plans.size());
  for (std::size_t p = 0; p < plans.size(); ++p) {
    const GroupPlan& plan = plans[p];
    for (std::size_t e = 0; e < plan.relations.size(); ++e) {
      std::vector<std::int32_t> src, dst;
      std::vector<std::int64_t> per_sentence;
      std::size_t total = 0;
      for (std::int64_t n : lengths) total += by_length.at(n)[p][e].size();
      src.reserve(total), dst.reserve(total);
      std::int64_t src_first = 0, dst_first = 0;
      for (std::size_t b = 0; b < lengths.size(); ++b) {
        const SentenceEdges& edges = by_length.at(lengths[b])[p][e];
        for (std::size_t i = 0; i < edges.size(); ++i) {
          src.push_back(static_cast<std::int32_t>(src_first + edges.src[i]));
          dst.push_back(static_cast<std::int32_t>(dst_first + edges.dst[i]));
        }
        per_sentence.push_back(static_cast<std::int64_t>(edges.size()));
        src_first += counts[plan.src_types[e]][b];
        dst_first += counts[plan.dst][b];
      }
      const TopologyGraph::Origin origin{plan.group, plan.relations[e]};
      const std::string name = relation_label(spec, origin, plan.src_types[e], plan.dst);
      const auto size = static_cast<std::int64_t>(src.size());
      EdgeList edges{Tensor::from_vector(src, {size}), Tensor::from_vector(dst, {size}), per_sentence};
      relations.push_back({{plan.src_types[e], name, plan.dst}, std::move(edges)});
      t.origins.push_back(origin);
      plan_names[p].push_back(name);
    }
  }
  t.graph = HeteroGraph(node_types, relations).to(device);
  t.blocks.resize(t.dst_types.size());
  for (std::size_t p = 0; p < plans.size(); ++p) {
    const auto d = static_cast<std::size_t>(
        std::find(t.dst_types.begin(), t.dst_types.end(), plans[p].dst) - t.dst_types.begin());
    t.blocks[d].push_back(to_block(t.graph, plans[p].dst, plan_names[p]));
  }
  return t;
}

void check_topology_lengths(const TopologySpec& spec, std::int64_t max_tokens) {
  // One sentence at a time: one batch of every length held 64 sentences' graphs at once (2^30 edges for a
  // file at the size bound).
  for (std::int64_t n = 1; n <= std::max<std::int64_t>(max_tokens, 1); ++n) (void)build_topology(spec, {n});
}

}  // namespace topo::models
