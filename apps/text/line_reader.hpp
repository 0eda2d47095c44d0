#pragma once
// Internal to the readers: the per-line loop shared by every format (read bytes, decode, skip blank lines,
// turn a parser's complaint into "path:line: ..." or, with skip_bad, a counted skip) and example assembly.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "apps/text/dataset.hpp"
#include "kernels/error.hpp"

namespace topo::text::detail {

// Thrown by a line parser: this line is malformed (the message says how, without the location).
struct BadLine {
  std::string message;
};

template <class... Args>
[[noreturn]] void bad_line(fmt::format_string<Args...> format, Args&&... args) {
  throw BadLine{fmt::format(format, std::forward<Args>(args)...)};
}

// One line of a JSON-lines file (SNLI, --format jsonl) as its object: bad JSON (nn/json_input.hpp's limits
// included) or another kind of value is a BadLine.
nlohmann::json json_object_line(const std::string& text);

// The whole file as bytes, gunzipped when it is gzip; missing, unreadable or corrupt: topo::Error naming the path.
std::string read_file_bytes(const std::string& path);

inline bool is_blank(std::string_view s) {
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\v' && c != '\f') return false;
  return true;
}

// Calls parse(line_number, decoded_line) for every non-blank line of `path`, in order, and blank(line_number)
// for every blank one (column formats end a sentence there; the one-example-per-line formats ignore them).
// A parser's BadLine becomes "path:line: ..." or, with skip_bad, a counted skip.
template <class Parse, class Blank>
void for_each_line(const std::string& path, ReadStats& stats, TextEncoding encoding, bool skip_bad, Parse&& parse,
                   Blank&& blank) {
  const std::string bytes = read_file_bytes(path);
  // UTF-16 (what Windows editors save as "Unicode") puts a NUL beside every ASCII character, which is valid
  // UTF-8: each line decoded to tokens with NULs inside, and a run trained on them. Named at the file's mark,
  // and a NUL in any line (UTF-16 without a mark, a binary file) is a bad line below.
  if (bytes.starts_with("\xFF\xFE") || bytes.starts_with("\xFE\xFF"))
    fail("{}: UTF-16 text (its byte order mark); save the file as UTF-8", path);
  const std::string_view all = without_utf8_bom(bytes);
  std::int64_t line_number = 0;
  std::size_t pos = 0;
  while (pos < all.size()) {
    std::size_t end = all.find('\n', pos);
    if (end == std::string_view::npos) end = all.size();
    const std::string_view raw = all.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    if (is_blank(raw)) {
      blank(line_number);
      continue;
    }
    ++stats.lines;
    bool invalid = false;
    const std::string line = decode_line(raw, encoding, &invalid);
    if (invalid && stats.invalid_utf8_lines++ == 0) stats.first_invalid_utf8 = fmt::format("{}:{}", path, line_number);
    try {
      if (const std::size_t nul = raw.find('\0'); nul != std::string_view::npos)
        bad_line("a NUL byte at byte {} of the line: UTF-16 or binary data, not UTF-8 text", nul + 1);
      parse(line_number, line);
    } catch (const BadLine& bad) {
      if (!skip_bad)
        fail("{}:{}: {}{}", path, line_number, bad.message,
             invalid ? " (the line also has invalid UTF-8; is the encoding right?)" : "");
      ++stats.skipped_bad;
    }
  }
}

// The one-example-per-line formats: blank lines are skipped.
template <class Parse>
void for_each_line(Dataset& d, const ReadOptions& opts, Parse&& parse) {
  for_each_line(d.path, d.stats, opts.encoding, opts.skip_bad, std::forward<Parse>(parse), [](std::int64_t) {});
}

// SST labels are 0..4: any other is a BadLine (a sixth class would train silently). Returns false when
// sst_binary drops the example (label 2); else maps 0/1 -> "0", 3/4 -> "1" under sst_binary.
bool apply_sst_label(std::string& label, const ReadOptions& opts);

// An empty data set of `path` (max_length checked): where every reader starts.
Dataset start_dataset(const std::string& path, const ReadOptions& opts);
// Appends a sentence pair (each sentence truncated to max_length; a pair cut anywhere counts once).
void add_pair(Dataset& d, std::vector<std::string> first, std::vector<std::string> second, std::string label,
              std::int64_t line, const ReadOptions& opts);
// Appends an example (truncating to max_length, counting stats.examples / stats.truncated).
void add_example(Dataset& d, std::vector<std::string> tokens, std::string label, std::int64_t line,
                 const ReadOptions& opts);

// The fields between every `separator` (empty fields kept: "a\t\tb" has three).
std::vector<std::string_view> split_fields(std::string_view line, char separator);

// True for an optional '-' followed by 1..18 ASCII digits.
bool is_integer(std::string_view s);

}  // namespace topo::text::detail
