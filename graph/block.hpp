#pragma once
// A block (DGL's message-flow graph): the destination nodes of one type attending over the source nodes
// of one or several relations at once, as one bipartite CSR pair. It is the one topology handle that layers
// and the differentiable sparse ops take. Source nodes of every type that feeds the block are numbered
// together, type by type in the graph's order, so a layer gathers keys and values from one [num_src, ...]
// tensor (the per-type features concatenated) and normalises one softmax over all relations.
//
//   Star-Transformer satellite phase: to_block(g, "sat", {"ring", "self", "token", "from_relay"})
//     dst = satellites; src = [satellites; token embeddings; relays]
//
// Assembly joins the graph's cached per-relation formats (HeteroGraph::in_csc / out_csr, built once on the
// graph's device) with merge_csr; a one-relation block is those cached views themselves, no copy. Block edge
// ids are relation by relation: block edge edge_offsets[i] + e is edge e of relations[i], and within a
// destination row the in-edges are ordered by block edge id (relation order, then original id).
#include <cstdint>
#include <string>
#include <vector>

#include "graph/heterograph.hpp"
#include "kernels/sparse/format.hpp"

namespace topo {

struct Block {
  std::string dst_type;
  std::vector<std::string> src_types;      // types feeding the block, in the graph's type order
  std::vector<std::int64_t> src_offsets;   // [src_types.size() + 1]: block source id = offset + local id
  std::vector<int> relations;              // relation ids, in the order given
  std::vector<std::int64_t> edge_offsets;  // [relations.size() + 1]: block edge id = offset + relation eid
  std::int64_t num_src = 0, num_dst = 0;
  CsrView in;   // rows = destinations, indices = block source ids, eids = block edge ids
  CsrView out;  // rows = block source ids, indices = destinations (the same edges by source)

  std::int64_t num_edges() const { return in.nnz(); }
  // Offset of `src_type`'s nodes among the block's sources; throws naming the type if it feeds no relation.
  std::int64_t src_offset(const std::string& src_type) const;
  // The relation (graph relation id) and its own edge id of a block edge id; throws naming an id out of range.
  int relation_of_edge(std::int64_t block_eid) const;
  std::int64_t relation_edge_id(std::int64_t block_eid) const;
  // Same destination set and same source numbering: one set of key/value rows serves both blocks.
  bool same_nodes(const Block& other) const;
};

// Every named relation (edge-type names, unambiguous) must end in `dst_type`; the error names the offender.
Block to_block(const HeteroGraph& g, const std::string& dst_type, const std::vector<std::string>& etypes);
// One relation as a block (sources: its source type only): the graph's cached formats, no copy.
Block relation_block(const HeteroGraph& g, int relation);
Block relation_block(const HeteroGraph& g, const std::string& etype);
// The same without edge ids (in.eids and out.eids undefined; HeteroGraph::in_csc_structure): for gspmm of
// copy_u summed or averaged, which reads no edge data, so that a graph used only so keeps no edge-id arrays.
Block relation_structure_block(const HeteroGraph& g, int relation);

// Examples of a batch own consecutive rows (counts[b] rows for example b, 0 allowed): the block from every
// row into its example, rows as sources (type `src_type`) and examples as destinations ("example").
// What per-example readouts (sum / mean / max) reduce over; built directly in CSR form on `device`.
// `leading` rows before each example's are sources without edges (Multi-Scale's [CLS] position, read out
// apart): example b's rows start after b + 1 such rows, and there are sum(counts) + leading * B sources.
Block segment_block(const std::vector<std::int64_t>& counts, const std::string& src_type = "node",
                    Device device = Device::cpu(), std::int64_t leading = 0);

}  // namespace topo
