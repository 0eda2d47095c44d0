// apply_nodes / update_all + apply_node_func / send_and_recv / pull / push as compositions: an edge subset
// is an edge_subgraph (all nodes kept) whose edge features are index_selects of the parent's; rows a verb
// does not write are merged back with constant 0/1 row masks (old * (1 - m) + new * m).
#include "nn/verbs.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "graph/structure.hpp"

namespace topo::nn {
namespace {

using Ids = std::vector<std::int64_t>;

Tensor id_tensor(const Ids& ids, Device device) {
  return Tensor::from_vector(ids, {static_cast<std::int64_t>(ids.size())}, device);
}

// [rows] 0/1 flags as a constant [rows, 1, ..., 1] (ndim dims) float tensor, broadcasting over a row.
Var row_mask(const std::vector<char>& rows, int ndim, bool value, Device device) {
  std::vector<float> m(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) m[i] = (rows[i] != 0) == value ? 1.f : 0.f;
  Shape shape(static_cast<std::size_t>(std::max(ndim, 1)), 1);
  shape[0] = static_cast<std::int64_t>(rows.size());
  return Var(Tensor::from_vector(m, shape, device));
}

// fresh on the `written` rows, the current feature `keep` of the type elsewhere (0 when it is absent).
Var merge_rows(const GraphFeatures& f, int ntype, const std::string& keep, const Var& fresh,
               const std::vector<char>& written, const char* verb) {
  const HeteroGraph& g = f.graph();
  const std::string& nt = g.node_types()[ntype];
  TOPO_CHECK(fresh.defined() && fresh.ndim() >= 1 && fresh.size(0) == g.num_nodes(ntype),
             "{}: the result for node type '{}' must be [{}, ...], got {}", verb, nt, g.num_nodes(ntype),
             fresh.defined() ? shape_str(fresh.shape()) : std::string("an undefined Var"));
  const Var kept = mul(fresh, row_mask(written, fresh.ndim(), true, fresh.device()));
  if (!f.has_ndata(nt, keep)) return kept;
  const Var& old = f.ndata(ntype, keep);
  TOPO_CHECK(old.shape() == fresh.shape(),
             "{}: node type '{}' keeps feature '{}' {} on the rows it does not write, but the new rows are {}", verb,
             nt, keep, shape_str(old.shape()), shape_str(fresh.shape()));
  return add(mul(old, row_mask(written, old.ndim(), false, old.device())), kept);
}

// The features over the graph reduced to edges `eids` of relation r (every node kept): node features
// shared, edge features of r sliced to those edges (differentiably).
GraphFeatures edge_subset(const GraphFeatures& f, int r, const Ids& eids) {
  const HeteroGraph& g = f.graph();
  const std::string& et = g.canonical_etype(r).etype;
  GraphFeatures sub(edge_subgraph(g, {{et, eids}}, false));
  for (int t = 0; t < g.num_node_types(); ++t)
    for (const auto& [name, v] : f.ndata_map(t)) sub.set_ndata(g.node_types()[t], name, v);
  const Tensor index = id_tensor(eids, g.device());
  for (const auto& [name, v] : f.edata_map(r)) sub.set_edata(et, name, index_select(v, index));
  return sub;
}

Ids distinct(const Ids& ids) {
  Ids out;
  std::set<std::int64_t> seen;
  for (const std::int64_t v : ids)
    if (seen.insert(v).second) out.push_back(v);
  return out;
}

// Messages along `eids` of relation r, written on the `written` destination rows.
Var partial_update(const GraphFeatures& f, int r, const Ids& eids, const std::vector<char>& written,
                   const MessageFn& message, const ReduceFn& reduce, const NodeUdf& apply, const char* verb) {
  const HeteroGraph& g = f.graph();
  const std::string& et = g.canonical_etype(r).etype;
  const GraphFeatures sub = edge_subset(f, r, eids);
  const Var fresh = apply ? update_all(sub, et, message, reduce, apply) : update_all(sub, et, message, reduce);
  return merge_rows(f, g.node_type_id(g.canonical_etype(r).dst_type), reduce.out, fresh, written, verb);
}

}  // namespace

// ---- NodeBatch

NodeBatch::NodeBatch(const GraphFeatures& features, int ntype, Tensor ids, std::map<std::string, Var> fresh)
    : features_(&features), ntype_(ntype), ids_(std::move(ids)), fresh_(std::move(fresh)) {}

Var NodeBatch::data(const std::string& name) const {
  const auto it = fresh_.find(name);
  const Var& v = it != fresh_.end() ? it->second : features_->ndata(ntype_, name);
  return ids_.defined() ? index_select(v, ids_) : v;
}
std::int64_t NodeBatch::num_nodes() const {
  return ids_.defined() ? ids_.numel() : features_->graph().num_nodes(ntype_);
}
const std::string& NodeBatch::ntype() const { return features_->graph().node_types()[ntype_]; }

// ---- verbs

Var apply_nodes(const GraphFeatures& features, const std::string& ntype, const NodeUdf& f) {
  const int t = features.graph().node_type_id(ntype);
  Var out = f(NodeBatch(features, t));
  TOPO_CHECK(out.defined() && out.ndim() >= 1 && out.size(0) == features.graph().num_nodes(t),
             "apply_nodes: the UDF must return [num_nodes('{}') = {}, ...], got {}", ntype,
             features.graph().num_nodes(t), out.defined() ? shape_str(out.shape()) : std::string("an undefined Var"));
  return out;
}

Var apply_nodes(const GraphFeatures& features, const std::string& ntype, const NodeUdf& f, const Ids& nodes,
                const std::string& keep) {
  const HeteroGraph& g = features.graph();
  const int t = g.node_type_id(ntype);
  const std::int64_t n = g.num_nodes(t), m = static_cast<std::int64_t>(nodes.size());
  std::vector<char> written(static_cast<std::size_t>(n), 0);
  std::vector<std::pair<std::int64_t, std::int64_t>> put;  // row i of the UDF's output -> node nodes[i]
  for (std::int64_t i = 0; i < m; ++i) {
    const std::int64_t v = nodes[static_cast<std::size_t>(i)];
    TOPO_CHECK(v >= 0 && v < n, "apply_nodes: nodes[{}] = {} is not a valid '{}' node id (there are {})", i, v, ntype, n);
    TOPO_CHECK(!written[v], "apply_nodes: nodes[{}] = {} is repeated", i, v);
    written[v] = 1;
    put.emplace_back(i, v);
  }
  const Var rows = f(NodeBatch(features, t, id_tensor(nodes, g.device())));
  TOPO_CHECK(rows.defined() && rows.ndim() >= 1 && rows.size(0) == m,
             "apply_nodes: the UDF must return [{} selected nodes, ...], got {}", m,
             rows.defined() ? shape_str(rows.shape()) : std::string("an undefined Var"));
  const HeteroGraph scatter({{"_rows", m}, {"_nodes", n}},
                            {{{"_rows", "_put", "_nodes"}, EdgeList::from_pairs(put, DType::I64)}});
  const Var placed = gspmm(relation_block(scatter.to(g.device()), 0), MessageOp::CopyU, SpmmReduce::Sum, rows, Var());
  return merge_rows(features, t, keep, placed, written, "apply_nodes");
}

Var update_all(const GraphFeatures& features, const std::string& etype, const MessageFn& message,
               const ReduceFn& reduce, const NodeUdf& apply_node_func) {
  const HeteroGraph& g = features.graph();
  const int dst = g.node_type_id(g.canonical_etype(g.relation_id(etype)).dst_type);
  const Var reduced = update_all(features, etype, message, reduce);
  if (!apply_node_func) return reduced;
  Var out = apply_node_func(NodeBatch(features, dst, {}, {{reduce.out, reduced}}));
  TOPO_CHECK(out.defined() && out.ndim() >= 1 && out.size(0) == g.num_nodes(dst),
             "update_all: apply_node_func must return [num_nodes('{}') = {}, ...], got {}", g.node_types()[dst],
             g.num_nodes(dst), out.defined() ? shape_str(out.shape()) : std::string("an undefined Var"));
  return out;
}

Var send_and_recv(const GraphFeatures& features, const std::string& etype, const Ids& eids, const MessageFn& message,
                  const ReduceFn& reduce, const NodeUdf& apply_node_func) {
  const HeteroGraph& g = features.graph();
  const int r = g.relation_id(etype);
  const auto pairs = g.edges(r).pairs();
  std::vector<char> written(static_cast<std::size_t>(g.num_nodes(g.canonical_etype(r).dst_type)), 0);
  for (std::size_t i = 0; i < eids.size(); ++i) {
    TOPO_CHECK(eids[i] >= 0 && eids[i] < static_cast<std::int64_t>(pairs.size()),
               "send_and_recv: eids[{}] = {} is not an edge id of {} (it has {})", i, eids[i],
               g.canonical_etype(r).str(), pairs.size());
    written[pairs[eids[i]].second] = 1;
  }
  return partial_update(features, r, eids, written, message, reduce, apply_node_func, "send_and_recv");
}

Var pull(const GraphFeatures& features, const std::string& etype, const Ids& nodes, const MessageFn& message,
         const ReduceFn& reduce, const NodeUdf& apply_node_func) {
  const HeteroGraph& g = features.graph();
  const int r = g.relation_id(etype);
  const Ids v = distinct(nodes);
  const EdgeIds in = in_edges(g, v, etype);  // checks the ids
  std::vector<char> written(static_cast<std::size_t>(g.num_nodes(g.canonical_etype(r).dst_type)), 0);
  for (const std::int64_t x : v) written[x] = 1;
  return partial_update(features, r, in.eid, written, message, reduce, apply_node_func, "pull");
}

Var push(const GraphFeatures& features, const std::string& etype, const Ids& nodes, const MessageFn& message,
         const ReduceFn& reduce, const NodeUdf& apply_node_func) {
  const HeteroGraph& g = features.graph();
  const int r = g.relation_id(etype);
  const EdgeIds out = out_edges(g, distinct(nodes), etype);
  std::vector<char> written(static_cast<std::size_t>(g.num_nodes(g.canonical_etype(r).dst_type)), 0);
  for (const std::int64_t d : out.dst) written[d] = 1;
  return partial_update(features, r, out.eid, written, message, reduce, apply_node_func, "push");
}

}  // namespace topo::nn
