// The readers on small files written here: every format, header detection, label kinds, truncation,
// SST binarisation and subtrees, and malformed input -> "path:line" errors or counted skips.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "apps/text/dataset.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::text;
namespace fs = std::filesystem;
using V = std::vector<std::string>;

namespace {

using testing::write_temp_file;

// Expects `read` to fail with a message containing "<path>:<line>" and `what`.
template <class F>
void check_error_at(F&& read, const std::string& path, int line, const std::string& what) {
  const std::string e = testing::error_of(read);
  INFO("error: " << e);
  CHECK(e.find(path + ":" + std::to_string(line) + ":") != std::string::npos);
  CHECK(e.find(what) != std::string::npos);
}

}  // namespace

TEST_CASE("text readers: a missing file is an error naming the path, for every format") {
  for (const std::string& format : dataset_formats()) {
    const std::string e = testing::error_of([&] { read_dataset(format, "/nonexistent/topo_text.txt", {}); });
    CHECK(e.find("/nonexistent/topo_text.txt") != std::string::npos);
  }
  const std::string e = testing::error_of([] { read_dataset("csv", "x", {}); });
  CHECK(e.find("csv") != std::string::npos);
  CHECK(e.find("jsonl") != std::string::npos);
}

TEST_CASE("text readers: SST trees give root labels and leaves; subtrees are pre-order spans") {
  const std::string p = write_temp_file("trees.txt", "(3 (2 The) (4 (3 good) (2 Rock)))\n\n(1 (1 bad))\r\n");
  const Dataset d = read_sst_trees(p, {});
  REQUIRE(d.examples.size() == 2);
  CHECK(d.examples[0].label == "3");
  CHECK(d.examples[0].tokens == V{"The", "good", "Rock"});
  CHECK(d.examples[0].line == 1);
  CHECK(d.examples[1].label == "1");
  CHECK(d.examples[1].tokens == V{"bad"});
  CHECK(d.examples[1].line == 3);  // the blank line 2 is skipped but counted in numbering
  CHECK(d.stats.lines == 2);

  ReadOptions sub;
  sub.sst_subtrees = true;
  sub.lowercase = true;
  const Dataset s = read_sst_trees(p, sub);
  // Nodes of tree 1 in pre-order: (3 all) (2 The) (4 good Rock) (3 good) (2 Rock); tree 2: (1 bad) (1 bad).
  REQUIRE(s.examples.size() == 7);
  const std::vector<std::pair<std::string, V>> want = {
      {"3", {"the", "good", "rock"}}, {"2", {"the"}}, {"4", {"good", "rock"}}, {"3", {"good"}},
      {"2", {"rock"}}, {"1", {"bad"}}, {"1", {"bad"}}};
  for (std::size_t k = 0; k < want.size(); ++k) {
    CHECK(s.examples[k].label == want[k].first);
    CHECK(s.examples[k].tokens == want[k].second);
  }
  CHECK(s.stats.examples == 7);

  ReadOptions bin = sub;
  bin.sst_binary = true;  // drops the two "2" nodes; 3,4 -> 1, 1 -> 0
  const Dataset b = read_sst_trees(p, bin);
  V labels;
  for (const Example& e : b.examples) labels.push_back(e.label);
  CHECK(labels == V{"1", "1", "1", "0", "0"});
}

TEST_CASE("text readers: unique SST subtrees keep each phrase once, with its most frequent label") {
  // Subtrees per line: 1: (3 The good Rock) (2 The) (4 good Rock) (3 good) (2 Rock); 2: (1 good) x2;
  // 3: (4 good Rock) (3 good) (2 Rock); 4: (0 Rock) x3 (a unary chain).
  const std::string p = write_temp_file("dup_trees.txt", "(3 (2 The) (4 (3 good) (2 Rock)))\n(1 (1 good))\n"
                                                         "(4 (3 good) (2 Rock))\n(0 (0 (0 Rock)))\n");
  ReadOptions all;
  all.sst_subtrees = true;
  CHECK(read_sst_trees(p, all).examples.size() == 13);
  ReadOptions unique = all;
  unique.sst_unique_subtrees = true;
  const Dataset u = read_sst_trees(p, unique);
  // "good": 3 twice and 1 twice, a tie, so the label seen first; "Rock": 2 twice, 0 three times.
  const std::vector<std::pair<std::string, V>> want = {
      {"3", {"The", "good", "Rock"}}, {"2", {"The"}}, {"4", {"good", "Rock"}}, {"3", {"good"}}, {"0", {"Rock"}}};
  REQUIRE(u.examples.size() == want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    CHECK(u.examples[k].label == want[k].first);
    CHECK(u.examples[k].tokens == want[k].second);
    CHECK(u.examples[k].line == 1);  // where each phrase first occurs
  }
  CHECK(u.stats.examples == 5);
  CHECK(u.stats.merged_duplicates == 8);
  CHECK(u.stats.label_conflicts == 2);
  // Without subtrees the flag changes nothing: the roots stay one per line, duplicates or not.
  ReadOptions roots;
  roots.sst_unique_subtrees = true;
  CHECK(read_sst_trees(p, roots).examples.size() == 4);
}

