#pragma once
// Scores of a tagger as the field computes them.
//   Chunks (NER): conlleval's algorithm, transcribed (its state machine over tokens, chunk_starts / chunk_ends
//   of tag_schemes.hpp): a guessed chunk is correct only when it starts and ends where a gold chunk does and
//   has its type. Precision = correct / guessed chunks, recall = correct / gold chunks, F1 their harmonic mean;
//   per type and overall (micro). IOB1 and IOB2 tags are read alike, as conlleval reads them; BIOES/BMES tags
//   (which conlleval does not know: it would merge two adjacent S-X) are converted to IOB2 first.
//   Tokens (POS): accuracy = tokens whose whole tag matches / tokens.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/text/tag_schemes.hpp"

namespace topo::text {

struct ChunkCounts {
  std::int64_t correct = 0, guessed = 0, gold = 0;
  double precision() const { return guessed > 0 ? double(correct) / double(guessed) : 0.0; }
  double recall() const { return gold > 0 ? double(correct) / double(gold) : 0.0; }
  double f1() const {
    const double p = precision(), r = recall();
    return p + r > 0 ? 2 * p * r / (p + r) : 0.0;
  }
};

class TagScorer {
 public:
  // `scheme` is the tags' scheme (BIOES/BMES are converted to IOB2 before counting; None counts tokens only).
  explicit TagScorer(TagScheme scheme = TagScheme::IOB2) : scheme_(scheme) {}
  // One sentence: gold and guessed tags of the same length (else a topo::Error).
  void add(const std::vector<std::string>& gold, const std::vector<std::string>& guessed);

  const ChunkCounts& overall() const { return overall_; }
  // Per chunk type, every type found in gold or guessed tags.
  const std::map<std::string, ChunkCounts>& per_type() const { return per_type_; }
  std::int64_t tokens() const { return tokens_; }
  std::int64_t correct_tokens() const { return correct_tokens_; }
  double accuracy() const { return tokens_ > 0 ? double(correct_tokens_) / double(tokens_) : 0.0; }

  // {"precision", "recall", "f1" (fractions, not percent), "correct", "guessed", "gold", "accuracy", "tokens",
  //  "per_type": {TYPE: {"precision", "recall", "f1", "correct", "guessed", "gold"}}}.
  nlohmann::json to_json() const;
  // conlleval's report: the totals line, then one line per type (percentages, two decimals).
  std::string table() const;

 private:
  TagScheme scheme_;
  ChunkCounts overall_;
  std::map<std::string, ChunkCounts> per_type_;
  std::int64_t tokens_ = 0, correct_tokens_ = 0;
};

}  // namespace topo::text
