#pragma once
// Per-example readouts (DGL's readout_nodes) over a batch concatenated without padding: every model's
// sentence features (Star's max over satellites, the Transformer's mean + max, DeepSets' pooling, BiG's
// char average) go through this one function, for any node type of the batch.
#include <cstdint>
#include <string>
#include <vector>

#include "nn/var.hpp"

namespace topo::nn {

enum class Readout { Sum, Mean, Max };
// "sum", "mean", "max"; throws naming an unknown one.
Readout parse_readout(const std::string& name);
std::string readout_name(Readout op);

// states [sum(counts), ...] with example b owning rows [offset_b, offset_b + counts[b]) -> [B, ...].
// An example with no rows reads 0 (sum, mean and max alike). Differentiable: a gspmm copy_u over the
// segment block (graph/block.hpp), so max sends each element's gradient to the first row that attains it.
// `leading` > 0: each example's rows are preceded by that many rows left out (states [sum(counts) + leading
// * B, ...]; Multi-Scale reads its [CLS] row apart): the readout reads the rows in place, no gather first.
Var readout_nodes(const Var& states, const std::vector<std::int64_t>& counts, Readout op, std::int64_t leading = 0);

// DGL's softmax_nodes: a softmax over the rows of each example, per column: states [sum(counts), ...] ->
// the same shape. An edge_softmax over the segment block (row i is its edge i into example b).
Var softmax_nodes(const Var& states, const std::vector<std::int64_t>& counts);
// DGL's broadcast_nodes: example b's row of feats [B, ...] repeated on its counts[b] rows ->
// [sum(counts), ...]. An index_select (its backward sums each example's rows back).
Var broadcast_nodes(const Var& feats, const std::vector<std::int64_t>& counts);

}  // namespace topo::nn