TEST_CASE("text readers: malformed trees are errors at path:line, or skipped and counted") {
  const std::string p = write_temp_file("bad_trees.txt",
                                   "(2 (2 a) (2 b))\n(2 (2 a) (2 b)\n(2 (2 a)))\n(x (2 a))\n(2 (2 a b))\n(2 ())\n");
  check_error_at([&] { read_sst_trees(p, {}); }, p, 2, "unbalanced");
  ReadOptions skip;
  skip.skip_bad = true;
  const Dataset d = read_sst_trees(p, skip);
  CHECK(d.examples.size() == 1);
  CHECK(d.stats.skipped_bad == 5);
  CHECK(d.stats.lines == 6);
  for (const auto& [content, what] : std::vector<std::pair<std::string, std::string>>{
           {"(2 (2 a)))\n", "after the tree"},
           {") (2 a)\n", "unexpected ')'"},
           {"(x (2 a))\n", "'x'"},
           {"(2 (2 a b))\n", "more than one word"},
           {"(2 ())\n", "label"},
           {"word\n", "expected '('"},
           {"(2 a) (2 b)\n", "after the tree"}}) {
    const std::string q = write_temp_file("bad_tree.txt", content);
    check_error_at([&] { read_sst_trees(q, {}); }, q, 1, what);
  }
  // sst_binary needs SST labels 0..4.
  const std::string q = write_temp_file("bad_label.txt", "(7 (2 a))\n");
  ReadOptions bin;
  bin.sst_binary = true;
  check_error_at([&] { read_sst_trees(q, bin); }, q, 1, "'7'");
}

TEST_CASE("text readers: 'LABEL tokens' lines, truncation and binarisation") {
  const std::string p = write_temp_file("stsa.txt", "3 a  good   film\n2 so so\n0 bad\n");
  ReadOptions o;
  o.max_length = 2;
  const Dataset d = read_label_tokens(p, o);
  REQUIRE(d.examples.size() == 3);
  CHECK(d.examples[0].tokens == V{"a", "good"});
  CHECK(d.stats.truncated == 1);  // only the 3-token line exceeds 2
  o.sst_binary = true;
  o.max_length = 0;
  const Dataset b = read_label_tokens(p, o);
  REQUIRE(b.examples.size() == 2);
  CHECK(b.examples[0].label == "1");
  CHECK(b.examples[1].label == "0");
  CHECK(b.examples[1].line == 3);

  const std::string bad = write_temp_file("stsa_bad.txt", "1 fine\npos great\n4\n");
  check_error_at([&] { read_label_tokens(bad, {}); }, bad, 2, "'pos'");
  ReadOptions skip;
  skip.skip_bad = true;
  const Dataset s = read_label_tokens(bad, skip);
  CHECK(s.examples.size() == 1);
  CHECK(s.stats.skipped_bad == 2);  // the bad label and the empty text
  const std::string empty = write_temp_file("stsa_empty.txt", "4\n");
  check_error_at([&] { read_label_tokens(empty, {}); }, empty, 1, "empty text");
}

TEST_CASE("text readers: MTL 'LABEL<TAB>text' with a missing tab or empty text") {
  const std::string p = write_temp_file("mtl.txt", "1\tgreat  product \n0\tBad\n");
  ReadOptions lower;
  lower.lowercase = true;
  const Dataset d = read_mtl(p, lower);
  REQUIRE(d.examples.size() == 2);
  CHECK(d.examples[0].label == "1");
  CHECK(d.examples[0].tokens == V{"great", "product"});
  CHECK(d.examples[1].tokens == V{"bad"});

  const std::string bad = write_temp_file("mtl_bad.txt", "1\tok\n0 no tab here\n1\t  \n");
  check_error_at([&] { read_mtl(bad, {}); }, bad, 2, "no tab");
  const std::string empty = write_temp_file("mtl_empty.txt", "1\t  \n");
  check_error_at([&] { read_mtl(empty, {}); }, empty, 1, "empty text");
  ReadOptions skip;
  skip.skip_bad = true;
  const Dataset s = read_mtl(bad, skip);
  CHECK(s.examples.size() == 1);
  CHECK(s.stats.skipped_bad == 2);
}

