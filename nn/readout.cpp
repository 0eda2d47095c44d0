#include "nn/readout.hpp"

#include <numeric>

#include "graph/block.hpp"
#include "kernels/error.hpp"
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

Var readout_nodes(const Var& states, const std::vector<std::int64_t>& counts, Readout op) {
  TOPO_CHECK(states.defined() && states.ndim() >= 1, "readout_nodes: states must be [rows, ...], got {}",
             states.defined() ? states.data().str() : std::string("undefined"));
  TOPO_CHECK(!counts.empty(), "readout_nodes: empty batch");
  const std::int64_t total = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
  TOPO_CHECK(total == states.size(0), "readout_nodes: counts sum to {} but states have {} rows", total,
             states.size(0));
  const Block segments = segment_block(counts, "node", states.device());
  const SpmmReduce reduce = op == Readout::Sum ? SpmmReduce::Sum : op == Readout::Mean ? SpmmReduce::Mean : SpmmReduce::Max;
  return gspmm(segments, MessageOp::CopyU, reduce, states, Var());
}

}  // namespace topo::nn
