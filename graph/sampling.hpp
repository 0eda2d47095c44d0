#pragma once
// Neighbour sampling (DGL 2.1's dgl.sampling.sample_neighbors: in- or out-edges, uniform or in proportion to
// edge weights, with or without replacement) and the seeded draws it shares with the topology files' random
// builder. The per-mode draws are graph/sampling_draws.hpp's.
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

// Which of a seed's edges are drawn: those into it (DGL's edge_dir="in") or those out of it ("out").
enum class EdgeDir { in, out };

// DGL's sampling options beyond the fan-out. prob: empty for uniform draws, else one tensor per relation of
// g, float32 [E] or [E, 1], a weight per edge id (finite, >= 0; DGL's prob), or an undefined Tensor where a
// relation is drawn uniformly (DGL's, where a relation lacks the feature). exclude: empty, or one list per
// relation of g of edge ids never drawn (any order, repeats allowed): a seed draws as if they were not in g
// (min(fanout, edges left); DGL 2.1 drops them after its draws, leaving fewer): each mode's law on the row
// without them (uniform: other picks than without an exclusion), at a hash-set lookup per entry of a seed's row.
struct SamplingOptions {
  EdgeDir edge_dir = EdgeDir::in;
  bool replace = false;
  std::vector<Tensor> prob;
  std::vector<std::vector<std::int64_t>> exclude;
};

// For each seed node, in each relation into its type (out of it, EdgeDir::out), fanouts[r] of its edges
// (fanouts: one per relation of g; a relation without seeds of that type samples nothing). As DGL 2.1:
//   uniform, without replacement: min(fanout, degree) distinct edges;
//   uniform, with replacement: fanout draws (repeats possible), none where the degree is 0;
//   weighted (prob): only positive-weight edges, min(fanout, their count) drawn one after another in
//   proportion to the weights left, or with replacement fanout draws in proportion, none without one;
//   fanout -1: every edge (every positive-weight edge when weighted), each once, also with replacement.
// The result keeps every node of every type (DGL's frontier) and only the sampled edges, in g's direction
// (an out-edge stays seed -> neighbour), grouped by seed in the order given and by increasing edge id within a
// seed; edata[kEID] holds their ids in g. A seed id out of range or repeated, a fan-out below -1, a prob
// tensor of the wrong type or size, or an excluded edge id out of range is a topo::Error naming the type and
// position or the relation; so is a negative or not finite weight on a sampled seed's edges (weights are read
// only there: a call costs its seeds' edges).
HeteroGraph sample_neighbors(const HeteroGraph& g, const NodeSets& seeds, const std::vector<std::int64_t>& fanouts,
                             std::uint64_t seed, const SamplingOptions& options = {});

// DGL's MultiLayerNeighborSampler: for layers L-1 .. 0, the frontier of the current destinations
// (sample_neighbors with fanouts[l], one per relation, and `options`) made a block (to_block, destinations
// leading the sources), whose sources are the next layer's destinations. Returned input layer first: each
// layer's destinations (per node type), its BlockParts (edge ids are g's). Layer l draws with a seed of its
// own derived from `seed`. With EdgeDir::out a block's edges are the drawn out-edges reversed (neighbour ->
// seed, so messages reach the seeds): the parts are relative to g.reverse(), whose relation r is g's relation
// r turned round (block_graph(g.reverse(), ...)). DGL 2.1 builds no usable block there.
struct SampledBlock {
  std::vector<std::vector<std::int64_t>> dst_nodes;  // [node types]
  BlockParts parts;
};
std::vector<SampledBlock> sample_blocks(const HeteroGraph& g, const std::vector<std::vector<std::int64_t>>& seeds,
                                        const std::vector<std::vector<std::int64_t>>& fanouts, std::uint64_t seed,
                                        const SamplingOptions& options = {});

}  // namespace topo
