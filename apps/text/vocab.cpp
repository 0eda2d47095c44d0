#include "apps/text/vocab.hpp"

#include <algorithm>
#include <charconv>

#include "apps/text/line_reader.hpp"
#include "kernels/error.hpp"

namespace topo::text {

namespace {

std::int64_t to_int(const std::string& s) {
  std::int64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);  // callers checked is_integer
  return v;
}

// Strings from a JSON array of unique strings; `what` names the field in errors.
std::vector<std::string> unique_strings(const nlohmann::json& j, const char* what, const char* key) {
  TOPO_CHECK(j.is_object(), "{} JSON must be an object with '{}', got {}", what, key, j.type_name());
  const auto it = j.find(key);
  TOPO_CHECK(it != j.end() && it->is_array(), "{} JSON needs an array '{}'", what, key);
  std::vector<std::string> out;
  out.reserve(it->size());
  std::unordered_map<std::string, std::int64_t> seen;
  for (const nlohmann::json& v : *it) {
    TOPO_CHECK(v.is_string(), "{} JSON: '{}' entry {} is not a string: {}", what, key, out.size(), v.dump());
    TOPO_CHECK(seen.emplace(v.get<std::string>(), 0).second, "{} JSON: duplicate entry '{}'", what,
               v.get<std::string>());
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::unordered_map<std::string, std::int64_t> index_of(const std::vector<std::string>& names) {
  std::unordered_map<std::string, std::int64_t> ids;
  ids.reserve(names.size());
  for (std::size_t k = 0; k < names.size(); ++k) ids.emplace(names[k], static_cast<std::int64_t>(k));
  return ids;
}

}  // namespace

// ---- LabelSet ----

LabelSet::LabelSet(const std::vector<std::string>& labels) : names_(labels) {
  std::sort(names_.begin(), names_.end());
  names_.erase(std::unique(names_.begin(), names_.end()), names_.end());
  const bool numeric = std::all_of(names_.begin(), names_.end(), [](const std::string& s) { return detail::is_integer(s); });
  if (numeric)  // "2" < "10"; "01" and "1" are distinct labels, kept apart in byte order
    std::stable_sort(names_.begin(), names_.end(),
                     [](const std::string& a, const std::string& b) { return to_int(a) < to_int(b); });
  ids_ = index_of(names_);
}

LabelSet LabelSet::build(const std::vector<const Dataset*>& datasets) {
  std::vector<std::string> labels;
  for (const Dataset* d : datasets) {
    TOPO_CHECK(d != nullptr, "LabelSet::build: null data set");
    for (const Example& e : d->examples) labels.push_back(e.label);
  }
  return LabelSet(labels);
}

std::int64_t LabelSet::id(const std::string& label) const {
  const auto it = ids_.find(label);
  if (it == ids_.end()) fail("unknown label '{}' (known: {})", label, fmt::join(names_, ", "));
  return it->second;
}

const std::string& LabelSet::name(std::int64_t id) const {
  TOPO_CHECK(id >= 0 && id < size(), "label id {} out of range [0, {})", id, size());
  return names_[static_cast<std::size_t>(id)];
}

nlohmann::json LabelSet::to_json() const { return {{"labels", names_}}; }

LabelSet LabelSet::from_json(const nlohmann::json& j) {
  LabelSet s;
  s.names_ = unique_strings(j, "label set", "labels");  // order as stored: ids must not move
  s.ids_ = index_of(s.names_);
  return s;
}

// ---- Vocabulary ----

Vocabulary::Vocabulary() : Vocabulary(std::vector<std::string>{kPadToken, kUnkToken}) {}

Vocabulary::Vocabulary(std::vector<std::string> tokens) : tokens_(std::move(tokens)), ids_(index_of(tokens_)) {}

Vocabulary Vocabulary::build(const std::vector<const Dataset*>& datasets, std::int64_t min_freq,
                             std::int64_t max_size) {
  TOPO_CHECK(min_freq >= 1, "vocabulary min_freq must be >= 1, got {}", min_freq);
  TOPO_CHECK(max_size == 0 || max_size >= 2, "vocabulary max_size must be 0 (no cap) or >= 2, got {}", max_size);
  std::unordered_map<std::string, std::int64_t> counts;
  for (const Dataset* d : datasets) {
    TOPO_CHECK(d != nullptr, "Vocabulary::build: null data set");
    for (const Example& e : d->examples) {
      for (const std::string& t : e.tokens) ++counts[t];
      for (const std::string& t : e.tokens2) ++counts[t];
    }
  }
  // The specials keep ids 0 and 1 even if the text contains them literally.
  counts.erase(kPadToken);
  counts.erase(kUnkToken);
  std::vector<std::pair<std::string, std::int64_t>> ranked;
  ranked.reserve(counts.size());
  for (auto& [token, count] : counts)
    if (count >= min_freq) ranked.emplace_back(token, count);
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<std::string> tokens{kPadToken, kUnkToken};
  for (auto& [token, count] : ranked) {
    if (max_size > 0 && static_cast<std::int64_t>(tokens.size()) >= max_size) break;
    tokens.push_back(std::move(token));
  }
  return Vocabulary(std::move(tokens));
}

std::int64_t Vocabulary::id(const std::string& token) const {
  const auto it = ids_.find(token);
  return it == ids_.end() ? kUnk : it->second;
}

const std::string& Vocabulary::token(std::int64_t id) const {
  TOPO_CHECK(id >= 0 && id < size(), "token id {} out of range [0, {})", id, size());
  return tokens_[static_cast<std::size_t>(id)];
}

std::vector<std::int64_t> Vocabulary::encode(const std::vector<std::string>& tokens) const {
  std::vector<std::int64_t> ids;
  ids.reserve(tokens.size());
  for (const std::string& t : tokens) ids.push_back(id(t));
  return ids;
}

Vocabulary Vocabulary::extended(const std::vector<std::string>& more) const {
  std::vector<std::string> tokens = tokens_;
  std::unordered_map<std::string, std::int64_t> seen = ids_;
  for (const std::string& t : more)
    if (seen.emplace(t, static_cast<std::int64_t>(tokens.size())).second) tokens.push_back(t);
  return Vocabulary(std::move(tokens));
}

nlohmann::json Vocabulary::to_json() const { return {{"tokens", tokens_}}; }

Vocabulary Vocabulary::from_json(const nlohmann::json& j) {
  std::vector<std::string> tokens = unique_strings(j, "vocabulary", "tokens");
  TOPO_CHECK(tokens.size() >= 2 && tokens[0] == kPadToken && tokens[1] == kUnkToken,
             "vocabulary JSON must start with '{}', '{}'", kPadToken, kUnkToken);
  return Vocabulary(std::move(tokens));
}

}  // namespace topo::text
