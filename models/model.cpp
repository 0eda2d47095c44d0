#include "models/model.hpp"

#include <numeric>

#include "kernels/error.hpp"

namespace topo::models {

std::int64_t SequenceBatch::num_tokens() const { return std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0}); }

Tensor SequenceBatch::sentence_ids(Device device) const {
  std::vector<std::int64_t> ids;
  ids.reserve(static_cast<std::size_t>(num_tokens()));
  for (std::size_t b = 0; b < lengths.size(); ++b) ids.insert(ids.end(), lengths[b], static_cast<std::int64_t>(b));
  return Tensor::from_vector(ids, {static_cast<std::int64_t>(ids.size())}, device);
}

std::int64_t NodeSet::total() const { return std::accumulate(counts.begin(), counts.end(), std::int64_t{0}); }

std::vector<std::int64_t> NodeSet::offsets() const {
  std::vector<std::int64_t> out(counts.size() + 1, 0);
  std::partial_sum(counts.begin(), counts.end(), out.begin() + 1);
  return out;
}

NodeSet NodeSet::to(Device device) const {
  NodeSet out = *this;
  for (Tensor* t : {&out.ids, &out.features, &out.spans})
    if (t->defined()) *t = t->to(device);
  return out;
}

const NodeSet& SequenceBatch::node_set(const std::string& type) const {
  const auto it = node_sets.find(type);
  if (it != node_sets.end()) return it->second;
  std::vector<std::string> known;
  for (const auto& [name, set] : node_sets) known.push_back(name);
  fail("batch has no node set '{}' (it has: token{}{})", type, known.empty() ? "" : ", ", fmt::join(known, ", "));
}

NodeSet SequenceBatch::tokens() const { return NodeSet{lengths, token_ids, features, Tensor()}; }

void SequenceBatch::validate() const {
  for (std::size_t b = 0; b < lengths.size(); ++b)
    TOPO_CHECK(lengths[b] >= 1, "batch: sentence {} has length {} (must be >= 1)", b, lengths[b]);
  auto check = [&](const std::string& type, const NodeSet& set) {
    TOPO_CHECK(set.counts.size() == lengths.size(), "batch: node set '{}' has counts for {} examples, the batch has {}",
               type, set.counts.size(), lengths.size());
    for (std::size_t b = 0; b < set.counts.size(); ++b)
      TOPO_CHECK(set.counts[b] >= 0, "batch: node set '{}' has {} nodes in example {}", type, set.counts[b], b);
    const std::int64_t total = set.total();
    TOPO_CHECK(!set.ids.defined() || (set.ids.ndim() == 1 && set.ids.size(0) == total),
               "batch: node set '{}' has {} nodes but ids {}", type, total, set.ids.str());
    TOPO_CHECK(!set.features.defined() || (set.features.ndim() == 2 && set.features.size(0) == total),
               "batch: node set '{}' has {} nodes but features {}", type, total, set.features.str());
    TOPO_CHECK(!set.spans.defined() || set.spans.shape() == Shape({total, 2}),
               "batch: node set '{}' has {} nodes but spans {} (want [{}, 2])", type, total, set.spans.str(), total);
  };
  check("token", tokens());
  for (const auto& [type, set] : node_sets) {
    TOPO_CHECK(type != "token", "batch: node set 'token' is the batch's own tokens; name the extra type otherwise");
    check(type, set);
  }
}

SequenceBatch SequenceBatch::to(Device device) const {
  SequenceBatch out{lengths, token_ids, features};
  if (out.token_ids.defined()) out.token_ids = out.token_ids.to(device);
  if (out.features.defined()) out.features = out.features.to(device);
  for (const auto& [type, set] : node_sets) out.node_sets.emplace(type, set.to(device));
  if (token_case.defined()) out.token_case = token_case.to(device);
  if (token_chars.defined()) out.token_chars = token_chars.to(device);
  out.chars_per_token = chars_per_token;
  if (token_suffix.defined()) out.token_suffix = token_suffix.to(device);
  if (token_bigrams.defined()) out.token_bigrams = token_bigrams.to(device);
  if (graph) out.graph = graph->device() == device ? graph : std::make_shared<const HeteroGraph>(graph->to(device));
  for (const auto& block : blocks)
    out.blocks.push_back(block->device() == device ? block : std::make_shared<const HeteroGraph>(block->to(device)));
  return out;
}

}  // namespace topo::models
