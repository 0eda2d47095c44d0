// batch(): concatenation with id offsets. Strategy: sizes and offsets on the host first, one allocation per
// output array, then parallel_for over graphs copying each graph's block and adding its node offsets.
#include "graph/batch.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/parallel.hpp"

namespace topo {
namespace {

std::vector<std::int64_t> prefix(const std::vector<std::int64_t>& v) {
  std::vector<std::int64_t> out(v.size() + 1, 0);
  for (std::size_t i = 0; i < v.size(); ++i) out[i + 1] = out[i] + v[i];
  return out;
}

template <class T>
void offset_copy(const std::vector<const T*>& parts, const std::vector<std::int64_t>& edge_off,
                 const std::vector<std::int64_t>& node_off, T* out) {
  const auto n = static_cast<std::int64_t>(parts.size());
  parallel_for(n, edge_off.back() / std::max<std::int64_t>(n, 1) + 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t g = begin; g < end; ++g)
      for (std::int64_t e = 0; e < edge_off[g + 1] - edge_off[g]; ++e)
        out[edge_off[g] + e] = static_cast<T>(parts[g][e] + node_off[g]);
  });
}

Tensor offset_concat(const std::vector<Tensor>& ids, const std::vector<std::int64_t>& edge_off,
                     const std::vector<std::int64_t>& node_off, DType dtype) {
  Tensor out = Tensor::empty({edge_off.back()}, dtype);
  if (dtype == DType::I32) {
    std::vector<const std::int32_t*> p;
    for (const auto& t : ids) p.push_back(t.data<std::int32_t>());
    offset_copy(p, edge_off, node_off, out.data<std::int32_t>());
  } else {
    std::vector<const std::int64_t*> p;
    for (const auto& t : ids) p.push_back(t.data<std::int64_t>());
    offset_copy(p, edge_off, node_off, out.data<std::int64_t>());
  }
  return out;
}

std::vector<Tensor> split_rows(const std::vector<std::int64_t>& counts, const Tensor& rows, const std::string& what) {
  TOPO_CHECK(rows.defined() && rows.ndim() >= 1, "unbatch {}: needs a tensor with a row dimension", what);
  const auto off = prefix(counts);
  TOPO_CHECK(rows.size(0) == off.back(), "unbatch {}: tensor {} has {} rows, the batch has {}", what,
             shape_str(rows.shape()), rows.size(0), off.back());
  std::vector<Tensor> out;
  out.reserve(counts.size());
  for (std::size_t b = 0; b < counts.size(); ++b) out.push_back(rows.slice_rows(off[b], off[b + 1]));
  return out;
}

}  // namespace

Tensor concat_rows(const std::vector<Tensor>& parts) {
  TOPO_CHECK(!parts.empty(), "concat_rows: no tensors");
  Shape shape = parts[0].shape();
  TOPO_CHECK(!shape.empty(), "concat_rows: tensors need a row dimension");
  std::int64_t rows = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Tensor& p = parts[i];
    TOPO_CHECK(p.ndim() == parts[0].ndim() && p.row_numel() == parts[0].row_numel() && p.dtype() == parts[0].dtype() &&
                   p.device() == parts[0].device(),
               "concat_rows: part {} is {} {} but part 0 is {} {}", i, p.str(), shape_str(p.shape()), parts[0].str(),
               shape_str(shape));
    rows += p.size(0);
  }
  shape[0] = rows;
  Tensor out = Tensor::empty(shape, parts[0].dtype(), parts[0].device());
  std::int64_t at = 0;
  for (const Tensor& p : parts) {
    if (p.size(0) > 0) out.slice_rows(at, at + p.size(0)).copy_from(p);
    at += p.size(0);
  }
  return out;
}

