// update_all / apply_edges / edge_softmax / multi_update_all over GraphFeatures. Lowering: built-in
// (source, edge) messages with a built-in reducer are one fused gspmm; everything else materialises the
// per-edge messages [E, ...] and reduces them with gspmm(copy_e) or the reduce UDF's padded mailbox.
#include "nn/message_passing.hpp"

#include <algorithm>
#include <utility>

#include "nn/ops.hpp"

namespace topo::nn {
namespace {

std::string known_names(const std::map<std::string, Var>& m) {
  std::string s;
  for (const auto& [k, v] : m) s += (s.empty() ? "" : ", ") + k;
  return "{" + s + "}";
}

Target target_of(Side s) { return s == Side::Src ? Target::U : s == Side::Dst ? Target::V : Target::E; }

// Runs f, prefixing any topo::Error with the call and relation so kernel-level shape errors name them.
template <class F>
Var with_context(const char* what, const HeteroGraph& g, int relation, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    throw Error(fmt::format("{} on relation {}: {}", what, g.canonical_etype(relation).str(), e.what()));
  }
}

const Var& operand(const GraphFeatures& f, int relation, Side side, const std::string& name) {
  const HeteroGraph& g = f.graph();
  const CanonicalEType& ce = g.canonical_etype(relation);
  if (side == Side::Edge) return f.edata(relation, name);
  return f.ndata(g.node_type_id(side == Side::Src ? ce.src_type : ce.dst_type), name);
}

Var apply_edges_impl(const GraphFeatures& f, int relation, const MessageFn& m) {
  if (m.udf) {
    Var out = m.udf(EdgeBatch(f, relation));
    const std::int64_t e = f.graph().num_edges(relation);
    TOPO_CHECK(out.defined() && out.ndim() >= 1 && out.size(0) == e,
               "the message UDF must return [num_edges = {}, ...], got {}", e,
               out.defined() ? shape_str(out.shape()) : std::string("an undefined Var"));
    return out;
  }
  const bool use_r = sddmm_uses_rhs(m.op);
  const Var lhs = operand(f, relation, m.lhs, m.lhs_field);
  const Var rhs = use_r ? operand(f, relation, m.rhs, m.rhs_field) : Var();
  return gsddmm(relation_block(f.graph(), relation), m.op, lhs, rhs, target_of(m.lhs), target_of(m.rhs));
}

// Padded mailbox of per-edge messages [E, ...] for the destinations of `relation` (layout in the header).
Mailbox make_mailbox(const GraphFeatures& f, int relation, const Var& messages) {
  const HeteroGraph& g = f.graph();
  const CsrView& csc = g.in_csc(relation);
  const std::int64_t rows = csc.num_rows, nnz = csc.nnz();
  std::vector<std::int64_t> indptr, eids;
  if (csc.dtype() == DType::I32) {
    const auto p = csc.indptr.to_vector<std::int32_t>(), e = csc.eids.to_vector<std::int32_t>();
    indptr.assign(p.begin(), p.end());
    eids.assign(e.begin(), e.end());
  } else {
    indptr = csc.indptr.to_vector<std::int64_t>();
    eids = csc.eids.to_vector<std::int64_t>();
  }
  std::int64_t slots = 1;
  for (std::int64_t v = 0; v < rows; ++v) slots = std::max(slots, indptr[v + 1] - indptr[v]);
  // Slot (v, k) reads message row eids[indptr[v] + k], or row nnz (an appended zero row) for padding.
  std::vector<std::int64_t> index(static_cast<std::size_t>(rows * slots), nnz);
  std::vector<float> mask(index.size(), 0.f);
  for (std::int64_t v = 0; v < rows; ++v)
    for (std::int64_t k = indptr[v]; k < indptr[v + 1]; ++k) {
      index[v * slots + (k - indptr[v])] = eids[k];
      mask[v * slots + (k - indptr[v])] = 1.f;
    }
  const Device dev = messages.device();
  Shape zero_shape = messages.shape();
  zero_shape[0] = 1;
  const Var padded = concat({messages, Var(Tensor::zeros(zero_shape, DType::F32, dev))}, 0);
  Var gathered = index_select(padded, Tensor::from_vector(index, {rows * slots}).to(dev));
  Shape box_shape = messages.shape();
  box_shape[0] = slots;
  box_shape.insert(box_shape.begin(), rows);
  Mailbox box;
  box.messages = reshape(gathered, box_shape);
  box.mask = Tensor::from_vector(mask, {rows, slots}).to(dev);
  box.num_dst = rows;
  box.slots = slots;
  box.features = &f;
  box.dst_type = g.node_type_id(g.canonical_etype(relation).dst_type);
  return box;
}

Var update_all_impl(const GraphFeatures& f, int relation, const MessageFn& m, const ReduceFn& r) {
  TOPO_CHECK(m.out == r.msg, "the reducer reads message '{}' but the message function writes '{}'", r.msg, m.out);
  // Each gspmm over the block it needs (gspmm_block): copy_u summed or averaged builds no edge ids.
  const auto block = [&](MessageOp op, SpmmReduce reduce) { return gspmm_block(f.graph(), relation, op, reduce); };
  if (!m.udf && !r.udf) {
    // Fused cases: a gspmm reads (source, edge) pairs directly.
    if (m.op == SddmmOp::CopyLhs && m.lhs == Side::Src)
      return gspmm(block(MessageOp::CopyU, r.op), MessageOp::CopyU, r.op, operand(f, relation, Side::Src, m.lhs_field),
                   Var());
    if (m.op == SddmmOp::CopyLhs && m.lhs == Side::Edge)
      return gspmm(block(MessageOp::CopyE, r.op), MessageOp::CopyE, r.op, Var(),
                   operand(f, relation, Side::Edge, m.lhs_field));
    const bool u_e = m.lhs == Side::Src && m.rhs == Side::Edge;
    const bool e_u = m.lhs == Side::Edge && m.rhs == Side::Src;
    const bool commutes = m.op == SddmmOp::Add || m.op == SddmmOp::Mul;
    if (u_e || (e_u && commutes)) {
      MessageOp op = MessageOp::CopyU;
      switch (m.op) {
        case SddmmOp::Add: op = MessageOp::UAddE; break;
        case SddmmOp::Sub: op = MessageOp::USubE; break;
        case SddmmOp::Mul: op = MessageOp::UMulE; break;
        case SddmmOp::Div: op = MessageOp::UDivE; break;
        default: break;
      }
      if (op != MessageOp::CopyU) {
        const std::string& uf = u_e ? m.lhs_field : m.rhs_field;
        const std::string& ef = u_e ? m.rhs_field : m.lhs_field;
        return gspmm(block(op, r.op), op, r.op, operand(f, relation, Side::Src, uf),
                     operand(f, relation, Side::Edge, ef));
      }
    }
  }
  const Var messages = apply_edges_impl(f, relation, m);
  if (!r.udf) return gspmm(block(MessageOp::CopyE, r.op), MessageOp::CopyE, r.op, Var(), messages);
  const Mailbox box = make_mailbox(f, relation, messages);
  Var out = r.udf(box);
  TOPO_CHECK(out.defined() && out.ndim() >= 1 && out.size(0) == box.num_dst,
             "the reduce UDF must return [num_dst = {}, ...], got {}", box.num_dst,
             out.defined() ? shape_str(out.shape()) : std::string("an undefined Var"));
  return out;
}

}  // namespace

