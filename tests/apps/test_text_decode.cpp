// Text decoding and tokenization: expected outputs come from the Unicode standard's worked example of
// U+FFFD substitution (Table 3-8, "maximal subparts") and from the Latin-1 code chart.
#include <doctest/doctest.h>

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
