#include "models/model.hpp"

#include <numeric>

namespace topo::models {

std::int64_t SequenceBatch::num_tokens() const { return std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0}); }

Tensor SequenceBatch::sentence_ids(Device device) const {
  std::vector<std::int64_t> ids;
  ids.reserve(static_cast<std::size_t>(num_tokens()));
  for (std::size_t b = 0; b < lengths.size(); ++b) ids.insert(ids.end(), lengths[b], static_cast<std::int64_t>(b));
  return Tensor::from_vector(ids, {static_cast<std::int64_t>(ids.size())}, device);
}

SequenceBatch SequenceBatch::to(Device device) const {
  SequenceBatch out{lengths, token_ids, features};
  if (out.token_ids.defined()) out.token_ids = out.token_ids.to(device);
  if (out.features.defined()) out.features = out.features.to(device);
  return out;
}

}  // namespace topo::models
