#include "graph/block.hpp"

#include <algorithm>

namespace topo {
namespace {

// Host copy of one COO array widened to int64.
std::vector<std::int64_t> host_ids(const Tensor& ids) {
  const Tensor host = ids.to(Device::cpu());
  if (host.dtype() == DType::I64) return host.to_vector<std::int64_t>();
  const auto narrow = host.to_vector<std::int32_t>();
  return std::vector<std::int64_t>(narrow.begin(), narrow.end());
}

Tensor ids_tensor(const std::vector<std::int64_t>& ids, DType dtype, Device device) {
  const std::int64_t n = static_cast<std::int64_t>(ids.size());
  if (dtype == DType::I64) return Tensor::from_vector(ids, {n}, device);
  return Tensor::from_vector(std::vector<std::int32_t>(ids.begin(), ids.end()), {n}, device);
}

}  // namespace

std::int64_t Block::src_offset(const std::string& src_type) const {
  for (std::size_t i = 0; i < src_types.size(); ++i)
    if (src_types[i] == src_type) return src_offsets[i];
  fail("block into '{}' has no source type '{}' (its sources: {})", dst_type, src_type, fmt::join(src_types, ", "));
}

Block to_block(const HeteroGraph& g, const std::string& dst_type, const std::vector<std::string>& etypes) {
  TOPO_CHECK(!etypes.empty(), "to_block into '{}': no relations named", dst_type);
  Block b;
  b.dst_type = dst_type;
  b.num_dst = g.num_nodes(dst_type);
  std::vector<bool> feeds(g.num_node_types(), false);
  for (const std::string& name : etypes) {
    const int r = g.relation_id(name);
    const CanonicalEType& ce = g.canonical_etype(r);
    TOPO_CHECK(ce.dst_type == dst_type, "to_block into '{}': relation {} ends in '{}'", dst_type, ce.str(),
               ce.dst_type);
    TOPO_CHECK(std::find(b.relations.begin(), b.relations.end(), r) == b.relations.end(),
               "to_block into '{}': relation {} named twice", dst_type, ce.str());
    b.relations.push_back(r);
    feeds[g.node_type_id(ce.src_type)] = true;
  }
  std::vector<std::int64_t> type_offset(g.num_node_types(), -1);
  b.src_offsets.push_back(0);
  for (int t = 0; t < g.num_node_types(); ++t) {
    if (!feeds[t]) continue;
    type_offset[t] = b.src_offsets.back();
    b.src_types.push_back(g.node_types()[t]);
    b.src_offsets.push_back(b.src_offsets.back() + g.num_nodes(t));
  }
  b.num_src = b.src_offsets.back();

  // Concatenate the relations' COO lists with sources renumbered into the block (host side: one pass).
  std::vector<std::int64_t> src, dst;
  std::int64_t total = 0;
  for (int r : b.relations) total += g.num_edges(r);
  src.reserve(static_cast<std::size_t>(total));
  dst.reserve(static_cast<std::size_t>(total));
  b.edge_offsets.push_back(0);
  for (int r : b.relations) {
    const EdgeList edges = g.edges(r);
    const std::int64_t offset = type_offset[g.node_type_id(g.canonical_etype(r).src_type)];
    const auto s = host_ids(edges.src), d = host_ids(edges.dst);
    for (std::int64_t id : s) src.push_back(id + offset);
    dst.insert(dst.end(), d.begin(), d.end());
    b.edge_offsets.push_back(static_cast<std::int64_t>(src.size()));
  }
  const Tensor src_t = ids_tensor(src, g.id_dtype(), g.device()), dst_t = ids_tensor(dst, g.id_dtype(), g.device());
  b.in = coo_to_csr(dst_t, src_t, b.num_dst, b.num_src);
  b.out = coo_to_csr(src_t, dst_t, b.num_src, b.num_dst);
  return b;
}

}  // namespace topo
