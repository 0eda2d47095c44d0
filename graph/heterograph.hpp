#pragma once
// HeteroGraph: typed nodes, relations (src type, edge type, dst type) each with a COO edge list, lazily
// built CSR (out-edges by source) and CSC (in-edges by destination), batch bookkeeping and named features.
//
// The structure is immutable after construction and shared between copies (copies, reverse() and
// edge_type_subgraph() reuse the same index tensors and format caches). The caches are built once, on first
// use, under std::call_once, so concurrent readers are safe; they are never invalidated because nothing can
// change the edges. Features (ndata/edata) belong to each HeteroGraph value and may be set at any time,
// with their row counts checked against the node/edge counts.
#include <cstdint>
#include <map>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "graph/edge_list.hpp"
#include "kernels/sparse/format.hpp"
#include "kernels/tensor.hpp"

namespace topo {

struct NodeTypeSpec {
  std::string name;
  std::int64_t count = 0;
  // Nodes per graph of a batch (sums to count); empty for a single graph.
  std::vector<std::int64_t> batch_counts = {};
};

struct RelationSpec {
  CanonicalEType etype;
  EdgeList edges;  // its batch_num_edges, if any, become the relation's per-graph edge counts
};

namespace detail {
// One lazily built format, shareable between relations (a reversed relation's CSR is the original's CSC).
struct FormatCache {
  std::once_flag once;
  std::atomic<bool> ready{false};  // set (release) after `view` is written, inside the call_once
  CsrView view;                    // with edge ids
  std::once_flag structure_once;
  std::atomic<bool> structure_ready{false};
  CsrView structure;  // view's indptr and indices, no eids (view's own arrays when it was built first)
  std::once_flag degrees_once;
  Tensor degrees;  // each row's entry count, from the structure's indptr; made on first ask
};
struct RelationData {
  CanonicalEType etype;
  int src_type = 0, dst_type = 0;
  Tensor src, dst;                              // [E]
  std::shared_ptr<FormatCache> csr, csc;        // by source / by destination
  std::vector<std::int64_t> batch_num_edges;    // [B]
};
struct GraphData {
  std::vector<std::string> node_types;
  std::vector<std::int64_t> num_nodes;
  std::vector<std::vector<std::int64_t>> batch_num_nodes;  // [types][B]
  std::vector<std::shared_ptr<const RelationData>> relations;
  std::int64_t batch_size = 1;
  DType id_dtype = DType::I32;
  Device device = Device::cpu();
};
}  // namespace detail

class HeteroGraph {
 public:
  HeteroGraph();  // no node types, no relations
  // Validates everything (types exist, ids in range, dtypes/devices agree, batch counts add up) and throws
  // topo::Error naming the relation, position and value; nothing is built when it throws. All relations
  // must share one id dtype (int32 or int64) and one device.
  HeteroGraph(const std::vector<NodeTypeSpec>& node_types, const std::vector<RelationSpec>& relations);

  // A one-type, one-relation graph ("_N", "_E", "_N") from an edge list.
  static HeteroGraph from_edges(const EdgeList& edges, std::int64_t num_nodes, const std::string& ntype = "_N",
                                const std::string& etype = "_E");

  // --- schema
  int num_node_types() const { return static_cast<int>(data_->node_types.size()); }
  int num_relations() const { return static_cast<int>(data_->relations.size()); }
  const std::vector<std::string>& node_types() const { return data_->node_types; }
  std::vector<CanonicalEType> canonical_etypes() const;
  int node_type_id(const std::string& ntype) const;  // throws naming the type and the known ones
  // By edge-type name (must be unambiguous) or by canonical triple.
  int relation_id(const std::string& etype) const;
  int relation_id(const CanonicalEType& etype) const;
  const CanonicalEType& canonical_etype(int relation) const;
  DType id_dtype() const { return data_->id_dtype; }
  Device device() const { return data_->device; }

  // --- sizes
  std::int64_t num_nodes(const std::string& ntype) const { return num_nodes(node_type_id(ntype)); }
  std::int64_t num_nodes(int ntype) const;
  std::int64_t total_num_nodes() const;
  std::int64_t num_edges(const std::string& etype) const { return num_edges(relation_id(etype)); }
  std::int64_t num_edges(int relation) const;
  std::int64_t total_num_edges() const;