HeteroGraph batch(const std::vector<HeteroGraph>& graphs_in) {
  TOPO_CHECK(!graphs_in.empty(), "batch: no graphs");
  const HeteroGraph& first = graphs_in[0];
  const Device device = first.device();
  std::vector<HeteroGraph> graphs;  // host copies (shallow when already on the CPU)
  graphs.reserve(graphs_in.size());
  for (std::size_t g = 0; g < graphs_in.size(); ++g) {
    const HeteroGraph& h = graphs_in[g];
    TOPO_CHECK(h.node_types() == first.node_types(), "batch: graph {} has node types [{}], graph 0 has [{}]", g,
               fmt::join(h.node_types(), ", "), fmt::join(first.node_types(), ", "));
    TOPO_CHECK(h.canonical_etypes() == first.canonical_etypes(), "batch: graph {} has other relations than graph 0",
               g);
    TOPO_CHECK(h.num_relations() == 0 || h.id_dtype() == first.id_dtype(),
               "batch: graph {} has {} ids, graph 0 has {}", g, dtype_name(h.id_dtype()), dtype_name(first.id_dtype()));
    TOPO_CHECK(h.device() == device, "batch: graph {} is on {}, graph 0 on {}", g, h.device().str(), device.str());
    graphs.push_back(h.to(Device::cpu()));
  }
  const int ntypes = first.num_node_types(), nrel = first.num_relations();
  auto data = std::make_shared<detail::GraphData>();
  data->node_types = first.node_types();
  data->id_dtype = first.id_dtype();
  data->device = Device::cpu();
  data->batch_size = 0;
  for (const auto& h : graphs) data->batch_size += h.batch_size();
  std::vector<std::vector<std::int64_t>> node_off(ntypes);  // [type][graph + 1]
  for (int t = 0; t < ntypes; ++t) {
    std::vector<std::int64_t> counts, flat;
    for (const auto& h : graphs) {
      counts.push_back(h.num_nodes(t));
      for (std::int64_t c : h.batch_num_nodes(t)) flat.push_back(c);
    }
    node_off[t] = prefix(counts);
    data->num_nodes.push_back(node_off[t].back());
    data->batch_num_nodes.push_back(std::move(flat));
  }
  for (int r = 0; r < nrel; ++r) {
    auto rel = std::make_shared<detail::RelationData>();
    const auto& proto = *first.data_->relations[r];
    rel->etype = proto.etype;
    rel->src_type = proto.src_type;
    rel->dst_type = proto.dst_type;
    std::vector<std::int64_t> counts;
    std::vector<Tensor> src, dst;
    for (const auto& h : graphs) {
      counts.push_back(h.num_edges(r));
      for (std::int64_t c : h.batch_num_edges(r)) rel->batch_num_edges.push_back(c);
      src.push_back(h.data_->relations[r]->src);
      dst.push_back(h.data_->relations[r]->dst);
    }
    const auto edge_off = prefix(counts);
    if (data->id_dtype == DType::I32)
      TOPO_CHECK(edge_off.back() < INT32_MAX && node_off[rel->src_type].back() < INT32_MAX &&
                     node_off[rel->dst_type].back() < INT32_MAX,
                 "batch: relation {} outgrows int32 ids ({} edges)", rel->etype.str(), edge_off.back());
    rel->src = offset_concat(src, edge_off, node_off[rel->src_type], data->id_dtype);
    rel->dst = offset_concat(dst, edge_off, node_off[rel->dst_type], data->id_dtype);
    rel->csr = std::make_shared<detail::FormatCache>();
    rel->csc = std::make_shared<detail::FormatCache>();
    data->relations.push_back(std::move(rel));
  }
  HeteroGraph out(std::move(data));
  // Features: present in all graphs or in none.
  auto merge = [&](auto get_map, int n, const char* kind, auto set) {
    for (int i = 0; i < n; ++i) {
      for (const auto& [name, value] : get_map(graphs[0], i)) {
        std::vector<Tensor> parts;
        for (std::size_t g = 0; g < graphs.size(); ++g) {
          const auto& m = get_map(graphs[g], i);
          const auto it = m.find(name);
          TOPO_CHECK(it != m.end(), "batch: graph {} lacks {} feature '{}' that graph 0 has", g, kind, name);
          parts.push_back(it->second);
        }
        set(out, i, name, concat_rows(parts));
      }
      for (std::size_t g = 1; g < graphs.size(); ++g)
        for (const auto& kv : get_map(graphs[g], i))
          TOPO_CHECK(get_map(graphs[0], i).count(kv.first) > 0,
                     "batch: graph {} has {} feature '{}' that graph 0 lacks", g, kind, kv.first);
    }
  };
  merge([](const HeteroGraph& h, int t) -> const std::map<std::string, Tensor>& { return h.ndata_map(t); }, ntypes,
        "node", [](HeteroGraph& h, int t, const std::string& name, const Tensor& v) {
          h.set_ndata(h.node_types()[t], name, v);
        });
  merge([](const HeteroGraph& h, int r) -> const std::map<std::string, Tensor>& { return h.edata_map(r); }, nrel,
        "edge", [](HeteroGraph& h, int r, const std::string& name, const Tensor& v) { h.set_edata(r, name, v); });
  return device.is_cpu() ? out : out.to(device);
}

