#pragma once
// ChnSentiCorp-style reviews ("label<TAB>text_a" lines after a header) for the suites on Chinese text (big,
// lexicon), read as the classify task reads them with --tokenize char: decoded as UTF-8 (invalid bytes become
// U+FFFD), one token per code point, whitespace dropped.
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "apps/text/decode.hpp"

namespace topo::bench {

// The characters of every non-empty review, each review cut at max_chars (0: whole).
inline std::vector<std::vector<std::string>> review_characters(const std::string& path, std::size_t max_chars = 0) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  std::vector<std::vector<std::string>> out;
  while (std::getline(in, line)) {
    const std::size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    std::vector<std::string> chars =
        text::split_characters(text::decode_line(std::string_view(line).substr(tab + 1), text::TextEncoding::Utf8), false);
    if (chars.empty()) continue;
    if (max_chars > 0 && chars.size() > max_chars) chars.resize(max_chars);
    out.push_back(std::move(chars));
  }
  return out;
}

}  // namespace topo::bench
