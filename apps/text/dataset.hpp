#pragma once
// Labelled text data sets: readers for SST trees, SST/stsa "LABEL tokens", MTL-16 "LABEL<TAB>text", TSV
// and JSON lines. Every reader returns examples in file order, decoded to UTF-8 and tokenized on
// whitespace (or split into characters, ReadOptions::tokenize); malformed input is a topo::Error naming "path:line" and the problem, or with skip_bad the
// line is skipped and counted.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "apps/text/decode.hpp"

namespace topo::text {

struct Example {
  std::vector<std::string> tokens;
  std::string label;
  std::int64_t line = 0;  // 1-based source line
  std::vector<std::string> tokens2 = {};  // a pair's second sentence (NLI's hypothesis); empty for one sentence
};

struct ReadStats {
  std::int64_t lines = 0;               // non-blank lines seen
  std::int64_t examples = 0;            // examples produced (subtree mode: several per line)
  std::int64_t skipped_bad = 0;         // malformed lines dropped under skip_bad
  std::int64_t invalid_utf8_lines = 0;  // lines where Utf8 decoding substituted U+FFFD
  std::string first_invalid_utf8 = {};  // "path:line" of the first of them (empty: none)
  std::int64_t truncated = 0;           // examples cut to max_length
  std::int64_t unlabelled = 0;          // snli: pairs whose gold label is "-" (no annotator majority), left out
  std::int64_t merged_duplicates = 0;   // sst unique subtrees: phrases folded into an earlier identical one
  std::int64_t label_conflicts = 0;     // sst unique subtrees: distinct phrases that carried more than one label
};

struct ReadOptions {
  TextEncoding encoding = TextEncoding::Utf8;
  bool lowercase = false;
  Tokenization tokenize = Tokenization::Whitespace;  // text formats; SST trees keep their own leaves
  bool skip_bad = false;
  std::int64_t max_length = 0;  // > 0: keep the first max_length tokens, counted in stats.truncated
  bool sst_subtrees = false;    // sst: every labelled node's span becomes an example (root first)
  bool sst_unique_subtrees = false;  // with sst_subtrees: each distinct phrase once (its most frequent label)
  bool sst_binary = false;      // sst formats: drop label 2, 0/1 -> "0", 3/4 -> "1"
  std::string label_field = "label", text_field = "text";  // jsonl keys; tsv column names with a header
  bool parse_tokens = true;  // snli: tokens from sentence{1,2}_binary_parse; false: the sentences split as text
};

struct Dataset {
  std::vector<Example> examples;
  ReadStats stats;
  std::string path;
};

// Every reader takes plain files or gzip (.gz) ones alike.
// PTB bracket trees "(3 (2 The) (2 Rock) ...)", one per line; the root's label is the sentence label and
// the leaves are the tokens; every node label must be 0..4. With sst_subtrees every node (internal and leaf) yields its span as an
// example, in pre-order (root first); duplicates are kept, unless sst_unique_subtrees: then each distinct token
// sequence is one example, at its first occurrence, with its most frequent label (ties: the label seen first), as
// SST's phrase dictionary has it. SST's training trees: 318,582 subtrees, half of them single words; 159,274
// distinct phrases, none with two labels (lowercased: 156,817, 583 with two or more).
Dataset read_sst_trees(const std::string& path, const ReadOptions& opts);
// "LABEL tok tok ..." one per line (sst/stsa); LABEL is 0..4.
Dataset read_label_tokens(const std::string& path, const ReadOptions& opts);
// "LABEL<TAB>text" one per line (MTL-16); LABEL is 0 or 1.
Dataset read_mtl(const std::string& path, const ReadOptions& opts);
// Tab-separated; a first line whose columns contain label_field and text_field is a header naming the
// columns, otherwise column 0 = label and column 1 = text.
Dataset read_tsv(const std::string& path, const ReadOptions& opts);
// One JSON object per line; label (string or integer) under label_field, text under text_field.
Dataset read_jsonl(const std::string& path, const ReadOptions& opts);
// SNLI / MultiNLI JSON lines: gold_label (entailment | neutral | contradiction; "-" = no majority: left out and
// counted in stats.unlabelled), sentence1 (premise -> tokens) and sentence2 (hypothesis -> tokens2). With
// parse_tokens the tokens are the leaves of sentence{1,2}_binary_parse: the Stanford tokenizer's words, with
// punctuation and clitics split off ("tree ." rather than "tree."), which is what word vectors are keyed by;
// a line without the parse falls back to the sentence as text. Any other label is a bad line.
Dataset read_snli(const std::string& path, const ReadOptions& opts);

// format in dataset_formats(): "sst" (trees), "sst-stsa", "mtl", "tsv", "jsonl".
Dataset read_dataset(const std::string& format, const std::string& path, const ReadOptions& opts);
std::vector<std::string> dataset_formats();

// (first size-n examples, last n examples). Both keep the path and the whole file's reading stats, except
// stats.examples, which is each part's size. MTL-16's dev set is the last 200 lines of .task.train. Error unless 0 < n < size.
std::pair<Dataset, Dataset> split_last(Dataset d, std::int64_t n);

// Token counts per example, in order (input to length_bucketed_batches).
std::vector<std::int64_t> example_lengths(const Dataset& d);

}  // namespace topo::text
