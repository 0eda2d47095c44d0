// Word-vector files are large (GloVe 840B: 5.6 GB, 2 GB gzipped), so they are streamed through zlib in
// chunks rather than read whole, and only rows the vocabulary uses are kept; every line is still parsed so
// a malformed one is reported with its line number, not half-loaded.
#include "apps/text/word_vectors.hpp"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string_view>
#include <unordered_map>

#include "apps/text/decode.hpp"
#include "kernels/error.hpp"

namespace topo::text {

namespace {

// Space- or tab-separated fields of a line into `fields` (reused across lines: no allocation per line).
void split_fields(std::string_view s, std::vector<std::string_view>& fields) {
  fields.clear();
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) fields.push_back(s.substr(i, j - i));
    i = j;
  }
}

bool parse_int(std::string_view s, std::int64_t& v) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_float(std::string_view s, float& v) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// How a vocabulary row got its vector: an exact match outranks a lowercased one.
enum Source : std::uint8_t { kNone = 0, kLowercased = 1, kExact = 2 };

}  // namespace

BadVectorLines parse_bad_vector_lines(const std::string& name) {
  if (name == "skip") return BadVectorLines::Skip;
  if (name == "reject") return BadVectorLines::Reject;
  fail("unknown bad-line policy '{}' for word vectors: expected skip or reject", name);
}

