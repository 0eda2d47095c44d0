// HeteroGraph construction (validation into locals, then one move), lazy formats, queries and transforms.
#include "graph/heterograph.hpp"

#include <algorithm>
#include <atomic>
#include <numeric>

#include "kernels/parallel.hpp"

namespace topo {
namespace {

// Position of the first id outside [0, count), or -1. Parallel over chunks (each records the first bad
// position it sees; the minimum over chunks is the first overall), so a valid batch costs one read pass.
template <class T>
std::int64_t first_bad_id(const T* ids, std::int64_t n, std::int64_t count) {
  std::atomic<std::int64_t> first{n};
  parallel_for(n, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i)
      if (!id_in_range(ids[i], count)) {
        std::int64_t seen = first.load();
        while (i < seen && !first.compare_exchange_weak(seen, i)) {
        }
        return;
      }
  });
  const std::int64_t f = first.load();
  return f == n ? -1 : f;
}

void check_ids(const Tensor& ids, std::int64_t count, const CanonicalEType& etype, const char* side,
               const std::string& ntype) {
  const Tensor host = ids.to(Device::cpu());
  std::int64_t bad = -1, value = 0;
  if (host.dtype() == DType::I32) {
    bad = first_bad_id(host.data<std::int32_t>(), host.numel(), count);
    if (bad >= 0) value = host.data<std::int32_t>()[bad];
  } else {
    bad = first_bad_id(host.data<std::int64_t>(), host.numel(), count);
    if (bad >= 0) value = host.data<std::int64_t>()[bad];
  }
  if (bad >= 0)
    fail("relation {}: {}[{}] = {} is not a valid '{}' node id (there are {})", etype.str(), side, bad, value,
         ntype, count);
}

std::int64_t sum(const std::vector<std::int64_t>& v) { return std::accumulate(v.begin(), v.end(), std::int64_t{0}); }

}  // namespace

HeteroGraph::HeteroGraph() : HeteroGraph(std::make_shared<detail::GraphData>()) {}

HeteroGraph::HeteroGraph(std::shared_ptr<const detail::GraphData> data)
    : data_(std::move(data)), ndata_(data_->node_types.size()), edata_(data_->relations.size()) {}

