#pragma once
// A topology file's graph for a batch of sentences: every relation's edges per sentence, merged per head group
// and destination type into the blocks GraphMultiHeadAttention's head groups attend over.
//
// Positions. Each sentence of n tokens has a token sequence of L = c + n positions: the c nodes of the
// in_sequence types first (file order), then the tokens. tok node p sits at position p; emb node j (token j's
// input embedding) at position c + j, beside token j; a type of "nodes" with m nodes per sentence has its own
// positions 0..m-1. The positional builders (window, dilated, ring, block, self, global) pair a source and a
// destination by their positions; ring wraps at the axis length (L on the token axis, m on a type's own).
//
// A head group's relations into one destination type share one softmax. A (source, destination) pair that
// two of them hold is one edge: the relation listed first in the group keeps it, the later ones drop it, so
// a pair is never weighted twice. Within a destination's in-edges the order is the group's relation order,
// then the relation's own order (relation_edges; the order to_block gives and the registered models' builders use).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph/block.hpp"
#include "graph/heterograph.hpp"
#include "models/topology_transformer/topology_file.hpp"

namespace topo::models {

// One relation's edges in one sentence, before a group's de-duplication: local ids (the k-th node of the
// type in that sentence), by destination, then source (ring: the predecessor, then the successor, as
// builders::ring lists them).
struct SentenceEdges {
  std::vector<std::int64_t> src, dst;
  std::size_t size() const { return src.size(); }
};
SentenceEdges relation_edges(const TopologySpec& spec, const TopologyRelation& relation, std::int64_t tokens);
// A window relation's radius in a sentence of n tokens (from radius, width or "N/k").
std::int64_t window_radius(const TopologyRelation& window, std::int64_t tokens);

struct TopologyGraph {
  std::vector<std::int64_t> lengths;  // tokens per sentence
  // Node types spec.graph_types(); one graph relation per (head group, destination type, file relation) after
  // de-duplication, plus empty relations that give every group's block into a type the same source types.
  HeteroGraph graph;
  struct Origin {
    int group = 0;
    int relation = -1;  // index into TopologySpec::relations; -1 for an empty padding relation
  };
  std::vector<Origin> origins;         // [graph relations]
  std::vector<std::string> dst_types;  // spec.destination_types()
  std::vector<std::vector<Block>> blocks;  // [dst type][head group]: all of one type share their source numbering
};

// The most edges one sentence's graph may hold (every head group's relations together): 2^22, full attention
// over 2048 tokens. A file past it (a 'full' relation over a type of 4096 nodes: 2^24 edges per sentence, 2^30
// for the 64 lengths checked up front) ran out of memory with a message that named no file; it is refused,
// naming the file and the relation that builds the most.
inline constexpr std::int64_t kMaxSentenceEdges = std::int64_t{1} << 22;

// Throws topo::Error naming the file, head group, destination node and sentence length when a destination has
// no in-edge in some group (an empty softmax), and naming the file and a relation when a sentence's relations
// would build more than kMaxSentenceEdges edges. Built on the CPU, then moved to `device`.
TopologyGraph build_topology(const TopologySpec& spec, const std::vector<std::int64_t>& lengths,
                             Device device = Device::cpu());

// build_topology for one sentence of each length 1..max_tokens, one length at a time: the in-edge and size
// checks up front, so a file that leaves short sentences without context fails when it is loaded, not
// mid-training.
void check_topology_lengths(const TopologySpec& spec, std::int64_t max_tokens);

}  // namespace topo::models