WordVectors load_word_vectors(const std::string& path, const Vocabulary& vocab, const WordVectorOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  errno = 0;
  // gzopen reads a file without a gzip header as it is, so plain text takes the same path.
  const std::unique_ptr<gzFile_s, int (*)(gzFile)> gz(gzopen(path.c_str(), "rb"), gzclose);
  if (!gz) fail("cannot open word vectors '{}': {}", path, errno ? std::strerror(errno) : "out of memory");
  // Buffers sized to the file, up to 256 KiB for zlib and 1 MiB for the chunks: a small file (a test's, a
  // fuzzer's) then costs no large allocations, which ASan maps and unmaps on every call.
  struct stat st {};
  const std::size_t file_bytes = ::stat(path.c_str(), &st) == 0 && st.st_size > 0 ? static_cast<std::size_t>(st.st_size) : 0;
  gzbuffer(gz.get(), static_cast<unsigned>(std::clamp<std::size_t>(file_bytes, 8u << 10, 256u << 10)));

  const auto vocab_size = static_cast<std::size_t>(vocab.size());
  WordVectors wv;
  std::vector<std::uint8_t> source(vocab_size, kNone);
  // Lowercase fallback: the lowercased form -> the vocabulary ids it stands for (tokens with a capital only;
  // a token already lowercase is found by the exact look-up). Built even without the option: whether the
  // file is uncased (and the fallback on) is known only at its end, when the folded rows are kept or undone.
  std::unordered_map<std::string, std::vector<std::int64_t>> by_lowercase;
  for (std::int64_t id = Vocabulary::kUnk + 1; id < vocab.size(); ++id) {
    std::string lower = vocab.token(id);
    ascii_lower(lower);
    if (lower != vocab.token(id)) by_lowercase[lower].push_back(id);
  }
  bool cased = false;  // some word has an ASCII capital
  std::int64_t exact_duplicates = 0;

  std::int64_t declared = -1, line_number = 0;
  std::int64_t width_line = 0;                    // the line that fixed wv.dim (1 for a word2vec header)
  std::map<std::size_t, std::int64_t> other_widths;  // value counts of the lines skipped for another count
  std::vector<std::string_view> fields;
  std::vector<float> row;
  std::string word;
  auto bad = [&](const std::string& why) {
    std::string where = fmt::format("{}:{}: {}", path, line_number, why);
    if (options.bad_lines == BadVectorLines::Reject) fail("{} (bad-line policy 'reject'; 'skip' skips such lines)", where);
    ++wv.bad_lines;
    if (wv.bad_examples.size() < WordVectors::kMaxBadExamples) wv.bad_examples.push_back(std::move(where));
  };
  auto take = [&](std::int64_t id, Source level) {  // returns true when the line repeats an earlier word
    std::uint8_t& s = source[static_cast<std::size_t>(id)];
    if (s >= level) return s == level;
    std::copy(row.begin(), row.end(), wv.values.begin() + id * wv.dim);
    s = level;
    return false;
  };
  auto process = [&](std::string_view line) {
    ++line_number;
    if (line_number == 1) line = without_utf8_bom(line);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    split_fields(line, fields);
    if (fields.empty()) return;
    if (line_number == 1 && fields.size() == 2) {  // word2vec header "count dim"
      std::int64_t count = 0, dim = 0;
      if (parse_int(fields[0], count) && parse_int(fields[1], dim)) {
        if (count < 0 || dim <= 0) fail("{}:1: bad word2vec header '{}'", path, line);
        declared = count;
        wv.dim = dim;
        width_line = 1;  // the table is allocated at the first line that has this many values, not on the
        return;        // header's word: "3 38000000000" asked for 10^12 bytes (found by fuzz_word_vectors)
      }
    }
    if (wv.dim == 0) {  // GloVe: the first vector line's trailing numeric fields fix the dimension
      std::size_t numeric = 0;
      float unused = 0.f;
      while (numeric + 1 < fields.size() && parse_float(fields[fields.size() - 1 - numeric], unused)) ++numeric;
      if (numeric == 0) return bad("a word vector line needs a word and at least one value");
      wv.dim = static_cast<std::int64_t>(numeric);
      width_line = line_number;
    }
    const auto dim = static_cast<std::size_t>(wv.dim);
    if (fields.size() != dim + 1) ++other_widths[fields.size() - 1];
    if (fields.size() < dim + 1)
      return bad(fmt::format("'{}' has {} values, expected {}", fields[0], fields.size() - 1, dim));
    if (fields.size() > dim + 1)  // GloVe 840B has ". . ." and the like: no tokenizer here produces them
      return bad(fmt::format("{} fields, expected a word and {} values (a word containing spaces, or extra values)",
                             fields.size(), dim));
    row.resize(dim);
    for (std::size_t k = 0; k < dim; ++k) {
      if (!parse_float(fields[k + 1], row[k]))
        return bad(fmt::format("value {} of '{}' is not a number: '{}'", k + 1, fields[0], fields[k + 1]));
      if (!std::isfinite(row[k])) return bad(fmt::format("value {} of '{}' is not finite: '{}'", k + 1, fields[0], fields[k + 1]));
    }
    if (wv.values.empty()) wv.values.assign(vocab_size * dim, 0.f);
    ++wv.vectors;
    word.assign(fields[0]);
    if (options.list_words) wv.words.push_back(word);
    cased = cased || std::any_of(word.begin(), word.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
    bool repeated = false;
    if (const std::int64_t id = vocab.id(word); id > Vocabulary::kUnk) repeated = take(id, kExact);
    exact_duplicates += repeated;
    if (!by_lowercase.empty())
      if (const auto it = by_lowercase.find(word); it != by_lowercase.end())
        for (const std::int64_t id : it->second) repeated = take(id, kLowercased) || repeated;
    if (repeated) ++wv.duplicates;
  };

  // Chunks of the (decompressed) stream; a line split across chunks moves to the front of the buffer. The
  // buffer is left uninitialised: zeroing 1 MiB touched every page of it even for a file of a few lines.
  std::size_t capacity = std::clamp<std::size_t>(file_bytes + 1, 8u << 10, 1u << 20), held = 0;
  std::unique_ptr<char[]> buffer = std::make_unique_for_overwrite<char[]>(capacity);
  for (;;) {
    if (held == capacity) {  // one line longer than the buffer
      std::unique_ptr<char[]> bigger = std::make_unique_for_overwrite<char[]>(2 * capacity);
      std::memcpy(bigger.get(), buffer.get(), held);
      buffer = std::move(bigger);
      capacity *= 2;
    }
    const int n = gzread(gz.get(), buffer.get() + held, static_cast<unsigned>(capacity - held));
    if (n < 0) {
      int code = 0;
      const char* message = gzerror(gz.get(), &code);
      fail("cannot read word vectors '{}' after line {}: {}", path, line_number,
           code == Z_ERRNO ? std::strerror(errno) : message);
    }
    if (n == 0) break;
    held += static_cast<std::size_t>(n);
    std::size_t start = 0;
    while (const void* nl = std::memchr(buffer.get() + start, '\n', held - start)) {
      const std::size_t end = static_cast<std::size_t>(static_cast<const char*>(nl) - buffer.get());
      process(std::string_view(buffer.get() + start, end - start));
      start = end + 1;
    }
    std::memmove(buffer.get(), buffer.get() + start, held - start);
    held -= start;
  }
  // zlib reports a stream cut short (or a bad trailer) through gzerror after the last read, not as n < 0.
  if (int code = 0; (void)gzerror(gz.get(), &code), code != Z_OK)
    fail("cannot read word vectors '{}' after line {}: {}", path, line_number, gzerror(gz.get(), &code));
  if (held > 0) process(std::string_view(buffer.get(), held));  // a last line without '\n'

  if (wv.vectors == 0)
    fail("{}: no word vectors{}", path, wv.bad_lines > 0 ? fmt::format(" ({} bad lines)", wv.bad_lines) : "");
  if (declared >= 0 && declared != wv.vectors + wv.bad_lines)
    fail("{}: word2vec header declares {} vectors, the file has {} lines after it", path, declared,
         wv.vectors + wv.bad_lines);
  // A first line cut short (or a wrong header) fixes a width the file's other lines do not have: each of them was
  // then skipped as malformed, and a run trained on the one vector of 200 that was read. Lines of one other width
  // outnumbering those read say that the width is what is wrong.
  for (const auto& [width, count] : other_widths)
    if (count > wv.vectors)
      fail("{}: {} lines have {} values, more than the {} read with the {} that line {} set (is line {} malformed?)",
           path, count, width, wv.vectors, wv.dim, width_line, width_line);
  wv.uncased = !cased;
  if (cased && !options.lowercase_fallback) {  // undo the folded rows: only exact matches count
    for (std::size_t id = 0; id < vocab_size; ++id)
      if (source[id] == kLowercased) {
        std::fill_n(wv.values.begin() + static_cast<std::ptrdiff_t>(id) * wv.dim, wv.dim, 0.f);
        source[id] = kNone;
      }
    wv.duplicates = exact_duplicates;
  }
  wv.covered.assign(vocab_size, 0);
  for (std::size_t id = 0; id < vocab_size; ++id) {
    wv.covered[id] = source[id] != kNone;
    wv.found += source[id] != kNone;
    wv.found_lowercase += source[id] == kLowercased;
  }
  wv.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return wv;
}

WordVectors vectors_for(WordVectors vectors, const Vocabulary& from, const Vocabulary& to) {
  TOPO_CHECK(static_cast<std::int64_t>(vectors.covered.size()) == from.size(),
             "vectors_for: vectors for {} tokens, vocabulary of {}", vectors.covered.size(), from.size());
  // The counts and report fields carry over; the rows move out and come back re-indexed.
  const std::vector<float> values = std::move(vectors.values);
  const std::vector<std::uint8_t> covered = std::move(vectors.covered);
  const auto dim = static_cast<std::size_t>(vectors.dim);
  vectors.values.assign(static_cast<std::size_t>(to.size()) * dim, 0.f);
  vectors.covered.assign(static_cast<std::size_t>(to.size()), 0);
  std::int64_t found = 0;
  for (std::int64_t id = 0; id < to.size(); ++id) {
    const std::string& token = to.token(id);
    TOPO_CHECK(from.contains(token), "vectors_for: token '{}' is not in the vocabulary the vectors were loaded for",
               token);
    const auto src = static_cast<std::size_t>(from.id(token)), dst = static_cast<std::size_t>(id);
    vectors.covered[dst] = covered[src];
    found += covered[src];
    std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(src * dim), dim,
                vectors.values.begin() + static_cast<std::ptrdiff_t>(dst * dim));
  }
  TOPO_CHECK(found == vectors.found, "vectors_for: the new vocabulary drops {} covered tokens", vectors.found - found);
  return vectors;
}

nlohmann::json VectorCoverage::to_json() const {
  auto pct = [](std::int64_t part, std::int64_t whole) { return whole > 0 ? 100.0 * double(part) / double(whole) : 0.0; };
  return {{"types", types},   {"types_found", types_found},   {"types_pct", pct(types_found, types)},
          {"tokens", tokens}, {"tokens_found", tokens_found}, {"tokens_pct", pct(tokens_found, tokens)}};
}

VectorCoverage vector_coverage(const WordVectors& vectors, const std::vector<std::vector<std::int64_t>>& sentences) {
  VectorCoverage c;
  const auto size = static_cast<std::int64_t>(vectors.covered.size());
  c.types = std::max<std::int64_t>(0, size - (Vocabulary::kUnk + 1));  // <pad> and <unk> are not data types
  c.types_found = vectors.found;
  for (const auto& sentence : sentences)
    for (const std::int64_t id : sentence) {
      TOPO_CHECK(id >= 0 && id < size, "vector_coverage: token id {} outside the vocabulary of {}", id, size);
      ++c.tokens;
      c.tokens_found += vectors.covered[static_cast<std::size_t>(id)];
    }
  return c;
}

}  // namespace topo::text
