#pragma once
// Batching by disjoint union: graph b's nodes of each type follow those of graphs 0..b-1, so a batch is one
// big graph with no padding. For the hot path (a batch of sentences) prefer the batched builders
// (builders.hpp), which produce the union directly from lengths; batch() serves arbitrary graphs.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/heterograph.hpp"

namespace topo {

// Disjoint union. All graphs must have the same node types and relations (same order), one id dtype and one
// device. Batched inputs are flattened (the result's batch lists every input's graphs). Features present in
// the graphs are concatenated by rows; a feature must exist in every graph or in none (topo::Error otherwise).
HeteroGraph batch(const std::vector<HeteroGraph>& graphs);

// Row offsets per graph: [B + 1], offsets[b] = first node of graph b.
std::vector<std::int64_t> batch_node_offsets(const HeteroGraph& g, const std::string& ntype);

// Splits a [num_nodes(ntype), ...] (or [num_edges(etype), ...]) tensor into per-graph row blocks
// (zero-copy views). Throws when the row count does not match.
std::vector<Tensor> unbatch_nodes(const HeteroGraph& g, const std::string& ntype, const Tensor& rows);
std::vector<Tensor> unbatch_edges(const HeteroGraph& g, const std::string& etype, const Tensor& rows);

// The inverse of batch(): one graph per batch member, ids shifted back to each graph's own numbering,
// features split by rows (zero-copy views). Needs each graph's edges to be contiguous and in batch order (as
// batch() and the batched builders make them); otherwise the per-graph validation names the stray edge.
std::vector<HeteroGraph> unbatch(const HeteroGraph& g);

// Concatenates tensors along dim 0 (same trailing shape, dtype and device) on their device.
Tensor concat_rows(const std::vector<Tensor>& parts);

}  // namespace topo