TEST_CASE("text readers: a UTF-8 byte order mark opening a file is dropped, not glued to its first field") {
  const std::string bom = "\xEF\xBB\xBF";
  CHECK(read_mtl(write_temp_file("bom.mtl", bom + "1\tgood\n0\tbad\n"), {}).examples.at(0).label == "1");
  CHECK(read_label_tokens(write_temp_file("bom.stsa", bom + "4 a b\n"), {}).examples.at(0).label == "4");
  const Dataset tsv = read_tsv(write_temp_file("bom.tsv", bom + "label\ttext\n1\tgood\n"), {});
  REQUIRE(tsv.examples.size() == 1);  // the header was found: 'label', not "\uFEFFlabel"
  CHECK(tsv.examples[0].tokens == V{"good"});
  CHECK(read_sst_trees(write_temp_file("bom.sst", bom + "(3 (2 a) (4 b))\n"), {}).examples.at(0).tokens ==
        V{"a", "b"});
  // Only at the file's start: elsewhere U+FEFF is a character like any other.
  CHECK(read_mtl(write_temp_file("mid.mtl", "1\t" + bom + "x\n"), {}).examples.at(0).tokens == V{bom + "x"});
}

TEST_CASE("text readers: UTF-16 text or a NUL byte is an error naming the file, not tokens with NULs inside") {
  // "1\tgood" saved as UTF-16LE with its mark, and without: a NUL beside every ASCII byte.
  const std::string utf16 = std::string("\xFF\xFE", 2) + std::string("1\0\t\0g\0o\0o\0d\0\n\0", 14);
  const std::string marked = write_temp_file("utf16.mtl", utf16);
  CHECK(testing::error_of([&] { (void)read_mtl(marked, {}); }) ==
        marked + ": UTF-16 text (its byte order mark); save the file as UTF-8");
  const std::string unmarked = write_temp_file("utf16_nomark.mtl", utf16.substr(2));
  const std::string error = testing::error_of([&] { (void)read_mtl(unmarked, {}); });
  INFO(error);
  CHECK(error.starts_with(unmarked + ":1: a NUL byte at byte 2 of the line"));
  // With skip_bad the line is skipped and counted, as any bad line.
  ReadOptions skip;
  skip.skip_bad = true;
  const Dataset d = read_mtl(write_temp_file("nul.mtl", std::string("1\tgood\n0\tb\0d\n", 13)), skip);
  CHECK(d.examples.size() == 1);
  CHECK(d.stats.skipped_bad == 1);
}

TEST_CASE("text readers: TSV with a header (any column order) and without one") {
  const std::string with = write_temp_file("h.tsv", "id\ttext\tlabel\n7\tnice day\tpos\n8\tgrim\tneg\n");
  const Dataset h = read_tsv(with, {});
  REQUIRE(h.examples.size() == 2);
  CHECK(h.examples[0].label == "pos");
  CHECK(h.examples[0].tokens == V{"nice", "day"});
  CHECK(h.examples[0].line == 2);
  CHECK(h.stats.lines == 2);  // the header is not data

  ReadOptions chn;  // ChnSentiCorp's header is "label<TAB>text_a"
  chn.text_field = "text_a";
  const std::string c = write_temp_file("c.tsv", "label\ttext_a\n1\t\xE5\xA5\xBD\n");
  const Dataset cd = read_tsv(c, chn);
  REQUIRE(cd.examples.size() == 1);
  CHECK(cd.examples[0].tokens == V{"\xE5\xA5\xBD"});
  // With the default text_field that header names only one of the two fields: a configuration error.
  check_error_at([&] { read_tsv(c, {}); }, c, 1, "text_a");

  const std::string without = write_temp_file("n.tsv", "1\tfirst row\n0\tsecond\n");
  const Dataset n = read_tsv(without, {});
  REQUIRE(n.examples.size() == 2);
  CHECK(n.examples[0].label == "1");
  CHECK(n.examples[1].tokens == V{"second"});
  const std::string bad = write_temp_file("b.tsv", "label\ttext\n1\n");
  check_error_at([&] { read_tsv(bad, {}); }, bad, 2, "column");
  // A header naming a field twice is ambiguous (the first column was taken, without a word).
  const std::string twice = write_temp_file("t.tsv", "text\ttext\tlabel\ngood\tbad\tpos\n");
  check_error_at([&] { read_tsv(twice, {}); }, twice, 1, "header names 'text' twice (columns 1 and 2)");
}