// ---- GraphFeatures

GraphFeatures::GraphFeatures(HeteroGraph graph) : graph_(std::move(graph)) {
  ndata_.resize(static_cast<std::size_t>(graph_.num_node_types()));
  edata_.resize(static_cast<std::size_t>(graph_.num_relations()));
  for (int t = 0; t < graph_.num_node_types(); ++t)
    for (const auto& [name, value] : graph_.ndata_map(t)) ndata_[t][name] = Var(value);
  for (int r = 0; r < graph_.num_relations(); ++r)
    for (const auto& [name, value] : graph_.edata_map(r)) edata_[r][name] = Var(value);
}

void GraphFeatures::set_ndata(const std::string& ntype, const std::string& name, const Var& value) {
  const int t = graph_.node_type_id(ntype);
  TOPO_CHECK(value.defined() && value.ndim() >= 1 && value.size(0) == graph_.num_nodes(t),
             "set_ndata: feature '{}' of node type '{}' must have {} rows, got {}", name, ntype,
             graph_.num_nodes(t), value.defined() ? shape_str(value.shape()) : std::string("an undefined Var"));
  TOPO_CHECK(value.device() == graph_.device(), "set_ndata: feature '{}' of node type '{}' is on {}, the graph on {}",
             name, ntype, value.device().str(), graph_.device().str());
  ndata_[t][name] = value;
}

const Var& GraphFeatures::ndata(int ntype, const std::string& name) const {
  const auto& m = ndata_.at(static_cast<std::size_t>(ntype));
  const auto it = m.find(name);
  TOPO_CHECK(it != m.end(), "no node feature '{}' on node type '{}' (known: {})", name, graph_.node_types()[ntype],
             known_names(m));
  return it->second;
}
const Var& GraphFeatures::ndata(const std::string& ntype, const std::string& name) const {
  return ndata(graph_.node_type_id(ntype), name);
}
bool GraphFeatures::has_ndata(const std::string& ntype, const std::string& name) const {
  return ndata_[graph_.node_type_id(ntype)].count(name) > 0;
}

void GraphFeatures::set_edata(const std::string& etype, const std::string& name, const Var& value) {
  const int r = graph_.relation_id(etype);
  TOPO_CHECK(value.defined() && value.ndim() >= 1 && value.size(0) == graph_.num_edges(r),
             "set_edata: feature '{}' of relation {} must have {} rows, got {}", name,
             graph_.canonical_etype(r).str(), graph_.num_edges(r),
             value.defined() ? shape_str(value.shape()) : std::string("an undefined Var"));
  TOPO_CHECK(value.device() == graph_.device(), "set_edata: feature '{}' of relation {} is on {}, the graph on {}",
             name, graph_.canonical_etype(r).str(), value.device().str(), graph_.device().str());
  edata_[r][name] = value;
}

