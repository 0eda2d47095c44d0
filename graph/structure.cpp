// Structure queries and transforms (DGL parity): host passes over the COO pairs, then one validated
// HeteroGraph construction; features follow through one index_select per tensor (parent rows -> new rows).
#include "graph/structure.hpp"

#include <algorithm>
#include <numeric>

#include "graph/batch.hpp"
#include "kernels/dense/indexing.hpp"

namespace topo {
namespace {

using Ids = std::vector<std::int64_t>;
using Pairs = std::vector<std::pair<std::int64_t, std::int64_t>>;

// "" names the only relation (DGL's etype=None); otherwise an unambiguous edge-type name.
int resolve(const HeteroGraph& g, const std::string& etype, const char* op) {
  if (!etype.empty()) return g.relation_id(etype);
  if (g.num_relations() != 1) {
    std::vector<std::string> names;
    for (const auto& ce : g.canonical_etypes()) names.push_back(ce.str());
    fail("{}: the graph has {} relations ({}); name one", op, g.num_relations(), fmt::join(names, ", "));
  }
  return 0;
}

Tensor i64_tensor(const Ids& ids) { return Tensor::from_vector(ids, {static_cast<std::int64_t>(ids.size())}); }

// Rows `rows` of a host tensor [n, ...] -> [rows.size(), ...] (any dtype).
Tensor take_rows(const Tensor& t, const Ids& rows) { return index_select(t, i64_tensor(rows)); }

// Old id -> new id (-1 when dropped) of a node set; checks range and duplicates.
Ids node_map(const HeteroGraph& g, const std::string& ntype, const Ids& nodes, const char* op) {
  const std::int64_t n = g.num_nodes(ntype);
  Ids map(static_cast<std::size_t>(n), -1);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::int64_t v = nodes[i];
    TOPO_CHECK(v >= 0 && v < n, "{}: nodes['{}'][{}] = {} is not a valid '{}' node id (there are {})", op, ntype, i,
               v, ntype, n);
    TOPO_CHECK(map[v] < 0, "{}: nodes['{}'][{}] = {} repeats position {}", op, ntype, i, v, map[v]);
    map[v] = static_cast<std::int64_t>(i);
  }
  return map;
}

std::vector<NodeTypeSpec> node_specs(const HeteroGraph& g, const std::vector<std::int64_t>& counts, bool keep_batch) {
  std::vector<NodeTypeSpec> out;
  for (int t = 0; t < g.num_node_types(); ++t)
    out.push_back({g.node_types()[t], counts[t], keep_batch && g.batch_size() > 1 ? g.batch_num_nodes(t) : Ids{}});
  return out;
}

std::vector<std::int64_t> all_counts(const HeteroGraph& g) {
  std::vector<std::int64_t> c;
  for (int t = 0; t < g.num_node_types(); ++t) c.push_back(g.num_nodes(t));
  return c;
}

// Node features of the parent for a graph over its nodes (add_self_loop, to_simple): whole, kNID included.
void copy_ndata(const HeteroGraph& parent, HeteroGraph& out) {
  for (int t = 0; t < parent.num_node_types(); ++t)
    for (const auto& [name, value] : parent.ndata_map(t)) out.set_ndata(parent.node_types()[t], name, value);
}

// A subgraph's node features: the rows nid[t] plus kNID (each node's id in the parent), or, when `nid` is null
// (every node kept), the features whole without kNID: the parent's own kNID maps to the parent's parent, and
// read as this subgraph's parent ids it gathered the wrong rows (out of range ones too).
void carry_ndata(const HeteroGraph& parent, HeteroGraph& out, const std::vector<Ids>* nid) {
  for (int t = 0; t < parent.num_node_types(); ++t) {
    const std::string& nt = parent.node_types()[t];
    for (const auto& [name, value] : parent.ndata_map(t))
      if (nid) out.set_ndata(nt, name, take_rows(value, (*nid)[t]));
      else if (name != kNID) out.set_ndata(nt, name, value);
    if (nid) out.set_ndata(nt, kNID, i64_tensor((*nid)[t]));
  }
}

// Edge features of relation r: rows `parent_eids` (per new edge), plus kEID when asked.
void carry_edata(const HeteroGraph& parent, int r, HeteroGraph& out, int r_out, const Ids& parent_eids, bool store) {
  for (const auto& [name, value] : parent.edata_map(r)) out.set_edata(r_out, name, take_rows(value, parent_eids));
  if (store) out.set_edata(r_out, kEID, i64_tensor(parent_eids));
}

// Edges of relation r whose ids pass `keep`, in increasing id order, mapped through the node maps.
struct Kept {
  Pairs pairs;
  Ids eids;
};
template <class Keep>
Kept filter_edges(const HeteroGraph& g, int r, Keep&& keep) {
  Kept k;
  const Pairs all = g.edges(r).pairs();
  for (std::size_t e = 0; e < all.size(); ++e)
    if (keep(static_cast<std::int64_t>(e), all[e].first, all[e].second)) {
      k.pairs.push_back(all[e]);
      k.eids.push_back(static_cast<std::int64_t>(e));
    }
  return k;
}

HeteroGraph on_device_of(const HeteroGraph& out, const HeteroGraph& g) { return out.to(g.device()); }

EdgeIds gather_edges(const HeteroGraph& h, int r, const Ids& nodes, bool incoming) {
  EdgeIds out;
  for (const std::int64_t v : nodes) {
    const HeteroGraph::NodeEdges ne = incoming ? h.in_edges(r, v) : h.out_edges(r, v);
    for (std::size_t k = 0; k < ne.eids.size(); ++k) {
      out.src.push_back(incoming ? ne.neighbors[k] : v);
      out.dst.push_back(incoming ? v : ne.neighbors[k]);
      out.eid.push_back(ne.eids[k]);
    }
  }
  return out;
}

}  // namespace

