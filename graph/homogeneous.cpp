// to_homogeneous: host-side offsets, then one parallel pass per relation adding node offsets (on the CPU;
// a graph on another device is converted there via a host copy and moved back).
#include "graph/homogeneous.hpp"

#include <algorithm>

#include "graph/batch.hpp"
#include "kernels/parallel.hpp"

namespace topo {
namespace {

template <class T>
void shift_into(const T* in, std::int64_t n, std::int64_t offset, T* out) {
  parallel_for(n, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) out[i] = static_cast<T>(in[i] + offset);
  });
}

}  // namespace

HomogeneousGraph to_homogeneous(const HeteroGraph& g_in, const std::vector<std::string>& etypes) {
  const HeteroGraph g = g_in.to(Device::cpu());
  HomogeneousGraph out;
  if (etypes.empty())
    for (int r = 0; r < g.num_relations(); ++r) out.relations.push_back(r);
  else
    for (const auto& name : etypes) out.relations.push_back(g.relation_id(name));
  out.node_offsets.assign(1, 0);
  for (int t = 0; t < g.num_node_types(); ++t) out.node_offsets.push_back(out.node_offsets.back() + g.num_nodes(t));
  out.edge_offsets.assign(1, 0);
  for (int r : out.relations) out.edge_offsets.push_back(out.edge_offsets.back() + g.num_edges(r));
  const std::int64_t total_nodes = out.node_offsets.back(), total_edges = out.edge_offsets.back();
  const DType dtype = g.id_dtype();
  if (dtype == DType::I32)
    TOPO_CHECK(total_nodes < INT32_MAX && total_edges < INT32_MAX,
               "to_homogeneous: {} nodes / {} edges outgrow int32 ids", total_nodes, total_edges);
  EdgeList edges{Tensor::empty({total_edges}, dtype), Tensor::empty({total_edges}, dtype), {}};
  out.edge_type = Tensor::empty({total_edges}, DType::I32);
  std::int32_t* et = out.edge_type.data<std::int32_t>();
  for (std::size_t k = 0; k < out.relations.size(); ++k) {
    const int r = out.relations[k];
    const EdgeList e = g.edges(r);
    const auto& cet = g.canonical_etype(r);
    const std::int64_t so = out.node_offsets[g.node_type_id(cet.src_type)];
    const std::int64_t dof = out.node_offsets[g.node_type_id(cet.dst_type)];
    const std::int64_t at = out.edge_offsets[k], n = e.num_edges();
    if (dtype == DType::I32) {
      shift_into(e.src.data<std::int32_t>(), n, so, edges.src.data<std::int32_t>() + at);
      shift_into(e.dst.data<std::int32_t>(), n, dof, edges.dst.data<std::int32_t>() + at);
    } else {
      shift_into(e.src.data<std::int64_t>(), n, so, edges.src.data<std::int64_t>() + at);
      shift_into(e.dst.data<std::int64_t>(), n, dof, edges.dst.data<std::int64_t>() + at);
    }
    std::fill(et + at, et + at + n, static_cast<std::int32_t>(k));
  }
  out.graph = HeteroGraph::from_edges(edges, total_nodes);
  if (!g_in.device().is_cpu()) {
    out.graph = out.graph.to(g_in.device());
    out.edge_type = out.edge_type.to(g_in.device());
  }
  return out;
}

std::int64_t HomogeneousGraph::global_node(int ntype, std::int64_t local) const {
  TOPO_CHECK(ntype >= 0 && ntype + 1 < static_cast<int>(node_offsets.size()), "to_homogeneous: node type {} unknown",
             ntype);
  TOPO_CHECK(local >= 0 && local < node_offsets[ntype + 1] - node_offsets[ntype],
             "to_homogeneous: node {} of type {} is outside [0, {})", local, ntype,
             node_offsets[ntype + 1] - node_offsets[ntype]);
  return node_offsets[ntype] + local;
}

std::pair<int, std::int64_t> HomogeneousGraph::node_of(std::int64_t global) const {
  TOPO_CHECK(global >= 0 && global < node_offsets.back(), "to_homogeneous: node {} is outside [0, {})", global,
             node_offsets.back());
  // Last offset <= global (empty types share an offset with the next type: upper_bound skips them).
  const auto it = std::upper_bound(node_offsets.begin(), node_offsets.end(), global) - 1;
  return {static_cast<int>(it - node_offsets.begin()), global - *it};
}

std::pair<int, std::int64_t> HomogeneousGraph::edge_of(std::int64_t global) const {
  TOPO_CHECK(global >= 0 && global < edge_offsets.back(), "to_homogeneous: edge {} is outside [0, {})", global,
             edge_offsets.back());
  const auto it = std::upper_bound(edge_offsets.begin(), edge_offsets.end(), global) - 1;
  return {relations[it - edge_offsets.begin()], global - *it};
}

std::vector<Tensor> HomogeneousGraph::split_nodes(const Tensor& rows) const {
  TOPO_CHECK(rows.defined() && rows.ndim() >= 1 && rows.size(0) == node_offsets.back(),
             "to_homogeneous: split_nodes needs {} rows, got {}", node_offsets.back(),
             rows.defined() ? shape_str(rows.shape()) : std::string("an undefined tensor"));
  std::vector<Tensor> out;
  for (std::size_t t = 0; t + 1 < node_offsets.size(); ++t)
    out.push_back(rows.slice_rows(node_offsets[t], node_offsets[t + 1]));
  return out;
}

Tensor HomogeneousGraph::stack_nodes(const std::vector<Tensor>& per_type) const {
  TOPO_CHECK(per_type.size() + 1 == node_offsets.size(), "to_homogeneous: stack_nodes needs {} tensors, got {}",
             node_offsets.size() - 1, per_type.size());
  for (std::size_t t = 0; t < per_type.size(); ++t)
    TOPO_CHECK(per_type[t].defined() && per_type[t].ndim() >= 1 &&
                   per_type[t].size(0) == node_offsets[t + 1] - node_offsets[t],
               "to_homogeneous: stack_nodes: type {} needs {} rows, got {}", t, node_offsets[t + 1] - node_offsets[t],
               per_type[t].defined() ? shape_str(per_type[t].shape()) : std::string("an undefined tensor"));
  return concat_rows(per_type);
}

}  // namespace topo
