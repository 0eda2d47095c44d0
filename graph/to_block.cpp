#include "graph/to_block.hpp"

#include "kernels/error.hpp"

namespace topo {

namespace {

using Ids = std::vector<std::int64_t>;

// Position of each listed node of a type in `ids` (-1: not listed), after the range and repeat checks.
Ids positions(const HeteroGraph& g, int type, const Ids& ids, const char* side, const char* argument) {
  const std::string& name = g.node_types()[type];
  Ids at(static_cast<std::size_t>(g.num_nodes(type)), -1);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    TOPO_CHECK(ids[i] >= 0 && ids[i] < g.num_nodes(type), "to_block: {} node {} of type '{}' out of range [0, {})",
               side, ids[i], name, g.num_nodes(type));
    TOPO_CHECK(at[ids[i]] < 0, "to_block: {} of type '{}' name a node twice ({})", argument, name, ids[i]);
    at[ids[i]] = static_cast<std::int64_t>(i);
  }
  return at;
}

// Every edge of relation `et`, in edge-id order (DGL keeps the frontier's order: block edge k is parent edge
// k); dst_at maps each destination to its position, and a node with an in-edge must have one.
template <class T>
void walk_edges(const EdgeList& coo, const Ids& dst_at, const CanonicalEType& et, EdgeIds& out) {
  const T* src = coo.src.data<T>();
  const T* dst = coo.dst.data<T>();
  const auto n = static_cast<std::size_t>(coo.num_edges());
  out.src.resize(n);
  out.dst.resize(n);
  out.eid.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    const std::int64_t at = dst_at[static_cast<std::size_t>(dst[k])];
    TOPO_CHECK(at >= 0, "to_block: node {} of type '{}' has in-edges ({}, {}, {}) but is not among dst_nodes",
               static_cast<std::int64_t>(dst[k]), et.dst_type, et.src_type, et.etype, et.dst_type);
    out.src[k] = src[k];  // a parent id for now: the caller numbers the sources
    out.dst[k] = at;
    out.eid[k] = static_cast<std::int64_t>(k);
  }
}

}  // namespace

BlockParts to_block(const HeteroGraph& graph, const std::vector<Ids>& dst_nodes, bool include_dst_in_src,
                    const std::optional<std::vector<Ids>>& src_nodes) {
  const HeteroGraph g = graph.to(Device::cpu());
  const int types = g.num_node_types();
  TOPO_CHECK(static_cast<int>(dst_nodes.size()) == types, "to_block: dst_nodes for {} node types, the graph has {}",
             dst_nodes.size(), types);
  TOPO_CHECK(!src_nodes || static_cast<int>(src_nodes->size()) == types,
             "to_block: src_nodes for {} node types, the graph has {}", src_nodes ? src_nodes->size() : 0, types);
  std::vector<Ids> dst_at;
  for (int t = 0; t < types; ++t) dst_at.push_back(positions(g, t, dst_nodes[t], "destination", "dst_nodes"));

  BlockParts out;
  out.edges.resize(static_cast<std::size_t>(g.num_relations()));
  for (int r = 0; r < g.num_relations(); ++r) {
    const CanonicalEType& et = g.canonical_etype(r);
    const int d = g.node_type_id(et.dst_type);
    if (g.id_dtype() == DType::I64)
      walk_edges<std::int64_t>(g.edges(r), dst_at[d], et, out.edges[r]);
    else
      walk_edges<std::int32_t>(g.edges(r), dst_at[d], et, out.edges[r]);
  }

  // Source numbering per type: given, or the destinations then the sources in order of first appearance.
  std::vector<Ids> src_at(static_cast<std::size_t>(types));
  if (src_nodes) {
    out.src_nodes = *src_nodes;
    for (int t = 0; t < types; ++t) {
      src_at[t] = positions(g, t, out.src_nodes[t], "source", "src_nodes");
      const Ids& dst = dst_nodes[t];
      bool leads = !include_dst_in_src || out.src_nodes[t].size() >= dst.size();
      for (std::size_t i = 0; leads && include_dst_in_src && i < dst.size(); ++i) leads = out.src_nodes[t][i] == dst[i];
      TOPO_CHECK(leads, "to_block: with include_dst_in_src, src_nodes['{}'] must start with the destination nodes "
                 "in their order", g.node_types()[t]);
    }
  } else {
    out.src_nodes.resize(static_cast<std::size_t>(types));
    for (int t = 0; t < types; ++t) {
      src_at[t].assign(static_cast<std::size_t>(g.num_nodes(t)), -1);
      if (!include_dst_in_src) continue;
      out.src_nodes[t] = dst_nodes[t];
      for (std::size_t i = 0; i < dst_nodes[t].size(); ++i) src_at[t][dst_nodes[t][i]] = static_cast<std::int64_t>(i);
    }
  }
  for (int r = 0; r < g.num_relations(); ++r) {
    const CanonicalEType& et = g.canonical_etype(r);
    const int s = g.node_type_id(et.src_type);
    std::size_t k = 0;
    TOPO_CHECK(number_sources(out.edges[r].src, out.src_nodes[s], src_at[s], src_nodes.has_value(), &k),
               "to_block: node {} of type '{}' is the source of an edge ({}, {}, {}) into dst_nodes but is not among "
               "src_nodes", out.edges[r].src[k], et.src_type, et.src_type, et.etype, et.dst_type);
  }
  return out;
}

bool number_sources(std::vector<std::int64_t>& ids, std::vector<std::int64_t>& sources,
                    std::vector<std::int64_t>& src_at, bool closed, std::size_t* k) {
  for (std::size_t i = 0; i < ids.size(); ++i) {
    // ids are scattered over src_at (8 MB at 1M nodes): fetch ahead, as the sampler's rows are
    if (i + 16 < ids.size()) __builtin_prefetch(&src_at[static_cast<std::size_t>(ids[i + 16])]);
    std::int64_t& at = src_at[static_cast<std::size_t>(ids[i])];
    if (at < 0) {
      if (closed) {
        if (k) *k = i;
        return false;
      }
      at = static_cast<std::int64_t>(sources.size());
      sources.push_back(ids[i]);
    }
    ids[i] = at;
  }
  return true;
}

HeteroGraph block_graph(const HeteroGraph& g, const BlockParts& parts, const std::vector<Ids>& dst_nodes,
                        const std::string& src_prefix, const std::string& dst_prefix) {
  std::vector<NodeTypeSpec> types;
  for (int t = 0; t < g.num_node_types(); ++t)
    types.push_back({src_prefix + g.node_types()[t], static_cast<std::int64_t>(parts.src_nodes[t].size()), {}});
  for (int t = 0; t < g.num_node_types(); ++t)
    types.push_back({dst_prefix + g.node_types()[t], static_cast<std::int64_t>(dst_nodes[t].size()), {}});
  std::vector<RelationSpec> relations;
  for (int r = 0; r < g.num_relations(); ++r) {
    const CanonicalEType& et = g.canonical_etype(r);
    const EdgeIds& e = parts.edges[r];
    std::vector<std::pair<std::int64_t, std::int64_t>> pairs(e.size());
    for (std::size_t k = 0; k < pairs.size(); ++k) pairs[k] = {e.src[k], e.dst[k]};
    relations.push_back({{src_prefix + et.src_type, et.etype, dst_prefix + et.dst_type},
                         EdgeList::from_pairs(pairs, g.id_dtype())});
  }
  HeteroGraph out(types, relations);
  return g.device().is_cuda() ? out.to(g.device()) : out;
}

}  // namespace topo
