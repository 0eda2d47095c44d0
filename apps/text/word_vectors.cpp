// Word-vector files are large (GloVe 840B: 5.6 GB), so they are streamed line by line rather than read
// whole; every line is still validated so a corrupt file is reported, not half-loaded.
#include "apps/text/word_vectors.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <string_view>

#include "kernels/error.hpp"

namespace topo::text {

namespace {

std::vector<std::string_view> split_spaces(std::string_view s) {
  std::vector<std::string_view> fields;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) fields.push_back(s.substr(i, j - i));
    i = j;
  }
  return fields;
}

bool parse_int(std::string_view s, std::int64_t& v) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

WordVectors load_word_vectors(const std::string& path, const Vocabulary& vocab) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open word vectors '{}': {}", path, std::strerror(errno));
  WordVectors wv;
  std::vector<char> seen(static_cast<std::size_t>(vocab.size()), 0);
  std::int64_t declared = -1, vectors = 0, line_number = 0;
  std::string line;
  while (std::getline(in, line)) {
    ++line_number;
    std::string_view view(line);
    if (!view.empty() && view.back() == '\r') view.remove_suffix(1);
    const std::vector<std::string_view> fields = split_spaces(view);
    if (fields.empty()) continue;
    if (line_number == 1) {
      std::int64_t count = 0, dim = 0;
      if (fields.size() == 2 && parse_int(fields[0], count) && parse_int(fields[1], dim)) {  // word2vec header
        if (count < 0 || dim <= 0) fail("{}:1: bad word2vec header '{}'", path, view);
        declared = count;
        wv.dim = dim;
        wv.values.assign(static_cast<std::size_t>(vocab.size() * dim), 0.f);
        continue;
      }
    }
    // The values are the last `dim` fields and the token is everything before them: GloVe 840B has
    // tokens with spaces inside (". . ."), so only a line with too few fields is malformed.
    if (wv.dim == 0) {  // GloVe: the first vector fixes the dimension (its trailing numeric fields)
      std::size_t numeric = 0;
      float unused = 0.f;
      while (numeric + 1 < fields.size()) {
        const std::string_view f = fields[fields.size() - 1 - numeric];
        const auto r = std::from_chars(f.data(), f.data() + f.size(), unused);
        if (r.ec != std::errc() || r.ptr != f.data() + f.size()) break;
        ++numeric;
      }
      if (numeric == 0) fail("{}:{}: a word vector needs a token and at least one value", path, line_number);
      wv.dim = static_cast<std::int64_t>(numeric);
      wv.values.assign(static_cast<std::size_t>(vocab.size() * wv.dim), 0.f);
    }
    if (static_cast<std::int64_t>(fields.size()) - 1 < wv.dim)
      fail("{}:{}: token '{}' has {} values, expected {}", path, line_number, fields[0], fields.size() - 1, wv.dim);
    const std::size_t first_value = fields.size() - static_cast<std::size_t>(wv.dim);
    const std::string_view last_token_field = fields[first_value - 1];
    const std::string token(fields[0].data(), static_cast<std::size_t>(last_token_field.data() + last_token_field.size() -
                                                                       fields[0].data()));
    const std::int64_t id = vocab.contains(token) ? vocab.id(token) : -1;
    const bool take = id > Vocabulary::kPad && !seen[static_cast<std::size_t>(id)];
    for (std::int64_t k = 0; k < wv.dim; ++k) {
      const std::string_view f = fields[first_value + static_cast<std::size_t>(k)];
      float v = 0.f;
      const auto r = std::from_chars(f.data(), f.data() + f.size(), v);
      if (r.ec != std::errc() || r.ptr != f.data() + f.size())
        fail("{}:{}: value {} of token '{}' is not a number: '{}'", path, line_number, k + 1, token, f);
      if (take) wv.values[static_cast<std::size_t>(id * wv.dim + k)] = v;
    }
    if (take) {
      seen[static_cast<std::size_t>(id)] = 1;
      ++wv.found;
    }
    ++vectors;
  }
  if (in.bad()) fail("cannot read word vectors '{}'", path);
  if (wv.dim == 0) fail("{}: no word vectors", path);
  if (declared >= 0 && declared != vectors)
    fail("{}: word2vec header declares {} vectors, the file has {}", path, declared, vectors);
  return wv;
}

}  // namespace topo::text