TEST_CASE("text readers: JSON lines with integer and string labels, custom keys, bad JSON") {
  const std::string p = write_temp_file("d.jsonl",
                                   "{\"label\": 1, \"text\": \"Caf\\u00e9 ok\"}\n{\"text\": \"meh\", \"label\": \"neutral\"}\n");
  const Dataset d = read_jsonl(p, {});
  REQUIRE(d.examples.size() == 2);
  CHECK(d.examples[0].label == "1");
  CHECK(d.examples[0].tokens == V{"Caf\xC3\xA9", "ok"});
  CHECK(d.examples[1].label == "neutral");

  ReadOptions keys;
  keys.label_field = "y";
  keys.text_field = "sentence";
  const std::string k = write_temp_file("k.jsonl", "{\"y\": -3, \"sentence\": \"x y\"}\n");
  CHECK(read_jsonl(k, keys).examples.at(0).label == "-3");

  const std::string bad = write_temp_file("bad.jsonl", "{\"label\": 1, \"text\": \"a\"}\n{\"label\": 1, \"text\": \"a\"\n"
                                                  "{\"label\": 1.5, \"text\": \"a\"}\n{\"label\": 1}\n[1, 2]\n");
  check_error_at([&] { read_jsonl(bad, {}); }, bad, 2, "bad JSON");
  ReadOptions skip;
  skip.skip_bad = true;
  const Dataset s = read_jsonl(bad, skip);
  CHECK(s.examples.size() == 1);
  CHECK(s.stats.skipped_bad == 4);
  for (const auto& [content, what] : std::vector<std::pair<std::string, std::string>>{
           {"{\"label\": 1.5, \"text\": \"a\"}\n", "1.5"},
           {"{\"label\": 1}\n", "'text'"},
           {"[1, 2]\n", "object"},
           {"{\"label\": 0, \"text\": \"   \"}\n", "empty text"}}) {
    const std::string q = write_temp_file("bad1.jsonl", content);
    check_error_at([&] { read_jsonl(q, {}); }, q, 1, what);
  }
}

TEST_CASE("text readers: split_last keeps order and rejects n >= size") {
  const std::string p = write_temp_file("five.txt", "0 a\n1 b\n0 c\n1 d\n0 e\n");
  auto [head, tail] = split_last(read_label_tokens(p, {}), 2);
  REQUIRE(head.examples.size() == 3);
  REQUIRE(tail.examples.size() == 2);
  CHECK(head.examples[2].tokens == V{"c"});
  CHECK(tail.examples[0].tokens == V{"d"});
  CHECK(tail.examples[1].line == 5);
  CHECK(head.stats.examples == 3);
  CHECK(tail.stats.examples == 2);
  CHECK(example_lengths(head) == std::vector<std::int64_t>{1, 1, 1});
  CHECK(testing::error_of([&] { split_last(read_label_tokens(p, {}), 5); }).find("5") != std::string::npos);
  CHECK_FALSE(testing::error_of([&] { split_last(read_label_tokens(p, {}), 0); }).empty());
}

TEST_CASE("text readers: a label outside the format's classes is an error at path:line (MTL 0/1, SST 0..4)") {
  // Before: 'x' in an MTL file or 7 in an SST tree trained silently as an extra class.
  const std::string mtl = write_temp_file("mtl_x.txt", "1\tgood\nx\tbad\n");
  check_error_at([&] { read_mtl(mtl, {}); }, mtl, 2, "'x'");
  const std::string mtl2 = write_temp_file("mtl_2.txt", "1\tgood\n0\tbad\n2\tso so\n");
  check_error_at([&] { read_mtl(mtl2, {}); }, mtl2, 3, "'2'");
  ReadOptions skip;
  skip.skip_bad = true;
  CHECK(read_mtl(mtl, skip).examples.size() == 1);
  const std::string root = write_temp_file("trees_7.txt", "(3 (2 a) (4 b))\n(7 (2 a) (4 b))\n");
  check_error_at([&] { read_sst_trees(root, {}); }, root, 2, "'7'");
  const std::string inner = write_temp_file("trees_inner.txt", "(3 (2 a) (5 b))\n");  // a label deep inside
  check_error_at([&] { read_sst_trees(inner, {}); }, inner, 1, "'5'");
  const std::string stsa = write_temp_file("stsa_7.txt", "4 fine\n7 odd\n");
  check_error_at([&] { read_label_tokens(stsa, {}); }, stsa, 2, "'7'");
}
