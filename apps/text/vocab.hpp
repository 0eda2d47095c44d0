#pragma once
// Token and label vocabularies, serialisable to JSON (stored in checkpoint metadata so a checkpoint can be
// evaluated without the training data).
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/text/dataset.hpp"

namespace topo::text {

// Class labels -> dense ids. Ids follow numeric order when every label is an integer ("0" < "2" < "10"),
// else byte order, so the mapping does not depend on which split was read first.
class LabelSet {
 public:
  LabelSet() = default;
  explicit LabelSet(const std::vector<std::string>& labels);  // any order, duplicates allowed
  static LabelSet build(const std::vector<const Dataset*>& datasets);

  std::int64_t id(const std::string& label) const;  // unknown label: error naming it
  const std::string& name(std::int64_t id) const;   // out of range: error
  std::int64_t size() const { return static_cast<std::int64_t>(names_.size()); }
  bool contains(const std::string& label) const { return ids_.count(label) != 0; }
  const std::vector<std::string>& names() const { return names_; }

  nlohmann::json to_json() const;  // {"labels": [...]}
  static LabelSet from_json(const nlohmann::json& j);

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::int64_t> ids_;
};

// Tokens -> ids. 0 = "<pad>", 1 = "<unk>", then tokens by descending training frequency, ties in byte
// order (deterministic across runs and standard libraries).
class Vocabulary {
 public:
  static constexpr std::int64_t kPad = 0, kUnk = 1;
  static constexpr const char* kPadToken = "<pad>";
  static constexpr const char* kUnkToken = "<unk>";

  Vocabulary();  // just <pad> and <unk>
  // Tokens seen at least min_freq times; max_size > 0 caps the total size (including <pad>, <unk>).
  static Vocabulary build(const std::vector<const Dataset*>& datasets, std::int64_t min_freq = 1,
                          std::int64_t max_size = 0);

  std::int64_t id(const std::string& token) const;  // kUnk when unknown
  const std::string& token(std::int64_t id) const;  // out of range: error
  std::int64_t size() const { return static_cast<std::int64_t>(tokens_.size()); }
  bool contains(const std::string& token) const { return ids_.count(token) != 0; }
  std::vector<std::int64_t> encode(const std::vector<std::string>& tokens) const;
  // This vocabulary with `more` appended in their order (tokens it already has, and repeats, skipped): the
  // existing ids are unchanged.
  Vocabulary extended(const std::vector<std::string>& more) const;
  const std::vector<std::string>& tokens() const { return tokens_; }

  nlohmann::json to_json() const;  // {"tokens": [...]} (ids = positions)
  static Vocabulary from_json(const nlohmann::json& j);  // malformed: error

 private:
  explicit Vocabulary(std::vector<std::string> tokens);
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, std::int64_t> ids_;
};

}  // namespace topo::text