EdgeIds in_edges(const HeteroGraph& g, const Ids& nodes, const std::string& etype) {
  return gather_edges(g, resolve(g, etype, "in_edges"), nodes, true);
}
EdgeIds out_edges(const HeteroGraph& g, const Ids& nodes, const std::string& etype) {
  return gather_edges(g, resolve(g, etype, "out_edges"), nodes, false);
}
Ids predecessors(const HeteroGraph& g, std::int64_t node, const std::string& etype) {
  return g.in_edges(resolve(g, etype, "predecessors"), node).neighbors;
}
Ids successors(const HeteroGraph& g, std::int64_t node, const std::string& etype) {
  return g.out_edges(resolve(g, etype, "successors"), node).neighbors;
}

HeteroGraph in_subgraph(const HeteroGraph& g, const NodeSets& nodes) {
  const HeteroGraph h = g.to(Device::cpu());
  std::vector<std::vector<char>> chosen(static_cast<std::size_t>(h.num_node_types()));
  for (const auto& [nt, ids] : nodes) {
    const int t = h.node_type_id(nt);
    chosen[t].assign(static_cast<std::size_t>(h.num_nodes(t)), 0);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      TOPO_CHECK(ids[i] >= 0 && ids[i] < h.num_nodes(t),
                 "in_subgraph: nodes['{}'][{}] = {} is not a valid '{}' node id (there are {})", nt, i, ids[i], nt,
                 h.num_nodes(t));
      chosen[t][ids[i]] = 1;
    }
  }
  std::vector<RelationSpec> rels;
  std::vector<Ids> parents;
  for (int r = 0; r < h.num_relations(); ++r) {
    const auto& into = chosen[h.node_type_id(h.canonical_etype(r).dst_type)];
    const Kept k = filter_edges(h, r, [&](std::int64_t, std::int64_t, std::int64_t d) { return !into.empty() && into[d]; });
    rels.push_back({h.canonical_etype(r), EdgeList::from_pairs(k.pairs, h.id_dtype())});
    parents.push_back(k.eids);
  }
  HeteroGraph out(node_specs(h, all_counts(h), false), rels);
  carry_ndata(h, out, nullptr);
  for (int r = 0; r < h.num_relations(); ++r) carry_edata(h, r, out, r, parents[r], true);
  return on_device_of(out, g);
}

