#pragma once
// Edge builders: each returns the edges of one relation, for one graph or for a whole batch at once.
// A topology is a union of builders' relations (see NodeTypeSpec / RelationSpec in heterograph.hpp):
//
//   auto lens = std::vector<std::int64_t>{5, 9};
//   HeteroGraph g({builders::node_type("sat", lens), builders::node_type("relay", builders::ones(2))},
//                 {{{"sat", "ring", "sat"}, builders::ring_batch(lens, true)},
//                  {{"sat", "to_relay", "relay"}, builders::to_one_batch(lens)},
//                  {{"relay", "from_relay", "sat"}, builders::from_one_batch(lens)}});
//
// Conventions. Edges point from the attended (key/value) node to the attending node: j -> i means
// "i attends to j", so a node's attention context is its in-edges. Within one graph edges are listed by
// destination, then by source (the CSC order). Batched builders number graph b's nodes after those of graphs
// 0..b-1 of the same type (disjoint union), fill every graph in parallel at offsets computed from closed-form
// edge counts, and record batch_num_edges. No builder adds self loops implicitly: a node's own state is a
// separate self_loops relation, so attention can weight it with its own relation.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph/edge_list.hpp"
#include "graph/heterograph.hpp"

namespace topo::builders {

// [s, e]: inclusive character span of a word (0-based within its sentence).
struct Span {
  std::int64_t start = 0, end = 0;
};

// A node type whose per-graph counts are `counts` (for the HeteroGraph constructor).
NodeTypeSpec node_type(const std::string& name, const std::vector<std::int64_t>& counts);
// B ones: the per-graph count of a one-node-per-graph type (relay, sentence node).
std::vector<std::int64_t> ones(std::int64_t batch);

// Ring over n nodes: i-1 -> i and i+1 -> i. Open: no wrap (2(n-1) edges). Closed: node 0 and n-1 are
// neighbours (2n edges for n >= 3); for n = 2 each node has its one neighbour once (2 edges), for n = 1 there
// are none (never a self loop, never a duplicate edge).
EdgeList ring(std::int64_t n, bool closed, DType dtype = DType::I32);
EdgeList ring_batch(const std::vector<std::int64_t>& lengths, bool closed, DType dtype = DType::I32);

// Window of odd width w: j -> i for |i - j| <= (w-1)/2 within the sentence, i itself included (w = 1: itself).
EdgeList window(std::int64_t n, std::int64_t width, DType dtype = DType::I32);
EdgeList window_batch(const std::vector<std::int64_t>& lengths, std::int64_t width, DType dtype = DType::I32);
// One width per graph (scales that are fractions of each sentence's length).
EdgeList window_batch(const std::vector<std::int64_t>& lengths, const std::vector<std::int64_t>& widths,
                      DType dtype = DType::I32);

// Per-sentence width for a scale given as a fraction of the length (Multi-Scale Transformer's N/16, N/8,
// N/4): ceil(n / divisor) rounded up to odd, at least 1. divisor must be positive.
std::vector<std::int64_t> fractional_widths(const std::vector<std::int64_t>& lengths, std::int64_t divisor);

// Every j -> every i, self included (n^2 edges).
EdgeList full(std::int64_t n, DType dtype = DType::I32);
EdgeList full_batch(const std::vector<std::int64_t>& lengths, DType dtype = DType::I32);

// i -> i. Between two node types with the same per-graph counts this is the one-to-one relation
// (e.g. token embedding e_i -> satellite h_i in the Star-Transformer).
EdgeList self_loops(std::int64_t n, DType dtype = DType::I32);
EdgeList self_loops_batch(const std::vector<std::int64_t>& lengths, DType dtype = DType::I32);

// All n nodes -> the graph's one node (another type; node b of it in a batch), and the reverse direction.
// A star/relay is the pair of relations {to_one, from_one}.
EdgeList to_one(std::int64_t n, DType dtype = DType::I32);
EdgeList to_one_batch(const std::vector<std::int64_t>& lengths, DType dtype = DType::I32);
EdgeList from_one(std::int64_t n, DType dtype = DType::I32);
EdgeList from_one_batch(const std::vector<std::int64_t>& lengths, DType dtype = DType::I32);
struct StarEdges {
  EdgeList to_center, from_center;
};
StarEdges star_batch(const std::vector<std::int64_t>& lengths, DType dtype = DType::I32);

// Character/word bipartite edges of a sentence of n characters with words at `spans`:
// in: char c -> word j for every c in [s_j, e_j]; contains: word j -> char c (same pairs reversed), listed
// word by word. Spans must satisfy 0 <= s <= e < n.
struct SpanEdges {
  EdgeList in, contains;
};
SpanEdges bipartite_spans(std::int64_t n, const std::vector<Span>& spans, DType dtype = DType::I32);
SpanEdges bipartite_spans_batch(const std::vector<std::int64_t>& lengths, const std::vector<std::vector<Span>>& spans,
                                DType dtype = DType::I32);

// Number of words per graph (the batch counts of the word node type).
std::vector<std::int64_t> span_counts(const std::vector<std::vector<Span>>& spans);

}  // namespace topo::builders