const Var& GraphFeatures::edata(int relation, const std::string& name) const {
  const auto& m = edata_.at(static_cast<std::size_t>(relation));
  const auto it = m.find(name);
  TOPO_CHECK(it != m.end(), "no edge feature '{}' on relation {} (known: {})", name,
             graph_.canonical_etype(relation).str(), known_names(m));
  return it->second;
}
const Var& GraphFeatures::edata(const std::string& etype, const std::string& name) const {
  return edata(graph_.relation_id(etype), name);
}
bool GraphFeatures::has_edata(const std::string& etype, const std::string& name) const {
  return edata_[graph_.relation_id(etype)].count(name) > 0;
}

// ---- EdgeBatch

EdgeBatch::EdgeBatch(const GraphFeatures& features, int relation)
    : features_(&features), relation_(relation), edges_(features.graph().edges(relation)) {}

Var EdgeBatch::src(const std::string& name) const {
  return index_select(operand(*features_, relation_, Side::Src, name), edges_.src);
}
Var EdgeBatch::dst(const std::string& name) const {
  return index_select(operand(*features_, relation_, Side::Dst, name), edges_.dst);
}
Var EdgeBatch::data(const std::string& name) const { return features_->edata(relation_, name); }
std::int64_t EdgeBatch::num_edges() const { return edges_.num_edges(); }

// ---- message passing

Var apply_edges(const GraphFeatures& features, const std::string& etype, const MessageFn& edge_fn) {
  const int r = features.graph().relation_id(etype);
  return with_context("apply_edges", features.graph(), r, [&] { return apply_edges_impl(features, r, edge_fn); });
}

Var update_all(const GraphFeatures& features, const std::string& etype, const MessageFn& message,
               const ReduceFn& reduce) {
  const int r = features.graph().relation_id(etype);
  return with_context("update_all", features.graph(), r,
                      [&] { return update_all_impl(features, r, message, reduce); });
}

Var edge_softmax(const HeteroGraph& graph, const std::string& etype, const Var& scores, NormBy norm_by) {
  const int r = graph.relation_id(etype);
  return with_context("edge_softmax", graph, r, [&] {
    TOPO_CHECK(scores.defined() && scores.ndim() >= 1 && scores.size(0) == graph.num_edges(r),
               "scores must be [num_edges = {}, ...], got {}", graph.num_edges(r),
               scores.defined() ? shape_str(scores.shape()) : std::string("an undefined Var"));
    return edge_softmax(relation_block(graph, r), scores, norm_by);
  });
}

std::map<std::string, Var> multi_update_all(const GraphFeatures& features, const std::vector<RelationUpdate>& updates,
                                            CrossReduce cross) {
  const HeteroGraph& g = features.graph();
  std::map<std::string, std::vector<std::pair<std::string, Var>>> per_type;  // dst type -> (relation, result)
  for (const RelationUpdate& u : updates) {
    const int r = g.relation_id(u.etype);
    per_type[g.canonical_etype(r).dst_type].emplace_back(
        g.canonical_etype(r).str(), update_all(features, u.etype, u.message, u.reduce));
  }
  std::map<std::string, Var> out;
  for (auto& [ntype, results] : per_type) {
    const Shape& shape = results[0].second.shape();
    for (const auto& [rel, v] : results)
      TOPO_CHECK(v.shape() == shape,
                 "multi_update_all: results for node type '{}' differ in shape: {} gives {}, {} gives {}", ntype,
                 results[0].first, shape_str(shape), rel, shape_str(v.shape()));
    if (cross == CrossReduce::Stack) {  // [num_dst, R, ...]: one slot per relation, even when R = 1
      Shape one = shape;
      one.insert(one.begin() + 1, 1);
      std::vector<Var> slots;
      for (const auto& [rel, v] : results) slots.push_back(reshape(v, one));
      out[ntype] = slots.size() == 1 ? slots[0] : concat(slots, 1);
      continue;
    }
    if (results.size() == 1) {
      out[ntype] = results[0].second;
      continue;
    }
    if (cross == CrossReduce::Sum || cross == CrossReduce::Mean) {
      Var acc = results[0].second;
      for (std::size_t i = 1; i < results.size(); ++i) acc = add(acc, results[i].second);
      out[ntype] = cross == CrossReduce::Mean ? mul_scalar(acc, 1.f / static_cast<float>(results.size())) : acc;
      continue;
    }
    // Max / min: stack along a new leading dim and reduce it (min(x) = -max(-x)).
    Shape one = shape;
    one.insert(one.begin(), 1);
    std::vector<Var> stacked;
    for (const auto& [rel, v] : results) stacked.push_back(reshape(cross == CrossReduce::Min ? neg(v) : v, one));
    Var m = max(concat(stacked, 0), 0);
    out[ntype] = cross == CrossReduce::Min ? neg(m) : m;
  }
  return out;
}

}  // namespace topo::nn