HeteroGraph::HeteroGraph(const std::vector<NodeTypeSpec>& node_types, const std::vector<RelationSpec>& relations) {
  auto data = std::make_shared<detail::GraphData>();
  // Batch size: the longest per-graph count list given (1 when none is). A node type or relation without
  // per-graph counts is accepted only in a batch of one.
  std::int64_t batch = 1;
  for (const auto& nt : node_types) batch = std::max(batch, static_cast<std::int64_t>(nt.batch_counts.size()));
  for (const auto& rel : relations)
    batch = std::max(batch, static_cast<std::int64_t>(rel.edges.batch_num_edges.size()));
  data->batch_size = batch;

  for (const auto& nt : node_types) {
    TOPO_CHECK(!nt.name.empty(), "HeteroGraph: a node type has an empty name");
    TOPO_CHECK(std::find(data->node_types.begin(), data->node_types.end(), nt.name) == data->node_types.end(),
               "HeteroGraph: node type '{}' is declared twice", nt.name);
    TOPO_CHECK(nt.count >= 0, "HeteroGraph: node type '{}' has a negative count {}", nt.name, nt.count);
    if (!nt.batch_counts.empty() || batch > 1) {
      TOPO_CHECK(static_cast<std::int64_t>(nt.batch_counts.size()) == batch,
                 "HeteroGraph: node type '{}' has {} per-graph counts but the batch has {} graphs", nt.name,
                 nt.batch_counts.size(), batch);
      for (std::size_t b = 0; b < nt.batch_counts.size(); ++b)
        TOPO_CHECK(nt.batch_counts[b] >= 0, "HeteroGraph: node type '{}': graph {} has count {}", nt.name, b,
                   nt.batch_counts[b]);
      TOPO_CHECK(sum(nt.batch_counts) == nt.count,
                 "HeteroGraph: node type '{}': per-graph counts sum to {}, not its count {}", nt.name,
                 sum(nt.batch_counts), nt.count);
    }
    data->node_types.push_back(nt.name);
    data->num_nodes.push_back(nt.count);
    data->batch_num_nodes.push_back(nt.batch_counts.empty() ? std::vector<std::int64_t>{nt.count} : nt.batch_counts);
  }

  auto type_of = [&](const std::string& name, const CanonicalEType& et) {
    const auto it = std::find(data->node_types.begin(), data->node_types.end(), name);
    if (it == data->node_types.end())
      fail("relation {}: unknown node type '{}' (node types: {})", et.str(), name, fmt::join(data->node_types, ", "));
    return static_cast<int>(it - data->node_types.begin());
  };
  for (std::size_t r = 0; r < relations.size(); ++r) {
    const RelationSpec& spec = relations[r];
    const CanonicalEType& et = spec.etype;
    TOPO_CHECK(!et.etype.empty(), "relation {}: empty edge-type name", et.str());
    for (const auto& other : data->relations)
      TOPO_CHECK(!(other->etype == et), "relation {} is declared twice", et.str());
    auto rel = std::make_shared<detail::RelationData>();
    rel->etype = et;
    rel->src_type = type_of(et.src_type, et);
    rel->dst_type = type_of(et.dst_type, et);
    const Tensor& src = spec.edges.src;
    const Tensor& dst = spec.edges.dst;
    TOPO_CHECK(src.defined() && dst.defined(), "relation {}: src/dst tensors are undefined", et.str());
    TOPO_CHECK(src.ndim() == 1 && dst.ndim() == 1 && src.numel() == dst.numel(),
               "relation {}: src {} and dst {} must be 1-d of one length", et.str(), shape_str(src.shape()),
               shape_str(dst.shape()));
    TOPO_CHECK(src.dtype() != DType::F32 && src.dtype() == dst.dtype(),
               "relation {}: src ({}) and dst ({}) must share an integer dtype", et.str(), dtype_name(src.dtype()),
               dtype_name(dst.dtype()));
    TOPO_CHECK(src.device() == dst.device(), "relation {}: src on {} but dst on {}", et.str(), src.device().str(),
               dst.device().str());
    if (r == 0) {
      data->id_dtype = src.dtype();
      data->device = src.device();
    }
    TOPO_CHECK(src.dtype() == data->id_dtype, "relation {}: ids are {} but relation {} has {}", et.str(),
               dtype_name(src.dtype()), relations[0].etype.str(), dtype_name(data->id_dtype));
    TOPO_CHECK(src.device() == data->device, "relation {}: on {} but relation {} is on {}", et.str(),
               src.device().str(), relations[0].etype.str(), data->device.str());
    const std::int64_t ne = src.numel();
    if (data->id_dtype == DType::I32)
      TOPO_CHECK(ne < INT32_MAX, "relation {}: {} edges need int64 ids", et.str(), ne);
    const auto& bne = spec.edges.batch_num_edges;
    if (!bne.empty() || batch > 1) {
      TOPO_CHECK(static_cast<std::int64_t>(bne.size()) == batch,
                 "relation {}: {} per-graph edge counts but the batch has {} graphs", et.str(), bne.size(), batch);
      TOPO_CHECK(sum(bne) == ne, "relation {}: per-graph edge counts sum to {}, not its {} edges", et.str(),
                 sum(bne), ne);
    }
    rel->batch_num_edges = bne.empty() ? std::vector<std::int64_t>{ne} : bne;
    check_ids(src, data->num_nodes[rel->src_type], et, "src", et.src_type);
    check_ids(dst, data->num_nodes[rel->dst_type], et, "dst", et.dst_type);
    rel->src = src;
    rel->dst = dst;
    rel->csr = std::make_shared<detail::FormatCache>();
    rel->csc = std::make_shared<detail::FormatCache>();
    data->relations.push_back(std::move(rel));
  }
  // Every node type, also one no relation touches (or a graph without relations, int32 by default): an int32
  // graph numbers each type's nodes in int32, and its formats (indptr [n + 1]) are built in that type.
  if (data->id_dtype == DType::I32)
    for (std::size_t t = 0; t < data->node_types.size(); ++t)
      TOPO_CHECK(data->num_nodes[t] < INT32_MAX, "node type '{}': {} nodes need int64 ids", data->node_types[t],
                 data->num_nodes[t]);
  ndata_.assign(data->node_types.size(), {});
  edata_.assign(data->relations.size(), {});
  data_ = std::move(data);
}

