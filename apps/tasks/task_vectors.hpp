#pragma once
// Pre-trained word vectors for a text task's vocabulary (classify, tag): loaded once through
// text::load_word_vectors, turned into the embedding's initial table, and reported (coverage of the training
// split, bad lines, load time) in the log, result.json and the checkpoint metadata.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/text/vocab.hpp"
#include "apps/text/word_vectors.hpp"
#include "kernels/tensor.hpp"

namespace topo::apps {

struct TaskVectors {
  Tensor table;                     // float32 [vocab.size(), dim]; rows without a vector are 0
  std::vector<std::uint8_t> rows;   // [vocab.size()]: 1 = the row holds a vector
  std::int64_t dim = 0;
  nlohmann::json report;            // file, dim, vectors, found_lowercase, duplicates, bad lines, train_coverage
};

// `train_ids`: the training split's encoded sentences (for the token coverage). A file that covers none of
// the vocabulary is a topo::Error (the wrong file, or a cased look-up of uncased vectors).
TaskVectors load_task_vectors(const std::string& path, const text::WordVectorOptions& options,
                              const text::Vocabulary& vocab, const std::vector<std::vector<std::int64_t>>& train_ids);

}  // namespace topo::apps
