#include "nn/readout.hpp"

#include <numeric>

#include "graph/block.hpp"
#include "kernels/error.hpp"
#include "nn/ops.hpp"
#include "nn/sparse_ops.hpp"

namespace topo::nn {

Readout parse_readout(const std::string& name) {
  if (name == "sum") return Readout::Sum;
  if (name == "mean") return Readout::Mean;
  if (name == "max") return Readout::Max;
  fail("unknown readout '{}': expected sum, mean or max", name);
}

std::string readout_name(Readout op) {
  switch (op) {
    case Readout::Sum: return "sum";
    case Readout::Mean: return "mean";
    case Readout::Max: return "max";
  }
  return "?";
}

namespace {
// states [sum(counts), ...] with a non-empty batch; names the op in the error.
void check_segments(const Var& states, const std::vector<std::int64_t>& counts, const char* op,
                    std::int64_t leading = 0) {
  TOPO_CHECK(states.defined() && states.ndim() >= 1, "{}: states must be [rows, ...], got {}", op,
             states.defined() ? states.data().str() : std::string("undefined"));
  TOPO_CHECK(!counts.empty(), "{}: empty batch", op);
  TOPO_CHECK(leading >= 0, "{}: {} leading rows per example", op, leading);
  const std::int64_t total = std::accumulate(counts.begin(), counts.end(), std::int64_t{0}) +
                             leading * static_cast<std::int64_t>(counts.size());
  TOPO_CHECK(total == states.size(0), "{}: counts sum to {}{} but states have {} rows", op, total,
             leading ? fmt::format(" with {} leading rows per example", leading) : std::string(), states.size(0));
}
}  // namespace

Var softmax_nodes(const Var& states, const std::vector<std::int64_t>& counts) {
  check_segments(states, counts, "softmax_nodes");
  return edge_softmax(segment_block(counts, "node", states.device()), states, NormBy::Dst);
}

Var broadcast_nodes(const Var& feats, const std::vector<std::int64_t>& counts) {
  TOPO_CHECK(feats.defined() && feats.ndim() >= 1 && feats.size(0) == static_cast<std::int64_t>(counts.size()),
             "broadcast_nodes: feats must be [batch = {}, ...], got {}", counts.size(),
             feats.defined() ? feats.data().str() : std::string("undefined"));
  std::vector<std::int64_t> example;
  for (std::size_t b = 0; b < counts.size(); ++b) {
    TOPO_CHECK(counts[b] >= 0, "broadcast_nodes: example {} has {} rows", b, counts[b]);
    example.insert(example.end(), static_cast<std::size_t>(counts[b]), static_cast<std::int64_t>(b));
  }
  return index_select(feats, Tensor::from_vector(example, {static_cast<std::int64_t>(example.size())}, feats.device()));
}

Var readout_nodes(const Var& states, const std::vector<std::int64_t>& counts, Readout op, std::int64_t leading) {
  check_segments(states, counts, "readout_nodes", leading);
  const Block segments = segment_block(counts, "node", states.device(), leading);
  const SpmmReduce reduce = op == Readout::Sum ? SpmmReduce::Sum : op == Readout::Mean ? SpmmReduce::Mean : SpmmReduce::Max;
  return gspmm(segments, MessageOp::CopyU, reduce, states, Var());
}

}  // namespace topo::nn
