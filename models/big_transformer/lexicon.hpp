#pragma once
// A word list as a trie over Unicode code points, and lexicon matching: every substring of a sentence that is
// a word of the list becomes a span [first, last] (BiG-Transformer's word nodes, ../shared/docs/models.md §3).
//
// The trie is frozen into flat arrays after loading: node n's children are child_code_points /
// child_nodes[first_child[n] .. first_child[n + 1]), sorted by code point, found by binary search. Matching a
// sentence walks the trie from every start position until the path leaves it, so the cost is
// (positions) x (longest matching prefix) x log(fan-out): microseconds for a 128-character sentence against
// jieba's 349k words (bench: `topo-bench graph`, case lexicon_match).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graph/builders.hpp"

namespace topo::models {

// Code points of a UTF-8 string; an ill-formed sequence is a topo::Error naming `where` and the byte offset.
std::vector<char32_t> utf8_code_points(std::string_view text, const std::string& where = "text");

struct LexiconMatchOptions {
  bool single_units = false;   // words of one unit (one character) become spans too
  std::int64_t max_words = 0;  // > 0: at most this many spans per sentence (the first by start, then end)
};

// The spans of one sentence, ordered by start then end, and how many the cap dropped.
struct LexiconMatch {
  std::vector<builders::Span> spans;
  std::int64_t dropped = 0;
};

class Lexicon {
 public:
  static constexpr std::int32_t kNoNode = -1;
  static constexpr std::int32_t kRoot = 0;

  Lexicon();  // empty: matches nothing
  explicit Lexicon(const std::vector<std::u32string>& words);
  // A word list file, one entry a line: `WORD [FREQ [POS]]` separated by spaces (jieba's dict.txt). Only the
  // word is read; FREQ, when present, must be a non-negative integer. Blank lines are skipped, a UTF-8 byte order
  // mark at the start is dropped; a malformed line (invalid UTF-8, a NUL byte as UTF-16 has, a byte order mark
  // past the start, a bad FREQ) is a topo::Error naming path:line.
  static Lexicon load(const std::string& path);

  std::int64_t size() const { return words_; }  // distinct words
  std::int64_t num_nodes() const { return static_cast<std::int64_t>(terminal_.size()); }
  bool contains(const std::u32string& word) const;

  // The child of `node` along code point `c`, or kNoNode.
  std::int32_t child(std::int32_t node, char32_t c) const;
  bool is_word(std::int32_t node) const { return terminal_[static_cast<std::size_t>(node)] != 0; }

  // Every substring of `sentence` (code points) that is a word: spans over code point positions.
  LexiconMatch match(const std::u32string_view sentence, const LexiconMatchOptions& options = {}) const;

  // The same over a sentence of n units each spelling one or more code points (tokens of a vocabulary):
  // step(i, node) consumes unit i from `node` and returns the node reached, or kNoNode. A span [a, b] covers
  // units a..b whose concatenated spelling is a word.
  template <class Step>
  LexiconMatch match_units(std::int64_t n, Step&& step, const LexiconMatchOptions& options = {}) const {
    LexiconMatch out;
    for (std::int64_t a = 0; a < n; ++a) {
      std::int32_t node = kRoot;
      for (std::int64_t b = a; b < n; ++b) {
        node = step(b, node);
        if (node == kNoNode) break;
        if (!is_word(node) || (b == a && !options.single_units)) continue;
        if (options.max_words > 0 && static_cast<std::int64_t>(out.spans.size()) >= options.max_words)
          ++out.dropped;
        else
          out.spans.push_back({a, b});
      }
    }
    return out;
  }

 private:
  std::vector<std::int64_t> first_child_;  // [nodes + 1]
  std::vector<char32_t> child_code_points_;
  std::vector<std::int32_t> child_nodes_;
  std::vector<std::uint8_t> terminal_;     // [nodes]: a word ends here
  std::int64_t words_ = 0;
};

}  // namespace topo::models
