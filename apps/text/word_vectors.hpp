#pragma once
// Pre-trained word vectors (GloVe / word2vec text formats, plain or gzip) looked up for a vocabulary.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/text/vocab.hpp"

namespace topo::text {

// What a malformed line (wrong field count, a non-number or non-finite value, a word containing spaces) does:
// Skip reports it (path:line, counted, the first few kept) and goes on; Reject stops with a topo::Error
// naming path:line. Never an abort either way.
enum class BadVectorLines { Skip, Reject };
// "skip" | "reject"; anything else is a topo::Error naming the value.
BadVectorLines parse_bad_vector_lines(const std::string& name);

struct WordVectorOptions {
  // A vocabulary token the file lacks takes the vector of its ASCII-lowercased form; an exact match always
  // wins over a lowercased one. Always on for an uncased file (no word with an ASCII capital, as GloVe 6B):
  // there a capitalised token ("The" opening a sentence) has no other way to a vector.
  bool lowercase_fallback = false;
  BadVectorLines bad_lines = BadVectorLines::Skip;
  // Keep every well-formed line's word in WordVectors::words (a vocabulary of the whole file).
  bool list_words = false;
};

struct WordVectors {
  std::int64_t dim = 0;
  std::vector<float> values;          // [vocab.size(), dim] row-major; rows without a vector stay 0
  std::vector<std::uint8_t> covered;  // [vocab.size()]: 1 where `values` holds a vector (never <pad>, <unk>)
  std::vector<std::string> words;     // with WordVectorOptions::list_words: the file's words in file order
  std::int64_t found = 0;             // vocabulary types with a vector (exact or lowercased)
  std::int64_t found_lowercase = 0;   // of them, found through their lowercased form only
  bool uncased = false;               // no word of the file has an ASCII capital (the fallback was on)
  std::int64_t vectors = 0;           // well-formed vector lines in the file
  // Well-formed lines repeating an earlier word of the vocabulary: the first vector wins (as gensim's loader), and
  // the repeat is counted, not an error, like a skipped line. A repeat of a word the vocabulary lacks changes
  // nothing and is not counted (that would take a set of every word of the file: GloVe 840B has 2.2M).
  std::int64_t duplicates = 0;
  std::int64_t bad_lines = 0;         // malformed lines skipped
  std::vector<std::string> bad_examples;  // "path:line: why" of the first kMaxBadExamples of them
  double seconds = 0.0;               // wall time of the load
  static constexpr std::size_t kMaxBadExamples = 10;
};

// Streams the file through zlib (a plain text file reads through the same path, so .gz is optional).
// GloVe text ("word v1 .. vd" per line, the first vector line fixes d) or word2vec text (first line
// "count dim": exactly two integers; the count must then match the vector lines). Blank lines, a '\r'
// before '\n' and a UTF-8 byte order mark opening the file are ignored. Lines of one other count of values
// outnumbering the vectors read are an error naming the line that fixed the width (a first line cut short). A
// missing or unreadable file, corrupt gzip data, or a file without a single vector is a topo::Error naming the
// path.
WordVectors load_word_vectors(const std::string& path, const Vocabulary& vocab, const WordVectorOptions& options = {});

// `vectors` loaded for `from`, re-indexed for `to`: a vocabulary of tokens of `from` (<pad>, <unk> first)
// that keeps every covered one, so every count stays what a load for `to` would give. Lets a task load a
// file once for its candidate tokens and keep only those the file covers (topo::Error otherwise).
WordVectors vectors_for(WordVectors vectors, const Vocabulary& from, const Vocabulary& to);

// How much of a split the vectors cover: vocabulary types (<pad>, <unk> excluded) and token occurrences
// (a token mapped to <unk> counts as not covered).
struct VectorCoverage {
  std::int64_t types = 0, types_found = 0, tokens = 0, tokens_found = 0;
  nlohmann::json to_json() const;  // {"types", "types_found", "types_pct", "tokens", "tokens_found", "tokens_pct"}
};
VectorCoverage vector_coverage(const WordVectors& vectors, const std::vector<std::vector<std::int64_t>>& sentences);

}  // namespace topo::text