HeteroGraph node_subgraph(const HeteroGraph& g, const NodeSets& nodes) {
  const HeteroGraph h = g.to(Device::cpu());
  std::vector<Ids> maps(static_cast<std::size_t>(h.num_node_types())), nid(maps.size());
  for (int t = 0; t < h.num_node_types(); ++t) maps[t].assign(static_cast<std::size_t>(h.num_nodes(t)), -1);
  for (const auto& [nt, ids] : nodes) {
    const int t = h.node_type_id(nt);
    maps[t] = node_map(h, nt, ids, "node_subgraph");
    nid[t] = ids;
  }
  std::vector<std::int64_t> counts;
  for (const Ids& ids : nid) counts.push_back(static_cast<std::int64_t>(ids.size()));
  std::vector<RelationSpec> rels;
  std::vector<Ids> parents;
  for (int r = 0; r < h.num_relations(); ++r) {
    const CanonicalEType& ce = h.canonical_etype(r);
    const Ids& ms = maps[h.node_type_id(ce.src_type)];
    const Ids& md = maps[h.node_type_id(ce.dst_type)];
    // DGL 2.1's order: the kept sources' CSR rows in the order given (edge ids ascending within a row), each
    // edge kept when its destination is; only those rows are read, not every edge of the relation
    const EdgeIds out = gather_edges(h, r, nid[h.node_type_id(ce.src_type)], false);
    Pairs pairs;
    Ids eids;
    for (std::size_t k = 0; k < out.size(); ++k)
      if (md[out.dst[k]] >= 0) pairs.emplace_back(ms[out.src[k]], md[out.dst[k]]), eids.push_back(out.eid[k]);
    rels.push_back({ce, EdgeList::from_pairs(pairs, h.id_dtype())});
    parents.push_back(std::move(eids));
  }
  HeteroGraph out(node_specs(h, counts, false), rels);
  carry_ndata(h, out, &nid);
  for (int r = 0; r < h.num_relations(); ++r) carry_edata(h, r, out, r, parents[r], true);
  return on_device_of(out, g);
}

HeteroGraph edge_subgraph(const HeteroGraph& g, const EdgeSets& edges, bool relabel_nodes) {
  const HeteroGraph h = g.to(Device::cpu());
  std::vector<Ids> chosen(static_cast<std::size_t>(h.num_relations()));
  for (const auto& [et, ids] : edges) {
    const int r = h.relation_id(et);
    const std::int64_t ne = h.num_edges(r);
    std::vector<char> seen(static_cast<std::size_t>(ne), 0);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      TOPO_CHECK(ids[i] >= 0 && ids[i] < ne, "edge_subgraph: edges['{}'][{}] = {} is not an edge id of {} (it has {})",
                 et, i, ids[i], h.canonical_etype(r).str(), ne);
      TOPO_CHECK(!seen[ids[i]], "edge_subgraph: edges['{}'][{}] = {} is repeated", et, i, ids[i]);
      seen[ids[i]] = 1;
    }
    chosen[r] = ids;
  }
  std::vector<Pairs> pairs(chosen.size());
  for (int r = 0; r < h.num_relations(); ++r) {
    const Pairs all = h.edges(r).pairs();
    for (const std::int64_t e : chosen[r]) pairs[r].push_back(all[e]);
  }
  std::vector<Ids> nid(static_cast<std::size_t>(h.num_node_types()));
  std::vector<std::int64_t> counts = all_counts(h);
  if (relabel_nodes) {
    // Each type keeps the nodes its kept edges touch, by increasing parent id.
    std::vector<Ids> maps;
    for (int t = 0; t < h.num_node_types(); ++t) maps.emplace_back(static_cast<std::size_t>(h.num_nodes(t)), -1);
    for (int r = 0; r < h.num_relations(); ++r)
      for (const auto& [s, d] : pairs[r]) {
        maps[h.node_type_id(h.canonical_etype(r).src_type)][s] = 0;
        maps[h.node_type_id(h.canonical_etype(r).dst_type)][d] = 0;
      }
    for (int t = 0; t < h.num_node_types(); ++t) {
      for (std::int64_t v = 0; v < h.num_nodes(t); ++v)
        if (maps[t][v] == 0) {
          maps[t][v] = static_cast<std::int64_t>(nid[t].size());
          nid[t].push_back(v);
        }
      counts[t] = static_cast<std::int64_t>(nid[t].size());
    }
    for (int r = 0; r < h.num_relations(); ++r)
      for (auto& [s, d] : pairs[r]) {
        s = maps[h.node_type_id(h.canonical_etype(r).src_type)][s];
        d = maps[h.node_type_id(h.canonical_etype(r).dst_type)][d];
      }
  }
  std::vector<RelationSpec> rels;
  for (int r = 0; r < h.num_relations(); ++r)
    rels.push_back({h.canonical_etype(r), EdgeList::from_pairs(pairs[r], h.id_dtype())});
  HeteroGraph out(node_specs(h, counts, false), rels);
  carry_ndata(h, out, relabel_nodes ? &nid : nullptr);
  for (int r = 0; r < h.num_relations(); ++r) carry_edata(h, r, out, r, chosen[r], true);
  return on_device_of(out, g);
}