HeteroGraph HeteroGraph::from_edges(const EdgeList& edges, std::int64_t num_nodes, const std::string& ntype,
                                    const std::string& etype) {
  EdgeList e = edges;
  e.batch_num_edges.clear();  // one graph: a batched edge list's node split is not known here
  return HeteroGraph({NodeTypeSpec{ntype, num_nodes}}, {{{ntype, etype, ntype}, e}});
}

std::vector<CanonicalEType> HeteroGraph::canonical_etypes() const {
  std::vector<CanonicalEType> out;
  for (const auto& r : data_->relations) out.push_back(r->etype);
  return out;
}

int HeteroGraph::node_type_id(const std::string& ntype) const {
  const auto& names = data_->node_types;
  const auto it = std::find(names.begin(), names.end(), ntype);
  if (it == names.end()) fail("unknown node type '{}' (node types: {})", ntype, fmt::join(names, ", "));
  return static_cast<int>(it - names.begin());
}

int HeteroGraph::relation_id(const std::string& etype) const {
  int found = -1;
  std::vector<std::string> names;
  for (int r = 0; r < num_relations(); ++r) {
    const auto& et = data_->relations[r]->etype;
    names.push_back(et.str());
    if (et.etype != etype) continue;
    if (found >= 0)
      fail("edge type '{}' is ambiguous: {} and {}; use the canonical (src, etype, dst)", etype,
           data_->relations[found]->etype.str(), et.str());
    found = r;
  }
  if (found < 0) fail("unknown edge type '{}' (relations: {})", etype, fmt::join(names, ", "));
  return found;
}

int HeteroGraph::relation_id(const CanonicalEType& etype) const {
  for (int r = 0; r < num_relations(); ++r)
    if (data_->relations[r]->etype == etype) return r;
  std::vector<std::string> names;
  for (const auto& r : data_->relations) names.push_back(r->etype.str());
  fail("unknown relation {} (relations: {})", etype.str(), fmt::join(names, ", "));
}

const detail::RelationData& HeteroGraph::relation(int r) const {
  TOPO_CHECK(r >= 0 && r < num_relations(), "relation index {} is outside [0, {})", r, num_relations());
  return *data_->relations[r];
}

const CanonicalEType& HeteroGraph::canonical_etype(int r) const { return relation(r).etype; }

std::int64_t HeteroGraph::num_nodes(int ntype) const {
  TOPO_CHECK(ntype >= 0 && ntype < num_node_types(), "node type index {} is outside [0, {})", ntype,
             num_node_types());
  return data_->num_nodes[ntype];
}
std::int64_t HeteroGraph::total_num_nodes() const { return sum(data_->num_nodes); }
std::int64_t HeteroGraph::num_edges(int r) const { return relation(r).src.numel(); }
std::int64_t HeteroGraph::total_num_edges() const {
  std::int64_t n = 0;
  for (const auto& r : data_->relations) n += r->src.numel();
  return n;
}

EdgeList HeteroGraph::edges(int r) const {
  const auto& rel = relation(r);
  return EdgeList{rel.src, rel.dst, rel.batch_num_edges};
}

