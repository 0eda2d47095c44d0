#pragma once
// DGL-style message passing over a HeteroGraph with differentiable features.
//
// HeteroGraph's ndata/edata hold plain tensors; here features are Vars, kept in a GraphFeatures (the graph
// plus named Vars per node type and per relation). Message and reduce functions are small descriptors
// (nn::fn::copy_u("h", "m"), nn::fn::sum("m", "h")) or user callables. A single-head GAT layer:
//
//   GraphFeatures f(g);
//   Var h = matmul(x, w);
//   f.set_ndata("_N", "h", h);
//   f.set_ndata("_N", "el", matmul(h, a_l));   // [N, 1]
//   f.set_ndata("_N", "er", matmul(h, a_r));
//   f.set_edata("_E", "a", edge_softmax(g, "_E", leaky_relu(apply_edges(f, "_E", fn::u_add_v("el", "er", "")), 0.2f)));
//   Var out = update_all(f, "_E", fn::u_mul_e("h", "a", "m"), fn::sum("m", "h"));
//
// Built-in message + built-in reduce of the shape (source, edge) -> one fused gspmm; anything else computes
// the per-edge messages first (gsddmm or the UDF), then reduces them (gspmm copy_e, or the reduce UDF).
// Every function returns a new Var and leaves the GraphFeatures unchanged: store results with set_ndata.
// Errors name the relation, the feature and the shapes.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "graph/heterograph.hpp"
#include "nn/ops.hpp"  // UDFs are written with the dense ops
#include "nn/sparse_ops.hpp"

namespace topo::nn {

class GraphFeatures {
 public:
  // The graph's own ndata/edata tensors become constant leaves (no grad) under the same names.
  explicit GraphFeatures(HeteroGraph graph);

  const HeteroGraph& graph() const { return graph_; }
  // Row counts are checked against the node / edge counts (topo::Error names type, name and shapes).
  void set_ndata(const std::string& ntype, const std::string& name, const Var& value);
  const Var& ndata(const std::string& ntype, const std::string& name) const;  // throws naming the known names
  bool has_ndata(const std::string& ntype, const std::string& name) const;
  // etype: an unambiguous edge-type name.
  void set_edata(const std::string& etype, const std::string& name, const Var& value);
  const Var& edata(const std::string& etype, const std::string& name) const;
  bool has_edata(const std::string& etype, const std::string& name) const;
  // By node-type / relation id (what the message-passing functions use).
  const Var& ndata(int ntype, const std::string& name) const;
  const Var& edata(int relation, const std::string& name) const;
  // Every feature of a node type / relation by name (what the DGL verbs copy into a derived graph).
  const std::map<std::string, Var>& ndata_map(int ntype) const { return ndata_.at(static_cast<std::size_t>(ntype)); }
  const std::map<std::string, Var>& edata_map(int relation) const { return edata_.at(static_cast<std::size_t>(relation)); }

 private:
  HeteroGraph graph_;
  std::vector<std::map<std::string, Var>> ndata_;  // [node types]
  std::vector<std::map<std::string, Var>> edata_;  // [relations]
};

// The edges of one relation as a UDF sees them: endpoint and edge features gathered per edge (index_select
// on the COO ids, so gradients flow back to the node features). Row i is edge id i. Valid only during the
// UDF call (it points at the GraphFeatures).
class EdgeBatch {
 public:
  EdgeBatch(const GraphFeatures& features, int relation);
  Var src(const std::string& name) const;   // [E, ...] source features of each edge
  Var dst(const std::string& name) const;   // [E, ...] destination features
  Var data(const std::string& name) const;  // [E, ...] the edge's own features
  std::int64_t num_edges() const;
  const EdgeList& edges() const { return edges_; }

