#pragma once
// DGL's remaining message-passing verbs over GraphFeatures, all differentiable and all compositions of the
// existing ops (update_all, gspmm, index_select, elementwise masks): no kernel of their own.
//
//   apply_nodes(f, "_N", udf)                       per-node function of the node features -> [N, ...]
//   update_all(f, "_E", msg, reduce, apply)         update_all, then apply_node_func on the reduced nodes
//   send_and_recv(f, "_E", eids, msg, reduce)       messages along the given edges only
//   pull(f, "_E", nodes, msg, reduce)               = send_and_recv over the in-edges of `nodes`
//   push(f, "_E", nodes, msg, reduce)               = send_and_recv over the out-edges of `nodes`
//
// Like update_all, each returns the new node feature [num_nodes(type), ...] and leaves the GraphFeatures
// unchanged (store it with set_ndata). DGL writes only some rows in place; here the rows DGL would leave
// alone are copied from the current feature named `reduce.out` of that type (DGL's "keep their data") or
// are 0 when the type has no such feature yet; the rows it writes are documented per verb. The copied
// rows pass their gradient straight through, the written rows send none to the old value.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "nn/message_passing.hpp"

namespace topo::nn {

// The nodes of one type as an apply function sees them: row i is node ids()[i] (every node, in order,
// unless the verb names a subset). Valid only during the call.
class NodeBatch {
 public:
  // ids: int64 [M] node ids, or undefined for every node. `fresh` features (the reduced message of
  // update_all) shadow the stored ones of the same name.
  NodeBatch(const GraphFeatures& features, int ntype, Tensor ids = {}, std::map<std::string, Var> fresh = {});
  Var data(const std::string& name) const;  // [num_nodes(), ...]
  std::int64_t num_nodes() const;
  const std::string& ntype() const;

 private:
  const GraphFeatures* features_;
  int ntype_;
  Tensor ids_;
  std::map<std::string, Var> fresh_;
};

// f(nodes) -> [nodes.num_nodes(), ...]: DGL's apply_nodes UDF / apply_node_func.
using NodeUdf = std::function<Var(const NodeBatch&)>;

// f over every node of `ntype` -> [num_nodes, ...].
Var apply_nodes(const GraphFeatures& features, const std::string& ntype, const NodeUdf& f);
// f over `nodes` only (distinct ids); the other rows are feature `keep` of the type (0 when it is absent).
// The results reach their rows through a gspmm (copy_u, sum) over a one-edge-per-node scatter block.
Var apply_nodes(const GraphFeatures& features, const std::string& ntype, const NodeUdf& f,
                const std::vector<std::int64_t>& nodes, const std::string& keep);

// update_all, then apply_node_func over every destination node with data(reduce.out) the reduced
// messages; returns what it returns ([num_dst, ...]).
Var update_all(const GraphFeatures& features, const std::string& etype, const MessageFn& message,
               const ReduceFn& reduce, const NodeUdf& apply_node_func);

// Messages along edges `eids` of `etype` only (distinct ids; message UDFs see just those edges, edge
// features are sliced to them). Rows written: the destinations of those edges (reduce, then apply when
// given); every other row keeps its value (see above).
Var send_and_recv(const GraphFeatures& features, const std::string& etype, const std::vector<std::int64_t>& eids,
                  const MessageFn& message, const ReduceFn& reduce, const NodeUdf& apply_node_func = {});
// Rows written: `nodes` (duplicates ignored), from their in-edges; a node without in-edges gets the empty
// reduction, 0 (as DGL's pull).
Var pull(const GraphFeatures& features, const std::string& etype, const std::vector<std::int64_t>& nodes,
         const MessageFn& message, const ReduceFn& reduce, const NodeUdf& apply_node_func = {});
// Messages along the out-edges of source `nodes` (duplicates ignored); rows written: their destinations.
Var push(const GraphFeatures& features, const std::string& etype, const std::vector<std::int64_t>& nodes,
         const MessageFn& message, const ReduceFn& reduce, const NodeUdf& apply_node_func = {});

}  // namespace topo::nn
