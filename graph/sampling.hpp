#pragma once
// Neighbour sampling (DGL's dgl.sampling.sample_neighbors, edge_dir="in", without replacement) and the
// seeded draws it shares with the topology files' random builder.
//
// Parallel strategy: the seed nodes are split over the threads (parallel_for); each seed's draw depends only
// on (seed, relation, node), so the sampled edges are the same for any thread count and any seed order.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/heterograph.hpp"
#include "graph/structure.hpp"
#include "graph/to_block.hpp"

namespace topo {

// splitmix64's finaliser: a well-mixed 64-bit value of x (seeds and ids in, draws out).
std::uint64_t splitmix64(std::uint64_t x);
// `k` distinct values of 0..n-1, ascending, from `state` (Floyd's algorithm: k draws, no rejection loop;
// every value of 0..n-1 when k >= n). O(k^2): meant for fan-outs and per-node draws of tens.
std::vector<std::int64_t> sample_distinct(std::int64_t n, std::int64_t k, std::uint64_t state);

// For each seed node, min(fanout, in-degree) of its in-edges in each relation into its type, uniformly
// without replacement (all of them when fanout < 0 or the in-degree is at most fanout). fanouts: per
// relation index, one entry per relation of g (a relation into a type without seeds samples nothing).
// The result keeps every node of every type (DGL's frontier) and only the sampled edges, grouped by seed in
// the order given and by increasing edge id within a seed; edata[kEID] holds their ids in g. A seed id out
// of range or repeated is a topo::Error naming the type and the position.
HeteroGraph sample_neighbors(const HeteroGraph& g, const NodeSets& seeds, const std::vector<std::int64_t>& fanouts,
                             std::uint64_t seed);

// DGL's MultiLayerNeighborSampler: for layers L-1 .. 0, the frontier of the current destinations
// (sample_neighbors with fanouts[l], one per relation) made a block (to_block, destinations leading the
// sources), whose sources are the next layer's destinations. Returned input layer first: each layer's
// destinations (per node type), its BlockParts (edge ids are g's) . Layer l draws with a seed of its own
// derived from `seed`.
struct SampledBlock {
  std::vector<std::vector<std::int64_t>> dst_nodes;  // [node types]
  BlockParts parts;
};
std::vector<SampledBlock> sample_blocks(const HeteroGraph& g, const std::vector<std::vector<std::int64_t>>& seeds,
                                        const std::vector<std::vector<std::int64_t>>& fanouts, std::uint64_t seed);

}  // namespace topo
