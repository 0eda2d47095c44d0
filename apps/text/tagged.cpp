// Column-format readers for sequence labelling (one token per line, blank line between sentences) and the
// prediction writer. Files are read whole and scanned once, single-threaded (the largest, UD EWT train, is 14 MB).
#include "apps/text/tagged.hpp"

#include <filesystem>

#include "apps/text/line_reader.hpp"
#include "kernels/atomic_file.hpp"
#include "kernels/error.hpp"

namespace topo::text {

using detail::bad_line;

TagFormat parse_tag_format(const std::string& name) {
  if (name == "conll") return TagFormat::Conll;
  if (name == "conllu") return TagFormat::Conllu;
  if (name == "weibo") return TagFormat::Weibo;
  if (name == "bmes") return TagFormat::Bmes;
  fail("unknown tagging format '{}' (expected conll, conllu, weibo or bmes)", name);
}

const char* tag_format_name(TagFormat format) {
  switch (format) {
    case TagFormat::Conll: return "conll";
    case TagFormat::Conllu: return "conllu";
    case TagFormat::Weibo: return "weibo";
    case TagFormat::Bmes: return "bmes";
  }
  return "?";
}

std::vector<std::string> tag_formats() { return {"conll", "conllu", "weibo", "bmes"}; }

TagFormat guess_tag_format(const std::string& path) {
  const std::filesystem::path p(path);
  const std::string name = p.filename().string();
  if (p.extension() == ".conllu") return TagFormat::Conllu;
  if (p.extension() == ".bmes") return TagFormat::Bmes;
  if (name.find("weibo") != std::string::npos || name.find("Weibo") != std::string::npos) return TagFormat::Weibo;
  return TagFormat::Conll;
}

namespace {

// Number of bytes of the UTF-8 code point starting at s[i] (valid UTF-8: decode_line's output).
std::size_t code_point_bytes(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const std::size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  return std::min(n, s.size() - i);
}

// Weibo's token field: the character(s), then the position digits. Strips the trailing ASCII digits but keeps
// the first code point ("011" -> "0", "K16" -> "K"; two U+FFFD + digit -> the two U+FFFD).
std::string weibo_token(std::string_view field) {
  if (field.empty()) bad_line("empty character field");
  const std::size_t first = code_point_bytes(field, 0);
  std::size_t end = field.size();
  while (end > first && field[end - 1] >= '0' && field[end - 1] <= '9') --end;
  if (end == field.size()) bad_line("character field '{}' has no position digit after the character", field);
  return std::string(field.substr(0, end));
}

bool has_space(std::string_view s) {
  for (char c : s)
    if (c == ' ' || c == '\t') return true;
  return false;
}

}  // namespace

TaggedDataset read_tagged(TagFormat format, const std::string& path, const TagReadOptions& options) {
  TaggedDataset d;
  d.path = path;
  d.format = format;
  TaggedSentence current;
  bool current_bad = false;
  std::size_t conll_columns = 0;  // conll: the column count of the file's first token line
  std::int64_t conll_columns_line = 0;
  const auto finish = [&] {
    if (current_bad) {
      ++d.stats.read.skipped_bad;
    } else if (!current.tokens.empty()) {
      d.stats.tokens += current.size();
      ++d.stats.read.examples;
      d.sentences.push_back(std::move(current));
    }
    current = TaggedSentence{};
    current_bad = false;
  };
  const auto add = [&](std::int64_t line, std::string token, std::string_view tag, const std::string& text) {
    if (token.empty()) bad_line("empty token");
    if (tag.empty()) bad_line("empty tag");
    if (has_space(tag)) bad_line("tag '{}' contains whitespace", tag);
    if (current.tokens.empty()) {
      current.line = line;
      current.document = d.stats.documents - 1;  // documents are counted only in conll files
    }
    current.tokens.push_back(std::move(token));
    current.tags.emplace_back(tag);
    current.source.push_back(text);
    current.lines.push_back(line);
  };
  const auto parse = [&](std::int64_t line, const std::string& text) {
    std::string_view s(text);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);  // trailing blanks
    try {
      switch (format) {
        case TagFormat::Conll: {
          if (s.substr(0, 10) == "-DOCSTART-") {
            if (!current.tokens.empty()) bad_line("-DOCSTART- inside a sentence (no blank line before it)");
            ++d.stats.documents;
            return;
          }
          // Spaces (CoNLL-2003's own files) or tabs (many exports of it): the first token line decides.
          if (conll_columns == 0) d.conll_separator = s.find('\t') != std::string_view::npos ? '\t' : ' ';
          const char sep = d.conll_separator, other = sep == ' ' ? '\t' : ' ';
          const char* sep_name = sep == ' ' ? "space" : "tab";
          if (sep == ' ' && s.find(other) != std::string_view::npos)
            bad_line("a tab in a file of space-separated columns (line {} has no tab)", conll_columns_line);
          const std::vector<std::string_view> columns = detail::split_fields(s, sep);
          for (std::string_view c : columns)
            if (c.empty()) bad_line("empty column (two {}s in a row?)", sep_name);
          if (columns.size() < 2)
            bad_line("{} column; expected 'token ... tag' (>= 2 {}-separated)", columns.size(), sep_name);
          if (conll_columns == 0) {
            conll_columns = columns.size();
            conll_columns_line = line;
          } else if (columns.size() != conll_columns) {
            bad_line("{} columns, but line {} has {}", columns.size(), conll_columns_line, conll_columns);
          }
          add(line, std::string(columns.front()), columns.back(), text);
          return;
        }
        case TagFormat::Conllu: {
          if (s.front() == '#') {
            ++d.stats.skipped_lines;
            return;
          }
          const std::vector<std::string_view> columns = detail::split_fields(s, '\t');
          if (columns.size() != 10) bad_line("{} tab-separated columns; CoNLL-U has 10", columns.size());
          const std::string_view id = columns[0];
          if (id.find('-') != std::string_view::npos || id.find('.') != std::string_view::npos) {
            ++d.stats.skipped_lines;  // multiword token range or empty node: not a syntactic word
            return;
          }
          if (!detail::is_integer(id) || id.front() == '-' || id == "0") bad_line("ID '{}' is not a word index", id);
          if (std::stoll(std::string(id)) != current.size() + 1)
            bad_line("word ID {} follows {} words of the sentence (missing blank line?)", id, current.size());
          const std::string_view tag = columns[options.xpos ? 4 : 3];
          if (tag == "_") bad_line("no {} tag ('_')", options.xpos ? "XPOS" : "UPOS");
          add(line, std::string(columns[1]), tag, text);
          return;
        }
        case TagFormat::Weibo: {
          const std::size_t tab = s.rfind('\t');
          if (tab == std::string_view::npos) bad_line("no tab; expected 'CHAR<digits><TAB>TAG'");
          add(line, weibo_token(s.substr(0, tab)), s.substr(tab + 1), text);
          return;
        }
        case TagFormat::Bmes: {
          const std::size_t space = s.rfind(' ');
          if (space == std::string_view::npos || space == 0) bad_line("expected 'CHAR TAG'");
          add(line, std::string(s.substr(0, space)), s.substr(space + 1), text);
          return;
        }
      }
    } catch (const detail::BadLine&) {
      if (!options.skip_bad) throw;
      current_bad = true;  // drop the whole sentence (its tags would be misaligned without this token)
      --d.stats.read.skipped_bad;  // for_each_line counts the line; the sentence is counted by finish()
      throw;
    }
  };
  detail::for_each_line(path, d.stats.read, options.encoding, options.skip_bad, parse,
                        [&](std::int64_t) { finish(); });
  finish();
  TOPO_CHECK(d.stats.read.examples == static_cast<std::int64_t>(d.sentences.size()), "{}: sentence count mismatch",
             path);
  return d;
}

void write_tagged_predictions(const std::string& path, const TaggedDataset& data,
                              const std::vector<std::vector<std::string>>& predicted) {
  TOPO_CHECK(predicted.size() == data.sentences.size(), "predictions for '{}': {} sentences, the file has {}",
             data.path, predicted.size(), data.sentences.size());
  const char separator = data.format == TagFormat::Conll  ? data.conll_separator
                         : data.format == TagFormat::Bmes ? ' '
                                                          : '\t';
  std::string out;
  for (std::size_t s = 0; s < predicted.size(); ++s) {
    const TaggedSentence& sentence = data.sentences[s];
    TOPO_CHECK(static_cast<std::int64_t>(predicted[s].size()) == sentence.size(),
               "predictions for {}:{}: {} tags for {} tokens", data.path, sentence.line, predicted[s].size(),
               sentence.size());
    for (std::size_t t = 0; t < predicted[s].size(); ++t) {
      std::string_view line(sentence.source[t]);
      while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
      out.append(line);
      out.push_back(separator);
      out.append(predicted[s][t]);
      out.push_back('\n');
    }
    out.push_back('\n');
  }
  write_file_atomically(path, out);
}

}  // namespace topo::text
