#pragma once
// Batches of random token ids for the model suites (models, dense_attention): `sentences` sentences of n
// tokens each, ids uniform in [0, vocab), reproducible from the seed.
#include <cstdint>
#include <random>
#include <vector>

#include "models/model.hpp"

namespace topo::bench {

inline models::SequenceBatch random_token_batch(std::int64_t sentences, std::int64_t n, std::int64_t vocab,
                                                std::uint32_t seed) {
  models::SequenceBatch b;
  b.lengths.assign(static_cast<std::size_t>(sentences), n);
  std::mt19937 gen(seed);
  std::uniform_int_distribution<std::int64_t> id(0, vocab - 1);
  std::vector<std::int64_t> ids(static_cast<std::size_t>(sentences * n));
  for (auto& x : ids) x = id(gen);
  b.token_ids = Tensor::from_vector(ids, {sentences * n});
  return b;
}

}  // namespace topo::bench
