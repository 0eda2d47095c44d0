#include "graph/block.hpp"

#include <algorithm>

#include "kernels/profile.hpp"

namespace topo {

std::int64_t Block::src_offset(const std::string& src_type) const {
  for (std::size_t i = 0; i < src_types.size(); ++i)
    if (src_types[i] == src_type) return src_offsets[i];
  fail("block into '{}' has no source type '{}' (its sources: {})", dst_type, src_type, fmt::join(src_types, ", "));
}

int Block::relation_of_edge(std::int64_t block_eid) const {
  TOPO_CHECK(block_eid >= 0 && block_eid < edge_offsets.back(), "block into '{}': edge id {} is outside [0, {})",
             dst_type, block_eid, edge_offsets.back());
  const auto it = std::upper_bound(edge_offsets.begin(), edge_offsets.end(), block_eid);
  return relations[static_cast<std::size_t>(it - edge_offsets.begin() - 1)];
}

std::int64_t Block::relation_edge_id(std::int64_t block_eid) const {
  const int r = relation_of_edge(block_eid);
  const auto i = std::find(relations.begin(), relations.end(), r) - relations.begin();
  return block_eid - edge_offsets[static_cast<std::size_t>(i)];
}

bool Block::same_nodes(const Block& other) const {
  return dst_type == other.dst_type && num_dst == other.num_dst && src_types == other.src_types &&
         src_offsets == other.src_offsets;
}

Block to_block(const HeteroGraph& g, const std::string& dst_type, const std::vector<std::string>& etypes) {
  TOPO_PROFILE(Graph);
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
  b.edge_offsets.push_back(0);
  for (int r : b.relations) b.edge_offsets.push_back(b.edge_offsets.back() + g.num_edges(r));

  if (b.relations.size() == 1) {  // the cached formats are the block (source offset 0, edge offset 0)
    b.in = g.in_csc(b.relations[0]);
    b.out = g.out_csr(b.relations[0]);
    return b;
  }
  // In-CSR: every relation covers all destination rows, its sources shifted to their type's block offset.
  // Out-CSR: a relation covers its source type's rows; relations from one type meet in the same rows.
  std::vector<CsrPart> in_parts, out_parts;
  for (std::size_t i = 0; i < b.relations.size(); ++i) {
    const int r = b.relations[i];
    const std::int64_t src_offset = type_offset[g.node_type_id(g.canonical_etype(r).src_type)];
    in_parts.push_back({g.in_csc(r), 0, src_offset, b.edge_offsets[i]});
    out_parts.push_back({g.out_csr(r), src_offset, 0, b.edge_offsets[i]});
  }
  b.in = merge_csr(in_parts, b.num_dst, b.num_src);
  b.out = merge_csr(out_parts, b.num_src, b.num_dst);
  return b;
}

namespace {
Block relation_block_shape(const HeteroGraph& g, int relation) {
  const CanonicalEType& ce = g.canonical_etype(relation);
  Block b;
  b.dst_type = ce.dst_type;
  b.src_types = {ce.src_type};
  b.num_src = g.num_nodes(ce.src_type);
  b.num_dst = g.num_nodes(ce.dst_type);
  b.src_offsets = {0, b.num_src};
  b.relations = {relation};
  b.edge_offsets = {0, g.num_edges(relation)};
  return b;
}
}  // namespace

Block relation_block(const HeteroGraph& g, int relation) {
  Block b = relation_block_shape(g, relation);
  b.in = g.in_csc(relation);
  b.out = g.out_csr(relation);
  return b;
}

Block relation_structure_block(const HeteroGraph& g, int relation) {
  Block b = relation_block_shape(g, relation);
  b.in = g.in_csc_structure(relation);
  b.out = g.out_csr_structure(relation);
  return b;
}

Block relation_block(const HeteroGraph& g, const std::string& etype) { return relation_block(g, g.relation_id(etype)); }

Block segment_block(const std::vector<std::int64_t>& counts, const std::string& src_type, Device device,
                    std::int64_t leading) {
  TOPO_CHECK(leading >= 0, "segment_block: {} leading rows per example", leading);
  Block b;
  b.dst_type = "example";
  b.src_types = {src_type};
  b.num_dst = static_cast<std::int64_t>(counts.size());
  std::vector<std::int64_t> offsets(counts.size() + 1, 0);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    TOPO_CHECK(counts[i] >= 0, "segment_block: example {} has {} rows", i, counts[i]);
    offsets[i + 1] = offsets[i] + counts[i];
  }
  const std::int64_t n = offsets.back(), rows = n + leading * b.num_dst;
  TOPO_CHECK(rows < INT32_MAX, "segment_block: {} rows do not fit int32 ids", rows);
  b.num_src = rows;
  b.src_offsets = {0, rows};
  b.edge_offsets = {0, n};
  // Edge i is example b's (i - offsets[b])-th row, source row i + leading * (b + 1): in-CSR indptr = offsets,
  // eids = 0..n-1; out-CSR one edge per example row, none on the leading rows.
  std::vector<std::int32_t> indptr(offsets.begin(), offsets.end()), source(static_cast<std::size_t>(n)),
      iota(static_cast<std::size_t>(n)), example(static_cast<std::size_t>(n)),
      out_indptr(static_cast<std::size_t>(rows) + 1, 0);
  for (std::size_t e = 0; e < counts.size(); ++e)
    for (std::int64_t i = offsets[e]; i < offsets[e + 1]; ++i) {
      const std::int64_t row = i + leading * static_cast<std::int64_t>(e + 1);
      source[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(row);
      example[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(e);
      out_indptr[static_cast<std::size_t>(row) + 1] = 1;
    }
  for (std::int64_t i = 0; i < n; ++i) iota[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i);
  for (std::int64_t r = 0; r < rows; ++r) out_indptr[static_cast<std::size_t>(r) + 1] += out_indptr[static_cast<std::size_t>(r)];
  const Tensor iota_t = Tensor::from_vector(iota, {n}, device);
  b.in = CsrView{Tensor::from_vector(indptr, {b.num_dst + 1}, device), Tensor::from_vector(source, {n}, device), iota_t,
                 b.num_dst, rows};
  b.out = CsrView{Tensor::from_vector(out_indptr, {rows + 1}, device), Tensor::from_vector(example, {n}, device), iota_t,
                  rows, b.num_dst};
  return b;
}

}  // namespace topo
