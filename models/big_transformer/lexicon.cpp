#include "models/big_transformer/lexicon.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>

#include "kernels/error.hpp"

namespace topo::models {

std::vector<char32_t> utf8_code_points(std::string_view text, const std::string& where) {
  std::vector<char32_t> out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const auto b = static_cast<unsigned char>(text[i]);
    int continuations = 0;
    char32_t c = 0, min = 0;
    if (b < 0x80) {
      c = b;
    } else if ((b & 0xE0) == 0xC0) {
      continuations = 1, c = b & 0x1F, min = 0x80;
    } else if ((b & 0xF0) == 0xE0) {
      continuations = 2, c = b & 0x0F, min = 0x800;
    } else if ((b & 0xF8) == 0xF0) {
      continuations = 3, c = b & 0x07, min = 0x10000;
    } else {
      fail("{}: invalid UTF-8 byte 0x{:02X} at offset {}", where, b, i);
    }
    for (int k = 1; k <= continuations; ++k) {
      TOPO_CHECK(i + k < text.size() && (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80,
                 "{}: truncated UTF-8 sequence at offset {}", where, i);
      c = (c << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are ill-formed (Unicode table 3-7).
    TOPO_CHECK(c >= min && c <= 0x10FFFF && !(c >= 0xD800 && c <= 0xDFFF),
               "{}: ill-formed UTF-8 sequence (U+{:04X}) at offset {}", where, static_cast<std::uint32_t>(c), i);
    out.push_back(c);
    i += static_cast<std::size_t>(continuations) + 1;
  }
  return out;
}

Lexicon::Lexicon() : Lexicon(std::vector<std::u32string>{}) {}

Lexicon::Lexicon(const std::vector<std::u32string>& given) {
  std::vector<std::u32string> words = given;
  words.erase(std::remove_if(words.begin(), words.end(), [](const std::u32string& w) { return w.empty(); }),
              words.end());
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  words_ = static_cast<std::int64_t>(words.size());
  // Breadth-first over prefix groups: a node is the range [lo, hi) of sorted words sharing its prefix of
  // length `depth`; numbering nodes in queue order puts every node's children next to each other.
  struct Group {
    std::size_t lo, hi, depth;
  };
  std::deque<Group> queue{{0, words.size(), 0}};
  first_child_.push_back(0);
  std::int32_t next_id = 1;
  while (!queue.empty()) {
    const Group g = queue.front();
    queue.pop_front();
    std::size_t i = g.lo;
    const bool prefix_is_word = i < g.hi && words[i].size() == g.depth;  // it sorts first in its group
    terminal_.push_back(prefix_is_word ? 1 : 0);
    if (prefix_is_word) ++i;
    while (i < g.hi) {
      const char32_t c = words[i][g.depth];
      std::size_t j = i + 1;
      while (j < g.hi && words[j][g.depth] == c) ++j;
      child_code_points_.push_back(c);
      child_nodes_.push_back(next_id++);
      queue.push_back({i, j, g.depth + 1});
      i = j;
    }
    first_child_.push_back(static_cast<std::int64_t>(child_nodes_.size()));
  }
}

Lexicon Lexicon::load(const std::string& path) {
  constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open lexicon '{}': {}", path, std::strerror(errno));
  std::vector<std::u32string> words;
  std::string line;
  std::int64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (number == 1 && line.starts_with(kUtf8Bom)) line.erase(0, kUtf8Bom.size());  // an editor's byte order mark
    const std::string where = fmt::format("{}:{}", path, number);
    // Bytes no word holds, which would load as words nothing matches: NUL (a UTF-16 file has one beside every
    // ASCII byte) and a byte order mark past the file's start (files joined together).
    TOPO_CHECK(line.find('\0') == std::string::npos,
               "{}: NUL byte in a word list line (a UTF-16 file? save it as UTF-8)", where);
    TOPO_CHECK(line.find(kUtf8Bom) == std::string::npos, "{}: byte order mark (U+FEFF) inside the word list", where);
    const std::size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos) continue;  // blank
    std::size_t end = line.find(' ', start);
    const std::string_view word = std::string_view(line).substr(start, end == std::string::npos ? end : end - start);
    if (end != std::string::npos) {
      const std::size_t freq_start = line.find_first_not_of(' ', end);
      if (freq_start != std::string::npos) {
        const std::size_t freq_end = std::min(line.find(' ', freq_start), line.size());
        const std::string_view freq = std::string_view(line).substr(freq_start, freq_end - freq_start);
        TOPO_CHECK(std::all_of(freq.begin(), freq.end(), [](char c) { return c >= '0' && c <= '9'; }),
                   "{}: frequency '{}' of word '{}' is not a non-negative integer (expected 'WORD FREQ POS')",
                   where, freq, word);
      }
    }
    const std::vector<char32_t> cps = utf8_code_points(word, where);
    words.emplace_back(cps.begin(), cps.end());
  }
  TOPO_CHECK(!in.bad(), "cannot read lexicon '{}': {}", path, std::strerror(errno));
  TOPO_CHECK(!words.empty(), "lexicon '{}' holds no words", path);
  return Lexicon(words);
}

std::int32_t Lexicon::child(std::int32_t node, char32_t c) const {
  const auto first = child_code_points_.begin() + first_child_[static_cast<std::size_t>(node)];
  const auto last = child_code_points_.begin() + first_child_[static_cast<std::size_t>(node) + 1];
  const auto it = std::lower_bound(first, last, c);
  return it != last && *it == c ? child_nodes_[static_cast<std::size_t>(it - child_code_points_.begin())] : kNoNode;
}

bool Lexicon::contains(const std::u32string& word) const {
  std::int32_t node = kRoot;
  for (char32_t c : word)
    if ((node = child(node, c)) == kNoNode) return false;
  return !word.empty() && is_word(node);
}

LexiconMatch Lexicon::match(const std::u32string_view sentence, const LexiconMatchOptions& options) const {
  return match_units(
      static_cast<std::int64_t>(sentence.size()),
      [&](std::int64_t i, std::int32_t node) { return child(node, sentence[static_cast<std::size_t>(i)]); }, options);
}

}  // namespace topo::models