namespace {

// One row [1, ...] like t's rows (edge feature `name`), every element `fill` in t's dtype: truncated toward 0
// for an integer feature, where a fill no integer of that width holds (NaN, inf, 1e30: converting it is
// undefined) is a topo::Error naming the feature.
Tensor fill_row(const Tensor& t, float fill, const std::string& name) {
  Shape shape = t.shape();
  shape[0] = 1;
  if (t.dtype() == DType::F32) return Tensor::full(shape, fill);
  const std::size_t n = static_cast<std::size_t>(t.row_numel());
  const float limit = t.dtype() == DType::I32 ? 2147483648.f : 9223372036854775808.f;  // 2^31, 2^63: exact floats
  TOPO_CHECK(fill >= -limit && fill < limit, "add_self_loop: fill {} is not a value of the {} edge feature '{}'",
             fill, dtype_name(t.dtype()), name);
  if (t.dtype() == DType::I32) return Tensor::from_vector(std::vector<std::int32_t>(n, static_cast<std::int32_t>(fill)), shape);
  return Tensor::from_vector(std::vector<std::int64_t>(n, static_cast<std::int64_t>(fill)), shape);
}

// The graph with relation r's edges replaced by `pairs` (per-graph counts `bne` when batched) and its
// edge features rebuilt from `parent_rows` (an id E = num_edges(r) reads the `fill` row).
HeteroGraph replace_relation(const HeteroGraph& h, int r, const Pairs& pairs, const Ids& bne, const Ids& parent_rows,
                             float fill) {
  std::vector<RelationSpec> rels;
  for (int q = 0; q < h.num_relations(); ++q) {
    if (q != r) {
      rels.push_back({h.canonical_etype(q), h.edges(q)});
      continue;
    }
    EdgeList e = EdgeList::from_pairs(pairs, h.id_dtype());
    if (h.batch_size() > 1) e.batch_num_edges = bne;
    rels.push_back({h.canonical_etype(q), e});
  }
  HeteroGraph out(node_specs(h, all_counts(h), true), rels);
  copy_ndata(h, out);
  for (int q = 0; q < h.num_relations(); ++q) {
    if (q != r) {
      for (const auto& [name, value] : h.edata_map(q)) out.set_edata(q, name, value);
      continue;
    }
    for (const auto& [name, value] : h.edata_map(q))
      out.set_edata(q, name, take_rows(concat({value, fill_row(value, fill, name)}, 0), parent_rows));
  }
  return out;
}

}  // namespace

