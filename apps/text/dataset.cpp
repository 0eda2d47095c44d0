// The line-oriented readers (label+tokens, MTL, TSV, JSON lines), dispatch and splitting. SST trees live in
// sst_trees.cpp. Files are small (<= tens of MiB): each is read whole and scanned once, single-threaded.
#include "apps/text/dataset.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>

#include <nlohmann/json.hpp>

#include "apps/text/line_reader.hpp"
#include "nn/json_input.hpp"

namespace topo::text {

namespace detail {

std::string read_file_bytes(const std::string& path) {
  // gzopen reads a file without a gzip header as it is, so plain and gzipped files take one path.
  errno = 0;
  const std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), gzclose);
  if (!file) fail("cannot open '{}': {}", path, errno ? std::strerror(errno) : "out of memory");
  std::string bytes;
  char buffer[1 << 16];
  int got = 0;
  while ((got = gzread(file.get(), buffer, sizeof buffer)) > 0) bytes.append(buffer, static_cast<std::size_t>(got));
  int code = Z_OK;
  const char* message = gzerror(file.get(), &code);
  if (got < 0 || (code != Z_OK && code != Z_STREAM_END))
    fail("cannot read '{}': {}", path, code == Z_ERRNO ? std::strerror(errno) : message);
  return bytes;
}

std::vector<std::string_view> split_fields(std::string_view line, char separator) {
  std::vector<std::string_view> fields;
  std::size_t pos = 0;
  while (true) {
    const std::size_t at = line.find(separator, pos);
    fields.push_back(line.substr(pos, at == std::string_view::npos ? std::string_view::npos : at - pos));
    if (at == std::string_view::npos) return fields;
    pos = at + 1;
  }
}

bool is_integer(std::string_view s) {
  if (!s.empty() && s.front() == '-') s.remove_prefix(1);
  if (s.empty() || s.size() > 18) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

bool apply_sst_label(std::string& label, const ReadOptions& opts) {
  if (label.size() != 1 || label[0] < '0' || label[0] > '4') bad_line("label '{}' is not an SST label 0..4", label);
  if (!opts.sst_binary) return true;
  if (label[0] == '2') return false;
  label = label[0] <= '1' ? "0" : "1";
  return true;
}

void add_example(Dataset& d, std::vector<std::string> tokens, std::string label, std::int64_t line,
                 const ReadOptions& opts) {
  if (opts.max_length > 0 && static_cast<std::int64_t>(tokens.size()) > opts.max_length) {
    tokens.resize(static_cast<std::size_t>(opts.max_length));
    ++d.stats.truncated;
  }
  d.examples.push_back(Example{std::move(tokens), std::move(label), line});
  ++d.stats.examples;
}

Dataset start_dataset(const std::string& path, const ReadOptions& opts) {
  TOPO_CHECK(opts.max_length >= 0, "max_length must be >= 0, got {}", opts.max_length);
  Dataset d;
  d.path = path;
  return d;
}

void add_pair(Dataset& d, std::vector<std::string> first, std::vector<std::string> second, std::string label,
              std::int64_t line, const ReadOptions& opts) {
  bool cut = false;
  for (std::vector<std::string>* tokens : {&first, &second})
    if (opts.max_length > 0 && static_cast<std::int64_t>(tokens->size()) > opts.max_length) {
      tokens->resize(static_cast<std::size_t>(opts.max_length));
      cut = true;
    }
  d.stats.truncated += cut;
  d.examples.push_back(Example{std::move(first), std::move(label), line, std::move(second)});
  ++d.stats.examples;
}

}  // namespace detail

using detail::bad_line;

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && detail::is_blank(s.substr(0, 1))) s.remove_prefix(1);
  while (!s.empty() && detail::is_blank(s.substr(s.size() - 1))) s.remove_suffix(1);
  return s;
}


// The common tail of the label/text formats: validate, tokenize, add.
void add_labelled_text(Dataset& d, std::string_view label, std::string_view text, std::int64_t line,
                       const ReadOptions& opts) {
  label = trim(label);
  if (label.empty()) bad_line("empty label");
  std::vector<std::string> tokens = tokenize(text, opts.tokenize, opts.lowercase);
  if (tokens.empty()) bad_line("empty text (label '{}')", label);
  detail::add_example(d, std::move(tokens), std::string(label), line, opts);
}

}  // namespace

Dataset read_label_tokens(const std::string& path, const ReadOptions& opts) {
  Dataset d = detail::start_dataset(path, opts);
  detail::for_each_line(d, opts, [&](std::int64_t line, const std::string& text) {
    std::vector<std::string> tokens = tokenize(text, opts.lowercase);
    std::string label = std::move(tokens.front());  // non-blank line: at least one token
    tokens.erase(tokens.begin());
    if (opts.tokenize == Tokenization::Characters)  // the text after the label, as characters
      tokens = split_characters(std::string_view(text).substr(text.find(label) + label.size()), opts.lowercase);
    if (!detail::is_integer(label)) bad_line("label '{}' is not an integer (expected 'LABEL tokens...')", label);
    if (tokens.empty()) bad_line("empty text after label '{}'", label);
    if (!detail::apply_sst_label(label, opts)) return;
    detail::add_example(d, std::move(tokens), std::move(label), line, opts);
  });
  return d;
}

