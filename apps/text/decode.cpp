#include "apps/text/decode.hpp"

#include <cstdint>

#include "kernels/error.hpp"

namespace topo::text {

TextEncoding parse_text_encoding(const std::string& name) {
  if (name == "utf8") return TextEncoding::Utf8;
  if (name == "latin1") return TextEncoding::Latin1;
  fail("unknown text encoding '{}' (valid: utf8, latin1)", name);
}

const char* text_encoding_name(TextEncoding encoding) {
  return encoding == TextEncoding::Latin1 ? "latin1" : "utf8";
}

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

void append_code_point(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else {  // Latin-1 only reaches U+00FF: two bytes
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Number of continuation bytes a lead byte announces and the allowed range of the first one (the ranges
// exclude overlongs, surrogates and code points past U+10FFFF, per Unicode table 3-7); 0 = not a lead byte.
struct Lead {
  int continuations;
  unsigned char lo, hi;
};

Lead lead_of(unsigned char b) {
  if (b >= 0xC2 && b <= 0xDF) return {1, 0x80, 0xBF};
  if (b == 0xE0) return {2, 0xA0, 0xBF};
  if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF) return {2, 0x80, 0xBF};
  if (b == 0xED) return {2, 0x80, 0x9F};
  if (b == 0xF0) return {3, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {3, 0x80, 0xBF};
  if (b == 0xF4) return {3, 0x80, 0x8F};
  return {0, 0, 0};
}

}  // namespace

std::string decode_line(std::string_view bytes, TextEncoding encoding, bool* had_invalid) {
  if (!bytes.empty() && bytes.back() == '\r') bytes.remove_suffix(1);
  std::string out;
  out.reserve(bytes.size() + 8);
  bool invalid = false;
  const std::size_t n = bytes.size();
  std::size_t i = 0;
  while (i < n) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    if (b < 0x80) {  // ASCII run: copy in one go
      std::size_t j = i + 1;
      while (j < n && static_cast<unsigned char>(bytes[j]) < 0x80) ++j;
      out.append(bytes.substr(i, j - i));
      i = j;
      continue;
    }
    if (encoding == TextEncoding::Latin1) {
      append_code_point(out, b);
      ++i;
      continue;
    }
    // Utf8: accept a well-formed sequence, else replace its maximal invalid subpart (the lead byte plus
    // the continuation bytes that were still valid) with one U+FFFD and resume at the offending byte.
    const Lead lead = lead_of(b);
    std::size_t j = i + 1;  // ends at the first byte not consumed
    bool ok = lead.continuations > 0;
    for (int k = 0; ok && k < lead.continuations; ++k, ++j) {
      if (j >= n) {
        ok = false;
        break;
      }
      const auto c = static_cast<unsigned char>(bytes[j]);
      const unsigned char lo = k == 0 ? lead.lo : 0x80, hi = k == 0 ? lead.hi : 0xBF;
      if (c < lo || c > hi) ok = false;
      if (!ok) break;
    }
    if (ok) {
      out.append(bytes.substr(i, j - i));
    } else {
      out.append(kReplacement);
      invalid = true;
    }
    i = j;
  }
  if (had_invalid) *had_invalid = invalid;
  return out;
}

std::string_view without_utf8_bom(std::string_view bytes) {
  return bytes.starts_with("\xEF\xBB\xBF") ? bytes.substr(3) : bytes;
}

Tokenization parse_tokenization(const std::string& name) {
  if (name == "whitespace") return Tokenization::Whitespace;
  if (name == "char") return Tokenization::Characters;
  fail("unknown tokenization '{}' (valid: whitespace, char)", name);
}

const char* tokenization_name(Tokenization tokenization) {
  return tokenization == Tokenization::Characters ? "char" : "whitespace";
}

std::vector<std::string> split_characters(std::string_view text, bool lowercase) {
  constexpr std::string_view kIdeographicSpace = "\xE3\x80\x80";
  std::vector<std::string> chars;
  std::size_t i = 0;
  while (i < text.size()) {
    // A code point is its lead byte and the continuation bytes (10xxxxxx) after it.
    std::size_t j = i + 1;
    while (j < text.size() && (static_cast<unsigned char>(text[j]) & 0xC0) == 0x80) ++j;
    const std::string_view c = text.substr(i, j - i);
    i = j;
    if (c == kIdeographicSpace || (c.size() == 1 && std::string_view(" \t\n\v\f\r").find(c[0]) != std::string_view::npos))
      continue;
    std::string& t = chars.emplace_back(c);
    if (lowercase && t.size() == 1 && t[0] >= 'A' && t[0] <= 'Z') t[0] = static_cast<char>(t[0] - 'A' + 'a');
  }
  return chars;
}

std::vector<std::string> tokenize(std::string_view text, Tokenization tokenization, bool lowercase) {
  return tokenization == Tokenization::Characters ? split_characters(text, lowercase) : tokenize(text, lowercase);
}

void ascii_lower(std::string& s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
}

std::vector<std::string> tokenize(std::string_view text, bool lowercase) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; };
  std::vector<std::string> tokens;
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    while (i < n && is_space(text[i])) ++i;
    std::size_t j = i;
    while (j < n && !is_space(text[j])) ++j;
    if (j > i) {
      std::string& t = tokens.emplace_back(text.substr(i, j - i));
      if (lowercase) ascii_lower(t);
    }
    i = j;
  }
  return tokens;
}

}  // namespace topo::text
