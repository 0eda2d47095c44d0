#pragma once
// JSON text that a file supplies (configs, topology files, SNLI and JSONL lines, checkpoint indexes, resume
// state), parsed with two limits nlohmann's parse lacks:
// - nesting at most kMaxJsonDepth levels. nlohmann parses any depth, but dump() recurses: an error message that
//   showed a value nested 100,000 levels deep overflowed the stack (a probe of topo-train and topo-topology,
//   2026-12-05). No file here nests past a handful of levels.
// - no key twice in one object. nlohmann keeps the last silently, so `{"hidden": 100, ..., "hidden": 32}`
//   trained at 32 with nothing said.
// Both throw nlohmann::json::parse_error, so each reader's existing handler for nlohmann's exceptions names
// its file (and line) as it does for any other bad JSON.
// shown_json is a value as an error message quotes it: its JSON, cut to a readable length.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace topo {

inline constexpr int kMaxJsonDepth = 256;

// Json: nlohmann::json or nlohmann::ordered_json. `input`: what Json::parse takes (a string, a pair of
// iterators as two arguments is not offered: pass a std::string or a std::string_view).
template <class Json = nlohmann::json, class Input>
Json parse_json_input(Input&& input) {
  // keys[d]: the keys seen so far in the open object at depth d (objects here hold tens of keys at most,
  // so a linear scan beats a set; the slots are reused, not reallocated, object after object).
  std::vector<std::vector<std::string>> keys;
  const typename Json::parser_callback_t check = [&keys](int depth, typename Json::parse_event_t event,
                                                         Json& parsed) {
    using Event = typename Json::parse_event_t;
    if (event == Event::object_start || event == Event::array_start) {
      if (depth >= kMaxJsonDepth)
        throw Json::parse_error::create(
            101, 0, "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels", nullptr);
      if (event == Event::object_start) {
        if (keys.size() <= static_cast<std::size_t>(depth)) keys.resize(static_cast<std::size_t>(depth) + 1);
        keys[static_cast<std::size_t>(depth)].clear();
      }
    } else if (event == Event::key && depth >= 1) {
      std::vector<std::string>& seen = keys[static_cast<std::size_t>(depth) - 1];
      const std::string& key = parsed.template get_ref<const std::string&>();
      for (const std::string& k : seen)
        if (k == key) throw Json::parse_error::create(101, 0, "the key \"" + key + "\" appears twice in one object",
                                                      nullptr);
      seen.push_back(key);
    }
    return true;
  };
  return Json::parse(std::forward<Input>(input), check);
}

// `value`'s JSON for an error message: at most max_chars characters, then how long it was.
template <class Json>
std::string shown_json(const Json& value, std::size_t max_chars = 200) {
  std::string text = value.dump();
  if (text.size() <= max_chars) return text;
  const std::size_t total = text.size();
  text.resize(max_chars);
  return text + "... (" + std::to_string(total) + " characters)";
}

}  // namespace topo