namespace {
const CsrView& build_once(detail::FormatCache& cache, const Tensor& rows, const Tensor& cols,
                          std::int64_t num_rows, std::int64_t num_cols) {
  std::call_once(cache.once, [&] {
    if (cache.structure_ready.load(std::memory_order_acquire)) {  // only the edge ids are new
      CsrView view = cache.structure;
      view.eids = coo_to_csr(rows, cols, num_rows, num_cols, CsrArrays::edge_ids).eids;
      cache.view = std::move(view);
    } else {
      cache.view = coo_to_csr(rows, cols, num_rows, num_cols);
    }
    cache.ready.store(true, std::memory_order_release);
  });
  return cache.view;
}
// Two threads asking for the two forms at once may each build their own arrays: the same values, twice the
// memory for that relation, never a wrong result.
const CsrView& build_structure_once(detail::FormatCache& cache, const Tensor& rows, const Tensor& cols,
                                    std::int64_t num_rows, std::int64_t num_cols) {
  std::call_once(cache.structure_once, [&] {
    if (cache.ready.load(std::memory_order_acquire) || rows.device().is_cuda()) {
      CsrView view = build_once(cache, rows, cols, num_rows, num_cols);
      if (!rows.device().is_cuda()) view.eids = Tensor();  // the CUDA kernels read eids unconditionally
      cache.structure = std::move(view);
    } else {
      cache.structure = coo_to_csr(rows, cols, num_rows, num_cols, CsrArrays::structure);
    }
    cache.structure_ready.store(true, std::memory_order_release);
  });
  return cache.structure;
}
}  // namespace

const CsrView& HeteroGraph::out_csr(int r) const {
  const auto& rel = relation(r);
  return build_once(*rel.csr, rel.src, rel.dst, data_->num_nodes[rel.src_type], data_->num_nodes[rel.dst_type]);
}
const CsrView& HeteroGraph::in_csc(int r) const {
  const auto& rel = relation(r);
  return build_once(*rel.csc, rel.dst, rel.src, data_->num_nodes[rel.dst_type], data_->num_nodes[rel.src_type]);
}
const CsrView& HeteroGraph::out_csr_structure(int r) const {
  const auto& rel = relation(r);
  return build_structure_once(*rel.csr, rel.src, rel.dst, data_->num_nodes[rel.src_type],
                              data_->num_nodes[rel.dst_type]);
}
const CsrView& HeteroGraph::in_csc_structure(int r) const {
  const auto& rel = relation(r);
  return build_structure_once(*rel.csc, rel.dst, rel.src, data_->num_nodes[rel.dst_type],
                              data_->num_nodes[rel.src_type]);
}

HeteroGraph::BuiltFormats HeteroGraph::built_formats(int r) const {
  const auto& rel = relation(r);
  BuiltFormats b;
  b.csr_edge_ids = rel.csr->ready.load(std::memory_order_acquire);
  b.csc_edge_ids = rel.csc->ready.load(std::memory_order_acquire);
  b.csr = b.csr_edge_ids || rel.csr->structure_ready.load(std::memory_order_acquire);
  b.csc = b.csc_edge_ids || rel.csc->structure_ready.load(std::memory_order_acquire);
  return b;
}

namespace {
const Tensor& cached_degrees(detail::FormatCache& cache, const CsrView& structure) {
  std::call_once(cache.degrees_once, [&] { cache.degrees = degrees_from_indptr(structure.indptr); });
  return cache.degrees;
}
}  // namespace

Tensor HeteroGraph::in_degrees(int r) const { return cached_degrees(*relation(r).csc, in_csc_structure(r)); }
Tensor HeteroGraph::out_degrees(int r) const { return cached_degrees(*relation(r).csr, out_csr_structure(r)); }

namespace {
HeteroGraph::NodeEdges row_of(const CsrView& view, std::int64_t node, const CanonicalEType& et, const char* side) {
  TOPO_CHECK(node >= 0 && node < view.num_rows, "relation {}: {} node {} is outside [0, {})", et.str(), side, node,
             view.num_rows);
  auto to_i64 = [](const Tensor& t) {
    if (t.dtype() == DType::I64) return t.to_vector<std::int64_t>();
    const auto v = t.to_vector<std::int32_t>();
    return std::vector<std::int64_t>(v.begin(), v.end());
  };
  const auto bounds = to_i64(view.indptr.slice_rows(node, node + 2));
  HeteroGraph::NodeEdges out;
  out.neighbors = to_i64(view.indices.slice_rows(bounds[0], bounds[1]));
  out.eids = to_i64(view.eids.slice_rows(bounds[0], bounds[1]));
  return out;
}
}  // namespace

HeteroGraph::NodeEdges HeteroGraph::in_edges(int r, std::int64_t node) const {
  return row_of(in_csc(r), node, relation(r).etype, "destination");
}
HeteroGraph::NodeEdges HeteroGraph::out_edges(int r, std::int64_t node) const {
  return row_of(out_csr(r), node, relation(r).etype, "source");
}

