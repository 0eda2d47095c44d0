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
// parse_json_text and read_json_file add the file's name to any of those errors (the readers of configs and
// topology files, and --topology's inline object); shown_json is a value as an error message quotes it: its
// JSON, cut to a readable length (shown_text, the cut, for a string an error quotes as it is).
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/error.hpp"

namespace topo {

inline constexpr int kMaxJsonDepth = 256;

// `text` for an error message: at most max_chars characters, then how long it was.
inline std::string shown_text(std::string text, std::size_t max_chars = 200) {
  if (text.size() <= max_chars) return text;
  const std::size_t total = text.size();
  text.resize(max_chars);
  return text + "... (" + std::to_string(total) + " characters)";
}

// Json: nlohmann::json or nlohmann::ordered_json. `input`: what Json::parse takes (a string, a pair of
// iterators as two arguments is not offered: pass a std::string or a std::string_view).
template <class Json = nlohmann::json, class Input>
Json parse_json_input(Input&& input) {
  // One frame per open object or array: the keys an object has had so far (objects here hold tens of keys at
  // most, so a linear scan beats a set), an array's count of finished elements. They give the errors the place
  // they name (`relations[2].radius`): nlohmann's callback knows no line or column.
  struct Frame {
    bool array = false;
    std::size_t elements = 0;
    std::vector<std::string> keys;
  };
  // open[0, depth_open): the frames of the open containers. Slots past depth_open are kept, not freed, so their
  // key vectors are reused object after object of one text (a topology file's relations, a config's sections).
  std::vector<Frame> open;
  std::size_t depth_open = 0;
  const auto where = [&] {
    std::string path;
    for (std::size_t d = 0; d < depth_open; ++d) {
      const Frame& f = open[d];
      if (f.array)
        path += fmt::format("[{}]", f.elements);  // fmt, not +: GCC 12's -Wrestrict false positive
      else if (!f.keys.empty())
        path += fmt::format("{}{}", path.empty() ? "" : ".", f.keys.back());
    }
    if (path.empty()) path = "the top level";
    return path;
  };
  const auto finished_element = [&] {
    if (depth_open > 0 && open[depth_open - 1].array) ++open[depth_open - 1].elements;
  };
  const typename Json::parser_callback_t check = [&](int depth, typename Json::parse_event_t event, Json& parsed) {
    using Event = typename Json::parse_event_t;
    if (event == Event::object_start || event == Event::array_start) {
      if (depth >= kMaxJsonDepth)
        throw Json::parse_error::create(
            101, 0, fmt::format("nested deeper than {} levels (at {})", kMaxJsonDepth, where()), nullptr);
      if (depth_open == open.size()) open.emplace_back();
      Frame& f = open[depth_open++];
      f.array = event == Event::array_start;
      f.elements = 0;
      f.keys.clear();
    } else if (event == Event::object_end || event == Event::array_end) {
      --depth_open;
      finished_element();
    } else if (event == Event::key) {
      const std::string& key = parsed.template get_ref<const std::string&>();
      std::vector<std::string>& seen = open[depth_open - 1].keys;
      for (const std::string& k : seen)
        if (k == key) {
          seen.push_back(key);  // the path names the repeated key
          throw Json::parse_error::create(
              101, 0, fmt::format("the key \"{}\" appears twice in one object (at {})", shown_text(key, 60), where()),
              nullptr);
        }
      seen.push_back(key);
    } else if (event == Event::value) {
      finished_element();
    }
    return true;
  };
  return Json::parse(std::forward<Input>(input), check);
}

// `text`, parsed as parse_json_input parses it; a bad text is a topo::Error "SOURCE is not valid JSON: why".
template <class Json = nlohmann::json>
Json parse_json_text(std::string_view text, const std::string& source) {
  try {
    return parse_json_input<Json>(text);
  } catch (const nlohmann::json::exception& e) {
    fail("{} is not valid JSON: {}", source, e.what());
  }
}

// The most a file of settings (a config, a topology file) may hold. Ours are a few KB; the bound makes a path
// that never ends (/dev/zero, /dev/urandom: a probe of topo-topology, 2026-12-06) an error naming it, where
// reading it whole ran out of memory with a message that named no file.
inline constexpr std::size_t kMaxJsonFileBytes = std::size_t{64} << 20;

// The file at `path`, read whole (at most max_bytes) and parsed so; `what` ("config file", "topology file")
// begins each error: "WHAT 'PATH' cannot be opened", "... is a directory, not a JSON file" (one opens and reads
// as empty), "... holds more than N MiB", "... is not valid JSON: why".
template <class Json = nlohmann::json>
Json read_json_file(const std::string& path, const std::string& what, std::size_t max_bytes = kMaxJsonFileBytes) {
  std::ifstream in(path, std::ios::binary);
  TOPO_CHECK(in.good(), "{} '{}' cannot be opened", what, path);
  TOPO_CHECK(!std::filesystem::is_directory(path), "{} '{}' is a directory, not a JSON file", what, path);
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    TOPO_CHECK(text.size() <= max_bytes, "{} '{}' holds more than {} bytes: not a JSON file of settings", what, path,
               max_bytes);
  }
  TOPO_CHECK(!in.bad(), "{} '{}' cannot be read", what, path);
  return parse_json_text<Json>(text, fmt::format("{} '{}'", what, path));  // not +: GCC 12's -Wrestrict
}

// `value`'s JSON for an error message, cut as shown_text cuts.
template <class Json>
std::string shown_json(const Json& value, std::size_t max_chars = 200) {
  return shown_text(value.dump(), max_chars);
}

}  // namespace topo