  // --- formats
  EdgeList edges(int relation) const;  // COO (shares the graph's tensors)
  EdgeList edges(const std::string& etype) const { return edges(relation_id(etype)); }
  // CSR by source: rows = src nodes, indices = dst ids, eids = COO ids. Built on first use.
  const CsrView& out_csr(int relation) const;
  const CsrView& out_csr(const std::string& etype) const { return out_csr(relation_id(etype)); }
  // CSC by destination: rows = dst nodes, indices = src ids, eids = COO ids. Built on first use.
  const CsrView& in_csc(int relation) const;
  const CsrView& in_csc(const std::string& etype) const { return in_csc(relation_id(etype)); }
  // The same two formats without edge ids (CsrView::eids undefined), for what reads no edge data (copy_u
  // messages summed or averaged, degrees): a graph that never needs them never builds them, a third of its
  // formats' bytes (21M edges: 2 x 80 MiB). They share arrays with out_csr / in_csc whichever is built first;
  // on a CUDA graph they are out_csr / in_csc.
  const CsrView& out_csr_structure(int relation) const;
  const CsrView& in_csc_structure(int relation) const;
  // Which of a relation's formats exist now (DGL's formats()): nothing is built until first asked for.
  struct BuiltFormats {
    bool csr = false, csc = false;                    // the structure (indptr, indices)
    bool csr_edge_ids = false, csc_edge_ids = false;  // and its eids
  };
  BuiltFormats built_formats(int relation) const;

  // --- queries
  // Made once per relation and kept (a GCN layer asks every step), so the tensor is shared: read it, do not
  // write into it.
  Tensor in_degrees(int relation) const;   // [num dst nodes], id dtype, graph's device
  Tensor out_degrees(int relation) const;  // [num src nodes]
  Tensor in_degrees(const std::string& etype) const { return in_degrees(relation_id(etype)); }
  Tensor out_degrees(const std::string& etype) const { return out_degrees(relation_id(etype)); }
  struct NodeEdges {
    std::vector<std::int64_t> neighbors, eids;  // other endpoint and COO edge id, by increasing edge id
  };
  NodeEdges in_edges(int relation, std::int64_t node) const;   // edges into dst node `node`
  NodeEdges out_edges(int relation, std::int64_t node) const;  // edges out of src node `node`

  // --- transforms (share structure)
  // Every relation (A, e, B) becomes (B, e, A) with the same edge ids; CSR and CSC swap (caches shared).
  // Features are carried over.
  HeteroGraph reverse() const;
  // Only the named relations (edge-type names must be unambiguous), in the order given. Every node type and
  // its features are kept; the kept relations keep their edge features and share their format caches.
  HeteroGraph edge_type_subgraph(const std::vector<std::string>& etypes) const;
  HeteroGraph edge_type_subgraph(const std::vector<CanonicalEType>& etypes) const;
  // The same relations over only the node types `node_types`, in that order (their counts, batch counts and
  // features; DGL's relation slice keeps just the types its relations touch): each kept relation's end types
  // must be among them. Nothing is copied: the relations' index tensors and format caches are shared.
  HeteroGraph edge_type_subgraph(const std::vector<CanonicalEType>& etypes,
                                 const std::vector<std::string>& node_types) const;
  // Index tensors, built formats and features copied to `device`.
  HeteroGraph to(Device device) const;

  // --- batches (a plain graph is a batch of one)
  std::int64_t batch_size() const { return data_->batch_size; }
  const std::vector<std::int64_t>& batch_num_nodes(int ntype) const;
  const std::vector<std::int64_t>& batch_num_nodes(const std::string& ntype) const {
    return batch_num_nodes(node_type_id(ntype));
  }
  const std::vector<std::int64_t>& batch_num_edges(int relation) const;
  const std::vector<std::int64_t>& batch_num_edges(const std::string& etype) const {
    return batch_num_edges(relation_id(etype));
  }

  // --- features: [num_nodes(ntype), ...] / [num_edges(etype), ...] tensors by name
  void set_ndata(const std::string& ntype, const std::string& name, const Tensor& value);
  const Tensor& ndata(const std::string& ntype, const std::string& name) const;
  bool has_ndata(const std::string& ntype, const std::string& name) const;
  const std::map<std::string, Tensor>& ndata_map(int ntype) const { return ndata_.at(ntype); }
  void set_edata(const std::string& etype, const std::string& name, const Tensor& value);
  void set_edata(int relation, const std::string& name, const Tensor& value);
  const Tensor& edata(const std::string& etype, const std::string& name) const;
  bool has_edata(const std::string& etype, const std::string& name) const;
  const std::map<std::string, Tensor>& edata_map(int relation) const {
    (void)canonical_etype(relation);  // a topo::Error naming the index when it is out of range
    return edata_[static_cast<std::size_t>(relation)];
  }

 private:
  explicit HeteroGraph(std::shared_ptr<const detail::GraphData> data);
  const detail::RelationData& relation(int r) const;
  std::shared_ptr<const detail::GraphData> data_;
  std::vector<std::map<std::string, Tensor>> ndata_;  // [types]
  std::vector<std::map<std::string, Tensor>> edata_;  // [relations]
  friend HeteroGraph batch(const std::vector<HeteroGraph>& graphs);
};

}  // namespace topo