 private:
  const GraphFeatures* features_;
  int relation_;
  EdgeList edges_;
};

// The messages grouped per destination for a reduce UDF, padded: messages [num_dst, slots, *msg row], slot k
// of row v holding v's k-th in-edge (in edge-id order), slots = max(max in-degree, 1); padding slots are 0
// and mask [num_dst, slots] (float32, constant) is 1 on real messages, 0 on padding. So a sum reducer is
// sum(messages, 1), a mean divides by sum(mask, 1) (clamped), a max must push padding down with the mask.
// Built on the host from the CSC (an O(num_dst * slots) gather): simple, not fast. Valid during the call.
struct Mailbox {
  Var messages;
  Tensor mask;
  std::int64_t num_dst = 0, slots = 0;
  const GraphFeatures* features = nullptr;
  int dst_type = 0;
  Var dst(const std::string& name) const { return features->ndata(dst_type, name); }  // [num_dst, ...]
};

using MessageUdf = std::function<Var(const EdgeBatch&)>;
using ReduceUdf = std::function<Var(const Mailbox&)>;

enum class Side : std::uint8_t { Src, Dst, Edge };

// A message (or apply_edges) function: out = op(lhs, rhs) with each operand a named feature of the
// source node, destination node or edge; CopyLhs ignores rhs. Or a UDF when `udf` is set.
struct MessageFn {
  SddmmOp op = SddmmOp::CopyLhs;
  Side lhs = Side::Src, rhs = Side::Src;
  std::string lhs_field, rhs_field;
  std::string out;  // message name, matched against the reducer's (DGL's check)
  MessageUdf udf;
};
struct ReduceFn {
  SpmmReduce op = SpmmReduce::Sum;
  std::string msg, out;
  ReduceUdf udf;
};

namespace fn {
inline MessageFn binary(SddmmOp op, Side lhs, std::string lhs_field, Side rhs, std::string rhs_field,
                        std::string out) {
  return {op, lhs, rhs, std::move(lhs_field), std::move(rhs_field), std::move(out), {}};
}
inline MessageFn copy_u(std::string u, std::string out) {
  return binary(SddmmOp::CopyLhs, Side::Src, std::move(u), Side::Src, "", std::move(out));
}
inline MessageFn copy_v(std::string v, std::string out) {
  return binary(SddmmOp::CopyLhs, Side::Dst, std::move(v), Side::Dst, "", std::move(out));
}
inline MessageFn copy_e(std::string e, std::string out) {
  return binary(SddmmOp::CopyLhs, Side::Edge, std::move(e), Side::Edge, "", std::move(out));
}
// x_op_y(lhs, rhs, out) for x, y in {u (source), v (destination), e (edge)}, op in {add, sub, mul, div, dot}
// (dot reduces the last dim, keeping it as 1): u_mul_e, u_dot_v, v_dot_u, e_div_v, ...
#define TOPO_MP_BINARY_ONE(x, y, X, Y, name, OP)                            \
  inline MessageFn x##_##name##_##y(std::string a, std::string b, std::string o) { \
    return binary(SddmmOp::OP, X, std::move(a), Y, std::move(b), std::move(o));     \
  }
#define TOPO_MP_BINARY(x, y, X, Y)              \
  TOPO_MP_BINARY_ONE(x, y, X, Y, add, Add)      \
  TOPO_MP_BINARY_ONE(x, y, X, Y, sub, Sub)      \
  TOPO_MP_BINARY_ONE(x, y, X, Y, mul, Mul)      \
  TOPO_MP_BINARY_ONE(x, y, X, Y, div, Div)      \
  TOPO_MP_BINARY_ONE(x, y, X, Y, dot, Dot)
TOPO_MP_BINARY(u, e, Side::Src, Side::Edge)
TOPO_MP_BINARY(u, v, Side::Src, Side::Dst)
TOPO_MP_BINARY(v, u, Side::Dst, Side::Src)
TOPO_MP_BINARY(v, e, Side::Dst, Side::Edge)
TOPO_MP_BINARY(e, u, Side::Edge, Side::Src)
TOPO_MP_BINARY(e, v, Side::Edge, Side::Dst)
#undef TOPO_MP_BINARY
#undef TOPO_MP_BINARY_ONE
// A user-defined message: f(edges) -> [num_edges, ...], named `out` for the reducer.
inline MessageFn message_udf(MessageUdf f, std::string out = "m") {
  MessageFn m;
  m.udf = std::move(f);
  m.out = std::move(out);
  return m;
}

// Reducers over a destination's messages; a destination without in-edges gets 0 (every reducer).
inline ReduceFn sum(std::string msg, std::string out) { return {SpmmReduce::Sum, std::move(msg), std::move(out), {}}; }
inline ReduceFn mean(std::string msg, std::string out) { return {SpmmReduce::Mean, std::move(msg), std::move(out), {}}; }
inline ReduceFn max(std::string msg, std::string out) { return {SpmmReduce::Max, std::move(msg), std::move(out), {}}; }
inline ReduceFn min(std::string msg, std::string out) { return {SpmmReduce::Min, std::move(msg), std::move(out), {}}; }
// A user-defined reducer: f(mailbox) -> [num_dst, ...] (see Mailbox for the layout).
inline ReduceFn reduce_udf(ReduceUdf f, std::string msg = "m", std::string out = "h") {
  ReduceFn r;
  r.udf = std::move(f);
  r.msg = std::move(msg);
  r.out = std::move(out);
  return r;
}
}  // namespace fn

// Per-edge values of `edge_fn` over relation `etype`: [num_edges, ...] by edge id.
Var apply_edges(const GraphFeatures& features, const std::string& etype, const MessageFn& edge_fn);
// Messages along `etype` reduced at each destination: [num_nodes(dst type), ...].
Var update_all(const GraphFeatures& features, const std::string& etype, const MessageFn& message,
               const ReduceFn& reduce);
// Softmax of per-edge scores [num_edges(etype), ...] over each destination's in-edges (or source's out-edges).
Var edge_softmax(const HeteroGraph& graph, const std::string& etype, const Var& scores, NormBy norm_by = NormBy::Dst);

// DGL's multi_update_all: one update_all per relation, then the results for the same destination type are
// combined elementwise by the cross reducer (their shapes must match). Returns {dst node type -> Var}.
// Stack (DGL's "stack"): [num_dst, R, ...] with the relations in the order the updates name them.
enum class CrossReduce : std::uint8_t { Sum, Mean, Max, Min, Stack };
struct RelationUpdate {
  std::string etype;
  MessageFn message;
  ReduceFn reduce;
};
std::map<std::string, Var> multi_update_all(const GraphFeatures& features, const std::vector<RelationUpdate>& updates,
                                            CrossReduce cross);

}  // namespace topo::nn