std::vector<HeteroGraph> unbatch(const HeteroGraph& g_in) {
  const HeteroGraph g = g_in.to(Device::cpu());
  const std::int64_t B = g.batch_size();
  const int ntypes = g.num_node_types(), nrel = g.num_relations();
  std::vector<std::vector<std::int64_t>> node_off(ntypes), edge_off(nrel);
  for (int t = 0; t < ntypes; ++t) node_off[t] = prefix(g.batch_num_nodes(t));
  for (int r = 0; r < nrel; ++r) edge_off[r] = prefix(g.batch_num_edges(r));
  std::vector<HeteroGraph> out;
  out.reserve(static_cast<std::size_t>(B));
  for (std::int64_t b = 0; b < B; ++b) {
    std::vector<NodeTypeSpec> types;
    for (int t = 0; t < ntypes; ++t) types.push_back({g.node_types()[t], node_off[t][b + 1] - node_off[t][b]});
    std::vector<RelationSpec> rels;
    for (int r = 0; r < nrel; ++r) {
      const CanonicalEType& et = g.canonical_etype(r);
      const EdgeList all = g.edges(r);
      const std::int64_t e0 = edge_off[r][b], e1 = edge_off[r][b + 1];
      const std::vector<Tensor> src = {all.src.slice_rows(e0, e1)}, dst = {all.dst.slice_rows(e0, e1)};
      const std::vector<std::int64_t> span = {0, e1 - e0};
      rels.push_back({et, EdgeList{offset_concat(src, span, {-node_off[g.node_type_id(et.src_type)][b]}, g.id_dtype()),
                                   offset_concat(dst, span, {-node_off[g.node_type_id(et.dst_type)][b]}, g.id_dtype()),
                                   {}}});
    }
    try {
      out.emplace_back(types, rels);
    } catch (const Error& e) {
      fail("unbatch: graph {} of {}: {} (are its edges contiguous and in batch order?)", b, B, e.what());
    }
    HeteroGraph& h = out.back();
    for (int t = 0; t < ntypes; ++t)
      for (const auto& [name, value] : g.ndata_map(t))
        h.set_ndata(g.node_types()[t], name, value.slice_rows(node_off[t][b], node_off[t][b + 1]));
    for (int r = 0; r < nrel; ++r)
      for (const auto& [name, value] : g.edata_map(r))
        h.set_edata(r, name, value.slice_rows(edge_off[r][b], edge_off[r][b + 1]));
  }
  if (!g_in.device().is_cpu())
    for (auto& h : out) h = h.to(g_in.device());
  return out;
}

std::vector<std::int64_t> batch_node_offsets(const HeteroGraph& g, const std::string& ntype) {
  return prefix(g.batch_num_nodes(ntype));
}

std::vector<Tensor> unbatch_nodes(const HeteroGraph& g, const std::string& ntype, const Tensor& rows) {
  return split_rows(g.batch_num_nodes(ntype), rows, "nodes of '" + ntype + "'");
}
std::vector<Tensor> unbatch_edges(const HeteroGraph& g, const std::string& etype, const Tensor& rows) {
  return split_rows(g.batch_num_edges(etype), rows, "edges of '" + etype + "'");
}

}  // namespace topo