Dataset read_mtl(const std::string& path, const ReadOptions& opts) {
  Dataset d = detail::start_dataset(path, opts);
  detail::for_each_line(d, opts, [&](std::int64_t line, const std::string& text) {
    const std::size_t tab = text.find('\t');
    if (tab == std::string::npos) bad_line("no tab (expected 'LABEL<TAB>text')");
    // MTL-16 is binary: any other label is a corrupt line, not an extra class.
    const std::string_view label = trim(std::string_view(text).substr(0, tab));
    if (label != "0" && label != "1") bad_line("label '{}' is not an MTL-16 label (0 or 1)", label);
    add_labelled_text(d, std::string_view(text).substr(0, tab), std::string_view(text).substr(tab + 1), line,
                      opts);
  });
  return d;
}

Dataset read_tsv(const std::string& path, const ReadOptions& opts) {
  Dataset d = detail::start_dataset(path, opts);
  std::size_t label_col = 0, text_col = 1, min_columns = 2;
  bool first = true;
  detail::for_each_line(d, opts, [&](std::int64_t line, const std::string& text) {
    const std::vector<std::string_view> columns = detail::split_fields(text, '\t');
    if (first) {
      first = false;
      std::size_t found_label = columns.size(), found_text = columns.size();
      const std::pair<const std::string*, std::size_t*> fields[2] = {{&opts.label_field, &found_label},
                                                                     {&opts.text_field, &found_text}};
      for (std::size_t c = 0; c < columns.size(); ++c)
        for (auto [field, found] : fields)
          if (trim(columns[c]) == *field) {
            // Two columns of one name: which one is meant is a guess (pandas renames, csv.DictReader takes the last).
            if (*found < columns.size())
              fail("{}:{}: header names '{}' twice (columns {} and {}); rename one", d.path, line, *field, *found + 1,
                   c + 1);
            *found = c;
          }
      if (found_label < columns.size() && found_text < columns.size()) {  // a header line
        label_col = found_label;
        text_col = found_text;
        min_columns = std::max(label_col, text_col) + 1;
        --d.stats.lines;  // a header is not a data line
        return;
      }
      // A header naming one field but not the other is a configuration mistake, not data.
      if (found_label < columns.size() || found_text < columns.size())
        fail("{}:{}: header names '{}' but not '{}' (columns: {}); set label_field/text_field", d.path, line,
             found_label < columns.size() ? opts.label_field : opts.text_field,
             found_label < columns.size() ? opts.text_field : opts.label_field, fmt::join(columns, ", "));
    }
    if (columns.size() < min_columns) bad_line("{} column(s), expected at least {}", columns.size(), min_columns);
    add_labelled_text(d, columns[label_col], columns[text_col], line, opts);
  });
  return d;
}

nlohmann::json detail::json_object_line(const std::string& text) {
  nlohmann::json j;
  try {
    j = parse_json_input(text);
  } catch (const nlohmann::json::exception& e) {
    bad_line("bad JSON: {}", e.what());
  }
  if (!j.is_object()) bad_line("expected a JSON object, got {}", j.type_name());
  return j;
}

Dataset read_jsonl(const std::string& path, const ReadOptions& opts) {
  Dataset d = detail::start_dataset(path, opts);
  detail::for_each_line(d, opts, [&](std::int64_t line, const std::string& text) {
    const nlohmann::json j = detail::json_object_line(text);
    const auto label = j.find(opts.label_field);
    if (label == j.end()) bad_line("no '{}' field", opts.label_field);
    std::string label_text;
    if (label->is_string())
      label_text = label->get<std::string>();
    else if (label->is_number_integer())
      label_text = label->dump();
    else
      bad_line("'{}' must be a string or an integer, got {}", opts.label_field, label->dump());
    const auto field = j.find(opts.text_field);
    if (field == j.end()) bad_line("no '{}' field", opts.text_field);
    if (!field->is_string()) bad_line("'{}' must be a string, got {}", opts.text_field, field->type_name());
    add_labelled_text(d, label_text, field->get_ref<const std::string&>(), line, opts);
  });
  return d;
}

std::vector<std::string> dataset_formats() { return {"sst", "sst-stsa", "mtl", "tsv", "jsonl", "snli"}; }

Dataset read_dataset(const std::string& format, const std::string& path, const ReadOptions& opts) {
  TOPO_CHECK(format != "sst" || opts.tokenize == Tokenization::Whitespace,
             "'{}': tokenize '{}' does not apply to SST trees (their leaves are the tokens); use sst-stsa",
             path, tokenization_name(opts.tokenize));
  if (format == "sst") return read_sst_trees(path, opts);
  if (format == "sst-stsa") return read_label_tokens(path, opts);
  if (format == "mtl") return read_mtl(path, opts);
  if (format == "tsv") return read_tsv(path, opts);
  if (format == "jsonl") return read_jsonl(path, opts);
  if (format == "snli") return read_snli(path, opts);
  fail("unknown data set format '{}' (valid: {})", format, fmt::join(dataset_formats(), ", "));
}

std::pair<Dataset, Dataset> split_last(Dataset d, std::int64_t n) {
  const auto size = static_cast<std::int64_t>(d.examples.size());
  TOPO_CHECK(n > 0 && n < size, "split_last: cannot hold out the last {} of {} examples of '{}'", n, size,
             d.path);
  Dataset tail;
  tail.path = d.path;
  tail.stats = d.stats;
  tail.examples.assign(std::make_move_iterator(d.examples.end() - n), std::make_move_iterator(d.examples.end()));
  d.examples.resize(static_cast<std::size_t>(size - n));
  d.stats.examples = size - n;
  tail.stats.examples = n;
  return {std::move(d), std::move(tail)};
}

std::vector<std::int64_t> example_lengths(const Dataset& d) {
  std::vector<std::int64_t> lengths;
  lengths.reserve(d.examples.size());
  for (const Example& e : d.examples) lengths.push_back(static_cast<std::int64_t>(e.tokens.size()));
  return lengths;
}

}  // namespace topo::text
