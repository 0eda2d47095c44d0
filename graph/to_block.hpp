#pragma once
// DGL's to_block: the message-flow graph ("block") of every edge into given destination nodes, as the parts
// the Python package assembles (its DGLBlock: source and destination sides per node type).
//
// Order (what topograph.to_block documents, as DGL's): destinations of type t are dst_nodes[t] as given;
// every edge is kept (a node with an in-edge must be a destination), in edge-id order, so block edge k is parent
// edge k of its relation; sources of type t are dst_nodes[t] first (include_dst_in_src), then the other sources
// of the edges in order of first appearance (relation by relation, edges by id) — or exactly src_nodes[t] when
// given. One pass over each relation's COO.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/heterograph.hpp"
#include "graph/structure.hpp"

namespace topo {

struct BlockParts {
  std::vector<std::vector<std::int64_t>> src_nodes;  // [node types]: parent ids of the block's sources
  // [relations]: src = position among its type's sources, dst = position among dst_nodes, eid = parent id
  std::vector<EdgeIds> edges;
};

// dst_nodes: [node types] parent ids (distinct; every node with an in-edge must be there). src_nodes:
// [node types], or nullopt for the default numbering. Errors (topo::Error) name the side, the type and the
// id: out of range, repeated, a node with in-edges that is not a destination, an edge source missing from
// src_nodes, src_nodes not starting with the destinations under include_dst_in_src.
BlockParts to_block(const HeteroGraph& g, const std::vector<std::vector<std::int64_t>>& dst_nodes,
                    bool include_dst_in_src,
                    const std::optional<std::vector<std::vector<std::int64_t>>>& src_nodes = std::nullopt);

// Turns parent source ids into positions among `sources` (a type's block sources so far), appending an id
// seen for the first time; src_at: that type's position of each parent id, -1 where none yet (kept up to date).
// Returns false at the first id it would have to append when `closed` (src_nodes given): ids[k] is then it.
bool number_sources(std::vector<std::int64_t>& ids, std::vector<std::int64_t>& sources,
                    std::vector<std::int64_t>& src_at, bool closed, std::size_t* k);

// The block as a graph: node types src_prefix + t for every type t of g (its sources), then dst_prefix + t
// (its destinations: dst_nodes[t]), one relation (src_prefix + s, e, dst_prefix + d) per relation of g, in g's
// id type, on g's device.
HeteroGraph block_graph(const HeteroGraph& g, const BlockParts& parts,
                        const std::vector<std::vector<std::int64_t>>& dst_nodes, const std::string& src_prefix,
                        const std::string& dst_prefix);

}  // namespace topo
