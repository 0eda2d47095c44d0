#pragma once
// A SequenceBatch of random inputs for the encoder tests: token ids below `vocab`, or (vocab 0) features
// [tokens, input_dim] uniform in [-1, 1).
#include <cstdint>
#include <vector>

#include "models/model.hpp"
#include "tests/support/testing.hpp"

namespace topo::testing {

inline models::SequenceBatch random_batch(const std::vector<std::int64_t>& lengths, std::int64_t input_dim,
                                          std::int64_t vocab, std::uint64_t seed) {
  models::SequenceBatch b;
  b.lengths = lengths;
  if (vocab > 0)
    b.token_ids = random_ids({b.num_tokens()}, vocab, seed);
  else
    b.features = random_uniform({b.num_tokens(), input_dim}, seed);
  return b;
}

}  // namespace topo::testing
