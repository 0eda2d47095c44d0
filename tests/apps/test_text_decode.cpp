// Text decoding and tokenization: expected outputs come from the Unicode standard's worked example of
// U+FFFD substitution (Table 3-8, "maximal subparts") and from the Latin-1 code chart.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>

#include "apps/text/decode.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::text;

namespace {
const std::string kFffd = "\xEF\xBF\xBD";
}

TEST_CASE("text decode: encoding names parse, unknown ones are an error listing the valid ones") {
  CHECK(parse_text_encoding("utf8") == TextEncoding::Utf8);
  CHECK(parse_text_encoding("latin1") == TextEncoding::Latin1);
  CHECK(std::string(text_encoding_name(TextEncoding::Latin1)) == "latin1");
  const std::string e = testing::error_of([] { parse_text_encoding("UTF-8"); });
  CHECK(e.find("UTF-8") != std::string::npos);
  CHECK(e.find("latin1") != std::string::npos);
}

TEST_CASE("text decode: valid UTF-8 passes through unchanged and is not flagged") {
  const std::string s = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 plain";  // é, €, an emoji
  bool invalid = true;
  CHECK(decode_line(s, TextEncoding::Utf8, &invalid) == s);
  CHECK_FALSE(invalid);
  CHECK(decode_line("", TextEncoding::Utf8, &invalid).empty());
}

TEST_CASE("text decode: invalid UTF-8 -> one U+FFFD per maximal subpart (Unicode Table 3-8)") {
  // 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 -> a FFFD FFFD FFFD b FFFD c FFFD FFFD d
  const std::string in = "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64";
  const std::string want = "a" + kFffd + kFffd + kFffd + "b" + kFffd + "c" + kFffd + kFffd + "d";
  bool invalid = false;
  CHECK(decode_line(in, TextEncoding::Utf8, &invalid) == want);
  CHECK(invalid);
  // Overlong "/" (C0 AF): C0 is never a lead byte, so two replacements.
  CHECK(decode_line("\xC0\xAF", TextEncoding::Utf8, nullptr) == kFffd + kFffd);
  // A UTF-16 surrogate (ED A0 80) is not valid UTF-8: ED's second byte must be 80..9F -> three.
  CHECK(decode_line("\xED\xA0\x80", TextEncoding::Utf8, nullptr) == kFffd + kFffd + kFffd);
  // Past U+10FFFF (F4 90 ...) and a truncated sequence at the end of the line.
  CHECK(decode_line("\xF4\x90\x80\x80", TextEncoding::Utf8, nullptr) == kFffd + kFffd + kFffd + kFffd);
  CHECK(decode_line("ok \xE2\x82", TextEncoding::Utf8, nullptr) == "ok " + kFffd);
}

TEST_CASE("text decode: Latin-1 maps each byte to its code point; a trailing CR is stripped") {
  bool invalid = true;
  CHECK(decode_line("clich\xE9s", TextEncoding::Latin1, &invalid) == "clich\xC3\xA9s");
  CHECK_FALSE(invalid);
  CHECK(decode_line("\xFF\x80", TextEncoding::Latin1, nullptr) == "\xC3\xBF\xC2\x80");
  CHECK(decode_line("a b\r", TextEncoding::Utf8, nullptr) == "a b");
  CHECK(decode_line("a\rb", TextEncoding::Utf8, nullptr) == "a\rb");  // only a trailing one
}

TEST_CASE("text tokenize: ASCII whitespace runs split once; lowercase folds ASCII only") {
  using V = std::vector<std::string>;
  CHECK(tokenize("  The  Rock\tis\n", false) == V{"The", "Rock", "is"});
  CHECK(tokenize("The \xC3\x89T\xC3\x89", true) == V{"the", "\xC3\x89t\xC3\x89"});  // "ÉTÉ" keeps É
  CHECK(tokenize(" \t ", false).empty());
  CHECK(tokenize("", true).empty());
}

namespace {

// Strict UTF-8 check written from the code-point definition (not the decoder's lead-byte table): decode
// each sequence's value and reject overlongs, surrogates and values past U+10FFFF.
bool is_valid_utf8(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    const int len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    std::uint32_t cp = len == 1 ? b : b & (0x7F >> len);
    for (int k = 1; k < len; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c >> 6) != 0x2) return false;
      cp = (cp << 6) | (c & 0x3F);
    }
    const std::uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

}  // namespace

TEST_CASE("text decode: arbitrary bytes always decode to valid UTF-8, and decoding is idempotent") {
  std::mt19937 gen(12345);
  const unsigned char interesting[] = {0x61, 0x80, 0xBF, 0xC0, 0xC2, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bytes(gen() % 24, '\0');
    for (char& c : bytes) c = static_cast<char>(gen() % 2 ? interesting[gen() % sizeof interesting] : gen() % 256);
    bool invalid = false;
    const std::string out = decode_line(bytes, TextEncoding::Utf8, &invalid);
    CAPTURE(trial);
    REQUIRE(is_valid_utf8(out));
    CHECK(invalid == !is_valid_utf8(bytes));
    const std::string again = decode_line(out, TextEncoding::Utf8, &invalid);
    CHECK(again == out);
    CHECK_FALSE(invalid);
    CHECK(is_valid_utf8(decode_line(bytes, TextEncoding::Latin1, nullptr)));
  }
}
