// Lexicon matching for BiG's word nodes: a trie over code points, every substring that is a word as a span.
#include <doctest/doctest.h>

#include <algorithm>

#include "models/big_transformer/lexicon.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::models;

namespace {

std::u32string u32(const std::string& utf8) {
  const auto cps = utf8_code_points(utf8);
  return std::u32string(cps.begin(), cps.end());
}

std::vector<std::pair<std::int64_t, std::int64_t>> pairs(const LexiconMatch& m) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (const builders::Span& s : m.spans) out.emplace_back(s.start, s.end);
  return out;
}

using Pairs = std::vector<std::pair<std::int64_t, std::int64_t>>;

}  // namespace

TEST_CASE("UTF-8 decodes to code points; ill-formed input names where and the offset") {
  CHECK(utf8_code_points("a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80") == std::vector<char32_t>{U'a', 0xE9, 0x4E2D, 0x1F600});
  CHECK_THROWS_WITH_AS(utf8_code_points("ab\xFF", "dict:3"), doctest::Contains("dict:3: invalid UTF-8 byte 0xFF at offset 2"),
                       Error);
  CHECK_THROWS_WITH_AS(utf8_code_points("\xE4\xB8"), doctest::Contains("truncated"), Error);
  CHECK_THROWS_WITH_AS(utf8_code_points("\xC0\xAF"), doctest::Contains("ill-formed"), Error);       // overlong '/'
  CHECK_THROWS_WITH_AS(utf8_code_points("\xED\xA0\x80"), doctest::Contains("ill-formed"), Error);   // surrogate
}

TEST_CASE("every substring that is a word: overlaps, nesting, the sentence end, single characters") {
  // 南京市长江大桥: 南京 南京市 市长 长江 江大桥 大桥 长江大桥 (nested and overlapping), 桥 (single).
  const Lexicon lexicon({u32("南京"), u32("南京市"), u32("市长"), u32("长江"), u32("长江大桥"), u32("大桥"),
                         u32("江大桥"), u32("桥"), u32("南京"), u32("")});
  CHECK(lexicon.size() == 8);  // the duplicate and the empty word are dropped
  CHECK(lexicon.contains(u32("长江大桥")));
  CHECK_FALSE(lexicon.contains(u32("长江大")));  // a prefix, not a word
  CHECK_FALSE(lexicon.contains(u32("")));
  const std::u32string sentence = u32("南京市长江大桥");
  CHECK(pairs(lexicon.match(sentence)) == Pairs{{0, 1}, {0, 2}, {2, 3}, {3, 4}, {3, 6}, {4, 6}, {5, 6}});
  SUBCASE("single characters only when configured") {
    LexiconMatchOptions o;
    o.single_units = true;
    CHECK(pairs(lexicon.match(sentence, o)) == Pairs{{0, 1}, {0, 2}, {2, 3}, {3, 4}, {3, 6}, {4, 6}, {5, 6}, {6, 6}});
  }
  SUBCASE("the cap keeps the first spans and counts the rest") {
    LexiconMatchOptions o;
    o.max_words = 3;
    const LexiconMatch m = lexicon.match(sentence, o);
    CHECK(pairs(m) == Pairs{{0, 1}, {0, 2}, {2, 3}});
    CHECK(m.dropped == 4);
  }
  CHECK(lexicon.match(u32("你好")).spans.empty());
  CHECK(lexicon.match(u32("")).spans.empty());
  CHECK(Lexicon().match(sentence).spans.empty());
}

TEST_CASE("non-BMP characters are one position each") {
  // U+20000 (CJK extension B) and an emoji: four UTF-8 bytes, one code point, one position.
  const Lexicon lexicon({u32("\xF0\xA0\x80\x80\xE5\xAD\x97"), u32("\xF0\x9F\x98\x80\xF0\x9F\x98\x80")});
  const std::u32string s = u32("a\xF0\xA0\x80\x80\xE5\xAD\x97\xF0\x9F\x98\x80\xF0\x9F\x98\x80");
  REQUIRE(s.size() == 5);
  CHECK(pairs(lexicon.match(s)) == Pairs{{1, 2}, {3, 4}});
}

TEST_CASE("a word list file: WORD FREQ POS lines, bad lines named by path:line") {
  const std::string path = testing::write_temp_file("dict.txt", "长江 30 ns\n\n大桥 5 n\r\n南京市\n江大桥 3");
  const Lexicon lexicon = Lexicon::load(path);
  CHECK(lexicon.size() == 4);
  CHECK(pairs(lexicon.match(u32("南京市长江大桥"))) == Pairs{{0, 2}, {3, 4}, {4, 6}, {5, 6}});
  CHECK_THROWS_WITH_AS(Lexicon::load(testing::write_temp_file("bad_freq.txt", "长江 30 ns\n大桥 x5 n\n")),
                       doctest::Contains("bad_freq.txt:2: frequency 'x5'"), Error);
  CHECK_THROWS_WITH_AS(Lexicon::load(testing::write_temp_file("bad_utf8.txt", "长江 30 ns\n\n\xE5\xAD 1 n\n")),
                       doctest::Contains("bad_utf8.txt:3: truncated UTF-8"), Error);
  CHECK_THROWS_WITH_AS(Lexicon::load(testing::write_temp_file("blank.txt", "\n  \n")), doctest::Contains("no words"), Error);
  CHECK_THROWS_WITH_AS(Lexicon::load("/nonexistent/dict.txt"), doctest::Contains("/nonexistent/dict.txt"), Error);
}

TEST_CASE("a word list saved with a byte order mark: UTF-8's dropped, UTF-16's and NUL bytes named errors") {
  using namespace std::string_literals;
  // Editors on Windows write a UTF-8 BOM; read as bytes it would make the first word U+FEFF + word, never matched.
  const Lexicon lexicon = Lexicon::load(testing::write_temp_file("bom.txt", "\xEF\xBB\xBF长江 30 ns\n大桥 5 n\n"));
  CHECK(lexicon.size() == 2);
  CHECK(lexicon.contains(u32("长江")));
  // UTF-16 puts a NUL beside every ASCII byte: its BOM (FF FE) is not UTF-8, and a NUL is no word's character.
  CHECK_THROWS_WITH_AS(Lexicon::load(testing::write_temp_file("utf16.txt", "\xFF\xFEx\0 \0" "1\0\n\0"s)),
                       doctest::Contains("utf16.txt:1: "), Error);
  CHECK_THROWS_WITH_AS(Lexicon::load(testing::write_temp_file("nul.txt", "长江 30 ns\n大\0桥 5 n\n"s)),
                       doctest::Contains("nul.txt:2: NUL byte"), Error);
  CHECK_THROWS_WITH_AS(Lexicon::load(testing::write_temp_file("late_bom.txt", "长江 30 ns\n\xEF\xBB\xBF大桥 5 n\n")),
                       doctest::Contains("late_bom.txt:2: "), Error);
}

TEST_CASE("the jieba dictionary loads and matches a real sentence") {
  const Lexicon lexicon = Lexicon::load(testing::shared_data_path("zh_lexicon/dict.txt"));  // missing: fails
  CHECK(lexicon.size() == 349045);  // SOURCE.txt: 349046 lines, 349045 distinct words
  CHECK(lexicon.contains(u32("长江大桥")));
  const LexiconMatch m = lexicon.match(u32("这家酒店的服务很好"));
  CHECK(std::find_if(m.spans.begin(), m.spans.end(), [](const builders::Span& s) { return s.start == 2 && s.end == 3; }) !=
        m.spans.end());  // 酒店
}