HeteroGraph HeteroGraph::reverse() const {
  auto data = std::make_shared<detail::GraphData>(*data_);
  for (auto& rel_ptr : data->relations) {
    const auto& old = *rel_ptr;
    auto rel = std::make_shared<detail::RelationData>();
    rel->etype = {old.etype.dst_type, old.etype.etype, old.etype.src_type};
    rel->src_type = old.dst_type;
    rel->dst_type = old.src_type;
    rel->src = old.dst;
    rel->dst = old.src;
    rel->csr = old.csc;  // CSR of the reverse = CSC of the original (and the caches are shared)
    rel->csc = old.csr;
    rel->batch_num_edges = old.batch_num_edges;
    rel_ptr = std::move(rel);
  }
  HeteroGraph out(std::move(data));
  out.ndata_ = ndata_;
  out.edata_ = edata_;
  return out;
}

HeteroGraph HeteroGraph::edge_type_subgraph(const std::vector<CanonicalEType>& etypes) const {
  return edge_type_subgraph(etypes, data_->node_types);
}

HeteroGraph HeteroGraph::edge_type_subgraph(const std::vector<CanonicalEType>& etypes,
                                             const std::vector<std::string>& node_types) const {
  std::vector<int> kept_type(data_->node_types.size(), -1);  // old node type -> new, -1 when dropped
  auto data = std::make_shared<detail::GraphData>();
  data->batch_size = data_->batch_size;
  data->id_dtype = data_->id_dtype;
  data->device = data_->device;
  std::vector<int> old_types;
  for (const auto& name : node_types) {
    const int t = node_type_id(name);
    if (kept_type[t] >= 0) fail("edge_type_subgraph: node type '{}' is named twice", name);
    kept_type[t] = static_cast<int>(old_types.size());
    old_types.push_back(t);
    data->node_types.push_back(data_->node_types[t]);
    data->num_nodes.push_back(data_->num_nodes[t]);
    data->batch_num_nodes.push_back(data_->batch_num_nodes[t]);
  }
  std::vector<int> ids;
  for (const auto& et : etypes) {
    const int r = relation_id(et);
    const auto& old = *data_->relations[r];
    for (const auto& [side, type] : {std::pair{"source", old.src_type}, std::pair{"destination", old.dst_type}})
      if (kept_type[type] < 0)
        fail("edge_type_subgraph: relation {} needs its {} type '{}', which is not among the node types kept ({})",
             old.etype.str(), side, data_->node_types[type], fmt::join(node_types, ", "));
    if (kept_type[old.src_type] == old.src_type && kept_type[old.dst_type] == old.dst_type) {
      data->relations.push_back(data_->relations[r]);  // its types keep their numbers: the same relation
    } else {
      auto rel = std::make_shared<detail::RelationData>(old);  // shares src, dst and the format caches
      rel->src_type = kept_type[old.src_type];
      rel->dst_type = kept_type[old.dst_type];
      data->relations.push_back(std::move(rel));
    }
    ids.push_back(r);
  }
  HeteroGraph out(std::move(data));
  for (std::size_t k = 0; k < old_types.size(); ++k) out.ndata_[k] = ndata_[old_types[k]];
  for (std::size_t k = 0; k < ids.size(); ++k) out.edata_[k] = edata_[ids[k]];
  return out;
}

HeteroGraph HeteroGraph::edge_type_subgraph(const std::vector<std::string>& etypes) const {
  std::vector<CanonicalEType> canon;
  for (const auto& name : etypes) canon.push_back(canonical_etype(relation_id(name)));
  return edge_type_subgraph(canon);
}

