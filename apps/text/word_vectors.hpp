#pragma once
// Pre-trained word vectors (GloVe / word2vec text formats) looked up for a vocabulary.
#include <cstdint>
#include <string>
#include <vector>

#include "apps/text/vocab.hpp"

namespace topo::text {

struct WordVectors {
  std::int64_t dim = 0;
  std::vector<float> values;  // [vocab.size(), dim] row-major; rows of tokens not in the file stay 0
  std::int64_t found = 0;     // vocabulary tokens that got a vector
};

// GloVe text ("tok v1 .. vd" per line) or word2vec text (first line "count dim", then as GloVe), detected
// from the first line: exactly two integers there is a word2vec header, and then the count must match.
// A line's values are its last `dim` fields and its token is everything before them (GloVe 840B has tokens
// with spaces). Tokens are matched exactly (first occurrence wins; the <pad> row always stays 0). Too few
// values, a non-number or a missing file is a topo::Error naming path:line.
WordVectors load_word_vectors(const std::string& path, const Vocabulary& vocab);

}  // namespace topo::text
