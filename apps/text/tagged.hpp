#pragma once
// Sequence-labelling corpora: one token per line with its tag, a blank line between sentences.
//   conll   CoNLL-2003 columns "token POS chunk NER" (single spaces, or tabs where the file's first token line
//           has one: one separator for the whole file; any number >= 2 of columns, the same in the whole file): the
//           token is the first column, the tag the last. "-DOCSTART-" lines are document separators, not
//           sentences (counted in stats.documents).
//   conllu  CoNLL-U (10 tab-separated columns): FORM is the token, UPOS (column 4) or XPOS (column 5) the tag;
//           comment lines (#), multiword-token ranges ("3-4") and empty nodes ("8.1") are skipped and counted.
//   weibo   Weibo NER "CHAR<position digits><TAB>TAG": the trailing digits (the character's position inside a
//           segmenter's word) are stripped, keeping at least one character ("011" is the character '0').
//   bmes    Resume NER "CHAR<space>TAG" (the tag after the last space).
// Malformed input is a topo::Error naming path:line; with skip_bad the sentence holding the bad line is dropped
// and counted. Each token keeps its source line, so predictions are written back beside the input's columns.
#include <cstdint>
#include <string>
#include <vector>

#include "apps/text/dataset.hpp"

namespace topo::text {

enum class TagFormat { Conll, Conllu, Weibo, Bmes };
// "conll" | "conllu" | "weibo" | "bmes"; anything else is a topo::Error naming the value.
TagFormat parse_tag_format(const std::string& name);
const char* tag_format_name(TagFormat format);
std::vector<std::string> tag_formats();
// The format a file name suggests: *.conllu -> conllu, *.bmes -> bmes, weibo in the name -> weibo, else conll.
TagFormat guess_tag_format(const std::string& path);

struct TaggedSentence {
  std::vector<std::string> tokens;
  std::vector<std::string> tags;
  std::vector<std::string> source;  // each token's line as read (decoded, '\r' stripped): written back with predictions
  std::vector<std::int64_t> lines;  // each token's 1-based line (errors about one tag name it)
  std::int64_t line = 0;            // 1-based line of the first token
  std::int64_t document = -1;       // conll: the 0-based -DOCSTART- document it is in; -1: none marked
  std::int64_t size() const { return static_cast<std::int64_t>(tokens.size()); }
};

struct TaggedReadStats {
  ReadStats read;              // lines, examples (= sentences), skipped_bad (sentences dropped), invalid UTF-8
  std::int64_t tokens = 0;
  std::int64_t documents = 0;  // conll: -DOCSTART- lines
  std::int64_t skipped_lines = 0;  // conllu: comments, multiword ranges and empty nodes
};

struct TaggedDataset {
  std::vector<TaggedSentence> sentences;
  TaggedReadStats stats;
  std::string path;
  TagFormat format = TagFormat::Conll;
  char conll_separator = ' ';  // conll: the file's column separator (' ' or '\t'), used again for predictions
};

struct TagReadOptions {
  TextEncoding encoding = TextEncoding::Utf8;
  bool skip_bad = false;
  bool xpos = false;  // conllu: tag = XPOS instead of UPOS
};

TaggedDataset read_tagged(TagFormat format, const std::string& path, const TagReadOptions& options = {});

// The file `data` came from, each token line followed by its predicted tag (after the file's separator for conll,
// a space for bmes, a tab for conllu and weibo), a blank line after each sentence: conlleval reads a conll result
// directly (gold tag, then predicted). predicted[s] has one tag per token of sentence s. Written atomically.
void write_tagged_predictions(const std::string& path, const TaggedDataset& data,
                              const std::vector<std::vector<std::string>>& predicted);

}  // namespace topo::text