HeteroGraph HeteroGraph::to(Device device) const {
  if (device == data_->device) return *this;
  auto data = std::make_shared<detail::GraphData>(*data_);
  data->device = device;
  auto move_cache = [&](const detail::FormatCache& from) {
    auto cache = std::make_shared<detail::FormatCache>();
    if (from.ready.load(std::memory_order_acquire)) {  // carry a built format instead of rebuilding it there
      std::call_once(cache->once, [&] {
        cache->view = {from.view.indptr.to(device), from.view.indices.to(device), from.view.eids.to(device),
                       from.view.num_rows, from.view.num_cols};
        cache->ready.store(true, std::memory_order_release);
      });
    }
    return cache;
  };
  for (auto& rel_ptr : data->relations) {
    auto rel = std::make_shared<detail::RelationData>();
    rel->etype = rel_ptr->etype;
    rel->src_type = rel_ptr->src_type;
    rel->dst_type = rel_ptr->dst_type;
    rel->src = rel_ptr->src.to(device);
    rel->dst = rel_ptr->dst.to(device);
    rel->csr = move_cache(*rel_ptr->csr);
    rel->csc = move_cache(*rel_ptr->csc);
    rel->batch_num_edges = rel_ptr->batch_num_edges;
    rel_ptr = std::move(rel);
  }
  HeteroGraph out(std::move(data));
  for (std::size_t t = 0; t < ndata_.size(); ++t)
    for (const auto& [name, value] : ndata_[t]) out.ndata_[t][name] = value.to(device);
  for (std::size_t r = 0; r < edata_.size(); ++r)
    for (const auto& [name, value] : edata_[r]) out.edata_[r][name] = value.to(device);
  return out;
}

const std::vector<std::int64_t>& HeteroGraph::batch_num_nodes(int ntype) const {
  num_nodes(ntype);  // range check
  return data_->batch_num_nodes[ntype];
}
const std::vector<std::int64_t>& HeteroGraph::batch_num_edges(int r) const { return relation(r).batch_num_edges; }

void HeteroGraph::set_ndata(const std::string& ntype, const std::string& name, const Tensor& value) {
  const int t = node_type_id(ntype);
  TOPO_CHECK(value.defined() && value.ndim() >= 1, "ndata['{}']['{}']: needs a tensor with a row dimension",
             ntype, name);
  TOPO_CHECK(value.size(0) == num_nodes(t), "ndata['{}']['{}']: {} has {} rows but '{}' has {} nodes", ntype, name,
             shape_str(value.shape()), value.size(0), ntype, num_nodes(t));
  TOPO_CHECK(value.device() == device(), "ndata['{}']['{}']: tensor on {} but the graph is on {}", ntype, name,
             value.device().str(), device().str());
  ndata_[t][name] = value;
}

const Tensor& HeteroGraph::ndata(const std::string& ntype, const std::string& name) const {
  const auto& m = ndata_[node_type_id(ntype)];
  const auto it = m.find(name);
  if (it == m.end()) fail("node type '{}' has no feature '{}'", ntype, name);
  return it->second;
}
bool HeteroGraph::has_ndata(const std::string& ntype, const std::string& name) const {
  return ndata_[node_type_id(ntype)].count(name) > 0;
}

void HeteroGraph::set_edata(int r, const std::string& name, const Tensor& value) {
  const auto& et = relation(r).etype;
  TOPO_CHECK(value.defined() && value.ndim() >= 1, "edata[{}]['{}']: needs a tensor with a row dimension",
             et.str(), name);
  TOPO_CHECK(value.size(0) == num_edges(r), "edata[{}]['{}']: {} has {} rows but the relation has {} edges",
             et.str(), name, shape_str(value.shape()), value.size(0), num_edges(r));
  TOPO_CHECK(value.device() == device(), "edata[{}]['{}']: tensor on {} but the graph is on {}", et.str(), name,
             value.device().str(), device().str());
  edata_[r][name] = value;
}
void HeteroGraph::set_edata(const std::string& etype, const std::string& name, const Tensor& value) {
  set_edata(relation_id(etype), name, value);
}
const Tensor& HeteroGraph::edata(const std::string& etype, const std::string& name) const {
  const int r = relation_id(etype);
  const auto it = edata_[r].find(name);
  if (it == edata_[r].end()) fail("relation {} has no feature '{}'", canonical_etype(r).str(), name);
  return it->second;
}
bool HeteroGraph::has_edata(const std::string& etype, const std::string& name) const {
  return edata_[relation_id(etype)].count(name) > 0;
}

}  // namespace topo