HeteroGraph add_self_loop(const HeteroGraph& g, const std::string& etype, float fill) {
  const HeteroGraph h = g.to(Device::cpu());
  const int r = resolve(h, etype, "add_self_loop");
  const CanonicalEType& ce = h.canonical_etype(r);
  TOPO_CHECK(ce.src_type == ce.dst_type, "add_self_loop: relation {} joins two node types ('{}' -> '{}')", ce.str(),
             ce.src_type, ce.dst_type);
  const Pairs old = h.edges(r).pairs();
  const std::int64_t ne = static_cast<std::int64_t>(old.size());
  const Ids& node_counts = h.batch_num_nodes(ce.src_type);
  const Ids& edge_counts = h.batch_num_edges(r);
  Pairs pairs;
  Ids rows, bne;
  std::int64_t e0 = 0, n0 = 0;
  for (std::size_t b = 0; b < node_counts.size(); ++b) {  // graph b: its edges, then its loops
    for (std::int64_t e = e0; e < e0 + edge_counts[b]; ++e) {
      pairs.push_back(old[e]);
      rows.push_back(e);
    }
    for (std::int64_t v = n0; v < n0 + node_counts[b]; ++v) {
      pairs.emplace_back(v, v);
      rows.push_back(ne);
    }
    bne.push_back(edge_counts[b] + node_counts[b]);
    e0 += edge_counts[b];
    n0 += node_counts[b];
  }
  return on_device_of(replace_relation(h, r, pairs, bne, rows, fill), g);
}

HeteroGraph remove_self_loop(const HeteroGraph& g, const std::string& etype) {
  const HeteroGraph h = g.to(Device::cpu());
  const int r = resolve(h, etype, "remove_self_loop");
  const CanonicalEType& ce = h.canonical_etype(r);
  TOPO_CHECK(ce.src_type == ce.dst_type, "remove_self_loop: relation {} joins two node types ('{}' -> '{}')",
             ce.str(), ce.src_type, ce.dst_type);
  const Pairs old = h.edges(r).pairs();
  Pairs pairs;
  Ids rows, bne;
  std::int64_t e0 = 0;
  for (const std::int64_t count : h.batch_num_edges(r)) {
    std::int64_t kept = 0;
    for (std::int64_t e = e0; e < e0 + count; ++e)
      if (old[e].first != old[e].second) {
        pairs.push_back(old[e]);
        rows.push_back(e);
        ++kept;
      }
    bne.push_back(kept);
    e0 += count;
  }
  return on_device_of(replace_relation(h, r, pairs, bne, rows, 0.f), g);
}

HeteroGraph to_simple(const HeteroGraph& g, const std::string& count_name, std::vector<std::vector<std::int64_t>>* writeback) {
  const HeteroGraph h = g.to(Device::cpu());
  std::vector<RelationSpec> rels;
  std::vector<Ids> counts(static_cast<std::size_t>(h.num_relations()));
  if (writeback) writeback->assign(counts.size(), {});
  for (int r = 0; r < h.num_relations(); ++r) {
    const CanonicalEType& ce = h.canonical_etype(r);
    const Pairs old = h.edges(r).pairs();
    Ids order(old.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return old[a] < old[b]; });
    Pairs pairs;
    Ids map(old.size());
    for (const std::int64_t e : order) {
      if (pairs.empty() || pairs.back() != old[e]) {
        pairs.push_back(old[e]);
        counts[r].push_back(0);
      }
      ++counts[r].back();
      map[e] = static_cast<std::int64_t>(pairs.size()) - 1;
    }
    EdgeList el = EdgeList::from_pairs(pairs, h.id_dtype());
    if (h.batch_size() > 1) {  // sources of graph b lie in its node range, so sorting keeps graphs contiguous
      const Ids offsets = batch_node_offsets(h, ce.src_type);
      el.batch_num_edges.assign(static_cast<std::size_t>(h.batch_size()), 0);
      for (const auto& [s, d] : pairs)
        ++el.batch_num_edges[std::upper_bound(offsets.begin(), offsets.end(), s) - offsets.begin() - 1];
    }
    rels.push_back({ce, el});
    if (writeback) (*writeback)[r] = std::move(map);
  }
  HeteroGraph out(node_specs(h, all_counts(h), true), rels);
  copy_ndata(h, out);
  if (!count_name.empty())
    for (int r = 0; r < h.num_relations(); ++r) out.set_edata(r, count_name, i64_tensor(counts[r]));
  return on_device_of(out, g);
}

}  // namespace topo
