#pragma once
// A block (DGL's message-flow graph): the destination nodes of one type attending over the source nodes
// of several relations at once, as one bipartite CSR pair. Source nodes of every type that feeds the block
// are numbered together, type by type in the graph's order, so a layer gathers keys and values from one
// [num_src, ...] tensor (the per-type features concatenated) and normalises one softmax over all relations.
//
//   Star-Transformer satellite phase: to_block(g, "sat", {"ring", "self", "token", "from_relay"})
//     dst = satellites; src = [satellites; token embeddings; relays]
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
};

// Every named relation (edge-type names, unambiguous) must end in `dst_type`; the error names the offender.
Block to_block(const HeteroGraph& g, const std::string& dst_type, const std::vector<std::string>& etypes);

}  // namespace topo
