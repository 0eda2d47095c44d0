#include "apps/text/tag_scores.hpp"

#include <fmt/format.h>

#include "kernels/error.hpp"

namespace topo::text {

void TagScorer::add(const std::vector<std::string>& gold_tags, const std::vector<std::string>& guessed_tags) {
  TOPO_CHECK(gold_tags.size() == guessed_tags.size(), "tag scorer: {} gold tags but {} guessed", gold_tags.size(),
             guessed_tags.size());
  const auto n = gold_tags.size();
  for (std::size_t i = 0; i < n; ++i) correct_tokens_ += gold_tags[i] == guessed_tags[i];
  tokens_ += static_cast<std::int64_t>(n);
  if (scheme_ == TagScheme::None) return;
  const bool convert = scheme_ == TagScheme::BIOES || scheme_ == TagScheme::BMES;
  const std::vector<std::string> gold = convert ? convert_tags(gold_tags, scheme_, TagScheme::IOB2) : gold_tags;
  const std::vector<std::string> guessed =
      convert ? convert_tags(guessed_tags, scheme_, TagScheme::IOB2) : guessed_tags;

  // conlleval's loop: one pass over the tokens plus the sentence boundary (read as tag "O" on both sides).
  std::string_view last_gold = "O", last_guess = "O", last_gold_type, last_guess_type;
  bool in_correct = false;
  for (std::size_t i = 0; i <= n; ++i) {
    const TagParts g = i < n ? split_tag(gold[i]) : TagParts{"O", {}};
    const TagParts p = i < n ? split_tag(guessed[i]) : TagParts{"O", {}};
    const bool gold_ends = chunk_ends(last_gold, g.prefix, last_gold_type, g.type);
    const bool guess_ends = chunk_ends(last_guess, p.prefix, last_guess_type, p.type);
    if (in_correct) {
      if (gold_ends && guess_ends && last_guess_type == last_gold_type) {
        in_correct = false;
        ++overall_.correct;
        ++per_type_[std::string(last_gold_type)].correct;
      } else if (gold_ends != guess_ends || p.type != g.type) {
        in_correct = false;
      }
    }
    const bool gold_starts = chunk_starts(last_gold, g.prefix, last_gold_type, g.type);
    const bool guess_starts = chunk_starts(last_guess, p.prefix, last_guess_type, p.type);
    if (gold_starts && guess_starts && p.type == g.type) in_correct = true;
    if (gold_starts) {
      ++overall_.gold;
      ++per_type_[std::string(g.type)].gold;
    }
    if (guess_starts) {
      ++overall_.guessed;
      ++per_type_[std::string(p.type)].guessed;
    }
    last_gold = g.prefix;
    last_guess = p.prefix;
    last_gold_type = g.type;
    last_guess_type = p.type;
  }
  if (in_correct) {  // conlleval's end-of-file rule, applied at the end of each sentence
    ++overall_.correct;
    ++per_type_[std::string(last_gold_type)].correct;
  }
}

nlohmann::json TagScorer::to_json() const {
  const auto counts = [](const ChunkCounts& c) {
    return nlohmann::json{{"precision", c.precision()}, {"recall", c.recall()}, {"f1", c.f1()},
                          {"correct", c.correct},       {"guessed", c.guessed}, {"gold", c.gold}};
  };
  nlohmann::json out = counts(overall_);
  out["accuracy"] = accuracy();
  out["tokens"] = tokens_;
  nlohmann::json types = nlohmann::json::object();
  for (const auto& [type, c] : per_type_) types[type] = counts(c);
  out["per_type"] = types;
  return out;
}

std::string TagScorer::table() const {
  std::string out = fmt::format(
      "processed {} tokens with {} phrases; found: {} phrases; correct: {}.\n"
      "accuracy: {:6.2f}%; precision: {:6.2f}%; recall: {:6.2f}%; FB1: {:6.2f}\n",
      tokens_, overall_.gold, overall_.guessed, overall_.correct, 100 * accuracy(), 100 * overall_.precision(),
      100 * overall_.recall(), 100 * overall_.f1());
  for (const auto& [type, c] : per_type_)
    out += fmt::format("{:>17}: precision: {:6.2f}%; recall: {:6.2f}%; FB1: {:6.2f}  {}\n", type,
                       100 * c.precision(), 100 * c.recall(), 100 * c.f1(), c.guessed);
  return out;
}

}  // namespace topo::text
