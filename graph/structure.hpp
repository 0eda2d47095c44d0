#pragma once
// DGL's structure queries and transforms on a HeteroGraph: in_edges / out_edges / predecessors / successors,
// in_subgraph, node_subgraph, edge_subgraph, add_self_loop, remove_self_loop, to_simple (reverse is
// HeteroGraph::reverse). Each builds a new graph (the structure is immutable); all are host-side passes
// over the COO lists (a graph on another device is read through a host copy and the result moved back).
//
// Ids are int64 host vectors in and out. A relation is named by its edge-type name, or "" when the graph
// has exactly one relation (DGL's etype=None). Bad input (unknown type, id out of range, a duplicate id
// where a set is expected, a self loop across two node types) is a topo::Error naming the relation, the
// position and the value; nothing is built when it throws.
//
// Subgraphs keep the original ids as DGL does: ndata[kNID] (int64 [n]) maps each subgraph node to its id
// in the parent graph and edata[kEID] (int64 [m]) each subgraph edge to its parent edge id; the parent's
// features are sliced along with them. A subgraph is a single graph (batch of one), as the batch split no
// longer describes it.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/heterograph.hpp"

namespace topo {

inline const std::string kNID = "_ID";  // dgl.NID
inline const std::string kEID = "_ID";  // dgl.EID

// DGL's form='all': edge k is src[k] -> dst[k] with parent edge id eid[k].
struct EdgeIds {
  std::vector<std::int64_t> src, dst, eid;
  std::size_t size() const { return eid.size(); }
};

// Edges into (out of) any of `nodes`: grouped by node in the order given, by increasing edge id within a
// node; a node repeated in `nodes` lists its edges again (as DGL). Node ids are checked against the
// relation's destination (source) type.
EdgeIds in_edges(const HeteroGraph& g, const std::vector<std::int64_t>& nodes, const std::string& etype = "");
EdgeIds out_edges(const HeteroGraph& g, const std::vector<std::int64_t>& nodes, const std::string& etype = "");
// Sources of `node`'s in-edges (destinations of its out-edges), by increasing edge id; a neighbour joined
// by k parallel edges appears k times (as DGL).
std::vector<std::int64_t> predecessors(const HeteroGraph& g, std::int64_t node, const std::string& etype = "");
std::vector<std::int64_t> successors(const HeteroGraph& g, std::int64_t node, const std::string& etype = "");

// Node sets per node type: {ntype -> ids}. A type left out contributes no nodes.
using NodeSets = std::map<std::string, std::vector<std::int64_t>>;
// Edge sets per relation: {edge-type name -> edge ids}. A relation left out contributes no edges.
using EdgeSets = std::map<std::string, std::vector<std::int64_t>>;

// Every in-edge (all relations) of the given destination nodes; all nodes of every type are kept (DGL's
// relabel_nodes=False) with their features; edges keep their relation order and increasing parent id,
// edata[kEID] their parent ids.
HeteroGraph in_subgraph(const HeteroGraph& g, const NodeSets& nodes);
// The subgraph induced by the given nodes: node i of type t is nodes[t][i] (order as given, no
// duplicates); every edge (all relations) whose both ends are kept, grouped by source in the order given and by
// increasing parent edge id within a source (DGL 2.1's order: it slices the relation's CSR).
HeteroGraph node_subgraph(const HeteroGraph& g, const NodeSets& nodes);
// The given edges (order as given, no duplicates). relabel_nodes: each type keeps only the nodes the kept
// edges touch, by increasing parent id; otherwise every node is kept (no kNID then, as DGL).
HeteroGraph edge_subgraph(const HeteroGraph& g, const EdgeSets& edges, bool relabel_nodes = true);

// One self loop per node of the relation's (single) node type, after the existing edges (edge ids E..E+N-1
// for a single graph; in a batch each graph's loops follow that graph's edges, so the batch stays
// unbatchable and the later graphs' edge ids shift). Existing edge features are extended with rows equal
// to `fill` (DGL's fill_data; any dtype). Does not check for loops already present (as DGL).
HeteroGraph add_self_loop(const HeteroGraph& g, const std::string& etype = "", float fill = 1.f);
// Removes every edge u -> u of the relation; the remaining edges keep their order and features.
HeteroGraph remove_self_loop(const HeteroGraph& g, const std::string& etype = "");

// Merges parallel edges of every relation: one edge per distinct (src, dst), sorted by (src, dst);
// edata[count_name] (int64 [m]) counts the merged edges (DGL's return_counts; "" for none). Node features
// are kept, edge features dropped (DGL's copy_edata=False). writeback (optional): per relation, the new
// edge id of each parent edge (DGL's writeback_mapping). Batch counts are kept.
HeteroGraph to_simple(const HeteroGraph& g, const std::string& count_name = "count",
                      std::vector<std::vector<std::int64_t>>* writeback = nullptr);

}  // namespace topo
