// Readers of the tagging corpora: the real files' counts (SOURCE.txt of each data set) and hand-made files with
// every malformed case named by file and line.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "apps/text/tagged.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::text;

namespace {

std::int64_t count_type_starts(const TaggedDataset& d, const std::string& tag) {
  std::int64_t n = 0;
  for (const auto& s : d.sentences)
    for (const auto& t : s.tags) n += t == tag;
  return n;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("tagged readers: the real corpora have the counts their SOURCE.txt states") {
  SUBCASE("CoNLL-2003 original IOB1 and IOB2: same sentences and tokens") {
    const TaggedDataset a = read_tagged(TagFormat::Conll, testing::shared_data_path("conll2003/original_iob1/eng.train"));
    const TaggedDataset b = read_tagged(TagFormat::Conll, testing::shared_data_path("conll2003/iob2/train.txt"));
    CHECK(a.sentences.size() == 14041);
    CHECK(a.stats.tokens == 203621);
    CHECK(a.stats.documents == 946);
    CHECK(b.sentences.size() == 14041);
    CHECK(b.stats.tokens == 203621);
    CHECK(count_type_starts(b, "B-PER") == 6600);
    CHECK(a.sentences[0].tokens == std::vector<std::string>{"EU", "rejects", "German", "call", "to", "boycott",
                                                           "British", "lamb", "."});
    CHECK(a.sentences[0].tags[0] == "I-ORG");
    CHECK(b.sentences[0].tags[0] == "B-ORG");
    CHECK(a.sentences[0].line == 3);
  }
  SUBCASE("UD English EWT: UPOS or XPOS, multiword ranges and empty nodes skipped") {
    const std::string path = testing::shared_data_path("ud_english_ewt/en_ewt-ud-dev.conllu");
    const TaggedDataset upos = read_tagged(TagFormat::Conllu, path);
    TagReadOptions x;
    x.xpos = true;
    const TaggedDataset xpos = read_tagged(TagFormat::Conllu, path, x);
    // SOURCE.txt: dev 2001 sentences / 25147 syntactic words / 359 multiword lines / 4 empty nodes.
    CHECK(upos.sentences.size() == 2001);
    CHECK(upos.stats.tokens == 25147);
    CHECK(xpos.stats.tokens == 25147);
    CHECK(upos.sentences[0].tokens[0] == "From");
    CHECK(upos.sentences[0].tags[0] == "ADP");
    CHECK(xpos.sentences[0].tags[0] == "IN");
  }
  SUBCASE("Weibo NER: position digits stripped") {
    const TaggedDataset d = read_tagged(TagFormat::Weibo, testing::shared_data_path("weibo_ner/weiboNER_2nd_conll.train"));
    CHECK(d.sentences.size() == 1350);
    CHECK(d.stats.tokens == 73778);
    CHECK(count_type_starts(d, "B-PER.NOM") == 766);
    CHECK(d.sentences[0].tokens[0] == "科");
    // Every token is one code point, except the 12 lines SOURCE.txt names with two U+FFFD.
    std::int64_t longer = 0, pairs = 0;
    for (const auto& s : d.sentences)
      for (const auto& t : s.tokens) {
        std::int64_t points = 0;
        for (unsigned char c : t) points += (c & 0xC0) != 0x80;
        longer += points > 1;
        pairs += t == "\xEF\xBF\xBD\xEF\xBF\xBD";
      }
    CHECK(longer == 12);
    CHECK(pairs == 12);
  }
  SUBCASE("Resume NER: BMES") {
    const TaggedDataset d = read_tagged(TagFormat::Bmes, testing::shared_data_path("resume_ner/test.char.bmes"));
    CHECK(d.sentences.size() == 477);
    CHECK(d.stats.tokens == 15100);
  }
}

TEST_CASE("tagged readers: malformed lines name file and line; skip_bad drops the sentence") {
  const std::string conll = testing::write_temp_file("bad.conll", "-DOCSTART- -X- O O\n\nEU NNP I-NP I-ORG\nrejects VBZ\n\n"
                                                                   "Peter NNP I-NP I-PER\n\n");
  std::string e = testing::error_of([&] { read_tagged(TagFormat::Conll, conll); });
  CHECK(e.find(conll + ":4:") != std::string::npos);
  CHECK(e.find("2 columns, but line 3 has 4") != std::string::npos);
  TagReadOptions skip;
  skip.skip_bad = true;
  const TaggedDataset kept = read_tagged(TagFormat::Conll, conll, skip);
  CHECK(kept.sentences.size() == 1);
  CHECK(kept.sentences[0].tokens[0] == "Peter");
  CHECK(kept.stats.read.skipped_bad == 1);

  const std::string conllu = testing::write_temp_file(
      "bad.conllu", "# text = a b\n1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n1\ta\ta\tDET\tDT\t_\t0\troot\t_\t_\n"
                    "3\tb\tb\tNOUN\tNN\t_\t1\tdep\t_\t_\n\n");
  e = testing::error_of([&] { read_tagged(TagFormat::Conllu, conllu); });
  CHECK(e.find(conllu + ":4:") != std::string::npos);
  CHECK(e.find("word ID 3 follows 1 words") != std::string::npos);
  const std::string short_conllu = testing::write_temp_file("short.conllu", "1\ta\ta\tDET\n");
  CHECK(testing::error_of([&] { read_tagged(TagFormat::Conllu, short_conllu); }).find(":1: 4 tab-separated") !=
        std::string::npos);

  const std::string weibo = testing::write_temp_file("bad.weibo", "科0\tO\n技1\n");
  e = testing::error_of([&] { read_tagged(TagFormat::Weibo, weibo); });
  CHECK(e.find(weibo + ":2: no tab") != std::string::npos);
  const std::string nodigit = testing::write_temp_file("nodigit.weibo", "科\tO\n");
  CHECK(testing::error_of([&] { read_tagged(TagFormat::Weibo, nodigit); }).find(":1: character field") !=
        std::string::npos);
  const std::string bmes = testing::write_temp_file("bad.bmes", "高 B-NAME\n勇\n");
  CHECK(testing::error_of([&] { read_tagged(TagFormat::Bmes, bmes); }).find(bmes + ":2: expected 'CHAR TAG'") !=
        std::string::npos);
  CHECK(testing::error_of([] { read_tagged(TagFormat::Conll, "/nonexistent/x.conll"); }).find("/nonexistent/x.conll") !=
        std::string::npos);
  CHECK(testing::error_of([] { parse_tag_format("iob"); }).find("'iob'") != std::string::npos);
  CHECK(guess_tag_format("a/en_ewt-ud-dev.conllu") == TagFormat::Conllu);
  CHECK(guess_tag_format("a/train.char.bmes") == TagFormat::Bmes);
  CHECK(guess_tag_format("weibo_ner/weiboNER_2nd_conll.dev") == TagFormat::Weibo);
  CHECK(guess_tag_format("conll2003/iob2/test.txt") == TagFormat::Conll);
}

TEST_CASE("tagged readers: a UTF-8 byte order mark opening a file is dropped") {
  // Kept, it made CoNLL's first "-DOCSTART-" a one-word sentence and CoNLL-U's first comment a malformed line.
  const std::string bom = "\xEF\xBB\xBF";
  const std::string conll_file =
      testing::write_temp_file("bom.conll", bom + "-DOCSTART- -X- O O\n\nEU NNP I-NP I-ORG\n\n");
  const TaggedDataset conll = read_tagged(TagFormat::Conll, conll_file);
  REQUIRE(conll.sentences.size() == 1);
  CHECK(conll.sentences[0].tokens == std::vector<std::string>{"EU"});
  CHECK(conll.sentences[0].document == 0);
  const std::string conllu_file =
      testing::write_temp_file("bom.conllu", bom + "# text = a\n1\ta\ta\tDET\tDT\t_\t0\troot\t_\t_\n\n");
  const TaggedDataset conllu = read_tagged(TagFormat::Conllu, conllu_file);
  CHECK(conllu.sentences.at(0).tags == std::vector<std::string>{"DET"});
  const std::string bmes_file = testing::write_temp_file("bom.bmes", bom + "高 B-NAME\n勇 E-NAME\n");
  const TaggedDataset bmes = read_tagged(TagFormat::Bmes, bmes_file);
  CHECK(bmes.sentences.at(0).tokens == std::vector<std::string>{"高", "勇"});
}

TEST_CASE("tagged readers: Weibo's two-digit positions, digit characters and U+FFFD pairs") {
  const std::string f = testing::write_temp_file("pos.weibo", "011\tO\nK16\tB-ORG.NAM\n\xEF\xBF\xBD\xEF\xBF\xBD" "0\tO\n"
                                                              "20\tO\n\n");
  const TaggedDataset d = read_tagged(TagFormat::Weibo, f);
  REQUIRE(d.sentences.size() == 1);
  CHECK(d.sentences[0].tokens == std::vector<std::string>{"0", "K", "\xEF\xBF\xBD\xEF\xBF\xBD", "2"});
  CHECK(d.sentences[0].tags[1] == "B-ORG.NAM");
}

TEST_CASE("tagged predictions: the input's lines plus a predicted column, a blank line after each sentence") {
  const std::string f = testing::write_temp_file("pred.conll", "-DOCSTART- -X- O O\n\nEU NNP I-NP I-ORG\nsays VBZ I-VP O\n\n"
                                                              "Peter NNP I-NP I-PER\n");
  const TaggedDataset d = read_tagged(TagFormat::Conll, f);
  const std::string out = (testing::fresh_temp_dir("pred") / "out.txt").string();
  write_tagged_predictions(out, d, {{"B-ORG", "O"}, {"B-PER"}});
  CHECK(slurp(out) == "EU NNP I-NP I-ORG B-ORG\nsays VBZ I-VP O O\n\nPeter NNP I-NP I-PER B-PER\n\n");
  CHECK(testing::error_of([&] { write_tagged_predictions(out, d, {{"O"}, {"O"}}); }).find("1 tags for 2 tokens") !=
        std::string::npos);
}

TEST_CASE("tagged readers: CoNLL columns separated by tabs read as spaced ones; predictions keep the separator") {
  // Many exports of CoNLL-2003 use tabs; they stopped at their first line ("1 column"). Tabs or spaces, one per file.
  const std::string tabs = testing::write_temp_file(
      "tabs.conll", "-DOCSTART-\t-X-\t-X-\tO\n\nEU\tNNP\tI-NP\tI-ORG\nsays\tVBZ\tI-VP\tO\n\nPeter\tNNP\tI-NP\tI-PER\n");
  const TaggedDataset d = read_tagged(TagFormat::Conll, tabs);
  REQUIRE(d.sentences.size() == 2);
  CHECK(d.sentences[0].tokens == std::vector<std::string>{"EU", "says"});
  CHECK(d.sentences[0].tags == std::vector<std::string>{"I-ORG", "O"});
  CHECK(d.stats.documents == 1);
  const std::string out = (testing::fresh_temp_dir("pred_tabs") / "out.txt").string();
  write_tagged_predictions(out, d, {{"B-ORG", "O"}, {"B-PER"}});
  CHECK(slurp(out) == "EU\tNNP\tI-NP\tI-ORG\tB-ORG\nsays\tVBZ\tI-VP\tO\tO\n\nPeter\tNNP\tI-NP\tI-PER\tB-PER\n\n");

  // One separator per file: a line of the other kind is an error naming it and the line that set the separator.
  const std::string mixed = testing::write_temp_file("mixed.conll", "EU NNP I-ORG\nsays\tVBZ\tO\n");
  CHECK(testing::error_of([&] { read_tagged(TagFormat::Conll, mixed); })
            .find(mixed + ":2: a tab in a file of space-separated columns (line 1 has no tab)") != std::string::npos);
  const std::string spaced = testing::write_temp_file("spaced.conll", "EU\tNNP\tI-ORG\nsays VBZ O\n");
  CHECK(testing::error_of([&] { read_tagged(TagFormat::Conll, spaced); })
            .find(spaced + ":2: 1 column; expected 'token ... tag' (>= 2 tab-separated)") != std::string::npos);
  const std::string doubled = testing::write_temp_file("doubled.conll", "EU\t\tI-ORG\n");
  CHECK(testing::error_of([&] { read_tagged(TagFormat::Conll, doubled); })
            .find(":1: empty column (two tabs in a row?)") != std::string::npos);
}
