// The tagging scorer (conlleval's rules), the tag schemes and their conversions, on hand-made sentences whose
// expected counts are derived in the comments, and on the real CoNLL-2003 test file.
#include <doctest/doctest.h>

#include "apps/text/tag_schemes.hpp"
#include "apps/text/tag_scores.hpp"
#include "apps/text/tagged.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::text;
using Tags = std::vector<std::string>;

namespace {

std::vector<Chunk> chunks(const Tags& tags, TagScheme scheme) { return tags_to_chunks(tags, scheme); }

}  // namespace

TEST_CASE("tag schemes: conlleval's chunk rules on IOB1 and IOB2") {
  // I-X after O starts a chunk (IOB1's usual start); I-X after I-X of the same type continues it.
  CHECK(chunks({"I-PER", "I-PER", "O", "I-LOC"}, TagScheme::IOB1) ==
        std::vector<Chunk>{{0, 2, "PER"}, {3, 4, "LOC"}});
  // B-X after I-X of the same type: the first chunk ends, a new one starts (IOB1 adjacency).
  CHECK(chunks({"I-PER", "B-PER", "I-PER"}, TagScheme::IOB1) == std::vector<Chunk>{{0, 1, "PER"}, {1, 3, "PER"}});
  // B-X after I-Y: a type change ends the I-Y chunk, B starts X.
  CHECK(chunks({"B-ORG", "I-ORG", "B-PER"}, TagScheme::IOB2) == std::vector<Chunk>{{0, 2, "ORG"}, {2, 3, "PER"}});
  // I-X after I-Y: the type change alone ends Y and starts X (no B needed).
  CHECK(chunks({"I-ORG", "I-PER"}, TagScheme::IOB2) == std::vector<Chunk>{{0, 1, "ORG"}, {1, 2, "PER"}});
  // A chunk running to the end of the sentence is closed by the boundary.
  CHECK(chunks({"O", "B-MISC", "I-MISC"}, TagScheme::IOB2) == std::vector<Chunk>{{1, 3, "MISC"}});
  // POS tags have no chunks.
  CHECK(chunks({"NN", "VBZ"}, TagScheme::None).empty());
}

TEST_CASE("tag schemes: IOB1 <-> IOB2 <-> BIOES <-> BMES round trips; detection; capitalisation classes") {
  // "EU rejects German call ..." with two adjacent PER chunks to exercise IOB1's B-.
  const Tags iob1 = {"I-ORG", "O", "I-MISC", "O", "I-PER", "I-PER", "B-PER", "O", "I-LOC"};
  const Tags iob2 = {"B-ORG", "O", "B-MISC", "O", "B-PER", "I-PER", "B-PER", "O", "B-LOC"};
  const Tags bioes = {"S-ORG", "O", "S-MISC", "O", "B-PER", "E-PER", "S-PER", "O", "S-LOC"};
  const Tags bmes3 = {"B-ORG", "M-ORG", "E-ORG", "O", "S-LOC"};
  CHECK(convert_tags(iob1, TagScheme::IOB1, TagScheme::IOB2) == iob2);
  CHECK(convert_tags(iob2, TagScheme::IOB2, TagScheme::IOB1) == iob1);
  CHECK(convert_tags(iob2, TagScheme::IOB2, TagScheme::BIOES) == bioes);
  CHECK(convert_tags(bioes, TagScheme::BIOES, TagScheme::IOB1) == iob1);
  CHECK(convert_tags(bmes3, TagScheme::BMES, TagScheme::IOB2) == Tags{"B-ORG", "I-ORG", "I-ORG", "O", "B-LOC"});
  CHECK(convert_tags(convert_tags(bmes3, TagScheme::BMES, TagScheme::BIOES), TagScheme::BIOES, TagScheme::BMES) ==
        bmes3);
  CHECK(detect_tag_scheme({iob1}) == TagScheme::IOB1);
  CHECK(detect_tag_scheme({iob2}) == TagScheme::IOB2);
  CHECK(detect_tag_scheme({bioes}) == TagScheme::BIOES);
  CHECK(detect_tag_scheme({bmes3}) == TagScheme::BMES);
  CHECK(detect_tag_scheme({{"NN", "O"}}) == TagScheme::None);
  // BIO with an "O I-X" slip (Weibo's training file has ten): B- after O says IOB2; the slip reads as a start.
  const Tags slipped = {"B-PER", "I-PER", "O", "I-LOC", "I-LOC", "O", "B-ORG"};
  CHECK(detect_tag_scheme({iob2, slipped}) == TagScheme::IOB2);
  CHECK(convert_tags(slipped, TagScheme::IOB2, TagScheme::IOB2) == Tags{"B-PER", "I-PER", "O", "B-LOC", "I-LOC", "O", "B-ORG"});
  CHECK(convert_tags(iob2, TagScheme::IOB2, TagScheme::IOB2) == iob2);
  CHECK(convert_tags(iob1, TagScheme::IOB1, TagScheme::IOB1) == iob1);
  CHECK(convert_tags(bioes, TagScheme::BIOES, TagScheme::BIOES) == bioes);
  CHECK(convert_tags({"NN", "VB"}, TagScheme::None, TagScheme::None) == Tags{"NN", "VB"});
  CHECK(parse_tag_scheme("bio") == TagScheme::IOB2);
  CHECK(testing::error_of([] { parse_tag_scheme("iob3"); }).find("iob3") != std::string::npos);
  CHECK(case_class("reuters") == 0);
  CHECK(case_class(",") == 0);
  CHECK(case_class("Reuters") == 1);
  CHECK(case_class("I") == 1);
  CHECK(case_class("EU") == 2);
  CHECK(case_class("McDonald") == 3);
  CHECK(case_class("iPhone") == 3);
  CHECK(case_class("1996-08-22") == 4);
  CHECK(case_class("F-16") == 4);
}

TEST_CASE("tag schemes: the transitions a CRF may take") {
  CHECK_FALSE(allowed_transition("O", "I-PER", TagScheme::IOB2));
  CHECK_FALSE(allowed_transition("B-LOC", "I-PER", TagScheme::IOB2));
  CHECK(allowed_transition("B-PER", "I-PER", TagScheme::IOB2));
  CHECK(allowed_transition("I-PER", "B-PER", TagScheme::IOB2));
  CHECK(allowed_transition("O", "I-PER", TagScheme::IOB1));
  CHECK_FALSE(allowed_transition("O", "B-PER", TagScheme::IOB1));  // B-X only right after an X chunk
  CHECK(allowed_transition("I-PER", "B-PER", TagScheme::IOB1));
  CHECK_FALSE(allowed_transition("I-LOC", "B-PER", TagScheme::IOB1));
  CHECK(allowed_transition("B-ORG", "M-ORG", TagScheme::BMES));
  CHECK(allowed_transition("M-ORG", "E-ORG", TagScheme::BMES));
  CHECK_FALSE(allowed_transition("B-ORG", "O", TagScheme::BMES));
  CHECK_FALSE(allowed_transition("B-ORG", "E-LOC", TagScheme::BMES));
  CHECK_FALSE(allowed_transition("E-ORG", "E-ORG", TagScheme::BIOES));
  CHECK(allowed_transition("S-ORG", "B-LOC", TagScheme::BIOES));
  CHECK(allowed_transition("NN", "VB", TagScheme::None));
}

TEST_CASE("tag scorer: counts on hand-made sentences follow conlleval") {
  SUBCASE("IOB2: one exact hit, one wrong end, one wrong type, one missed, one spurious") {
    TagScorer s(TagScheme::IOB2);
    // gold chunks: PER[0,2) LOC[3,4) ORG[5,7) MISC[8,9)             -> 4 gold
    // guess chunks: PER[0,2) LOC[3,5)... see below
    s.add({"B-PER", "I-PER", "O", "B-LOC", "O", "B-ORG", "I-ORG", "O", "B-MISC", "O"},
          {"B-PER", "I-PER", "O", "B-LOC", "I-LOC", "B-LOC", "I-LOC", "O", "O", "B-PER"});
    // guessed: PER[0,2) (exact: correct), LOC[3,5) (gold LOC ends at 4: wrong end), LOC[5,7) (gold is ORG:
    // wrong type), PER[9,10) (spurious)                            -> 4 guessed, 1 correct
    // gold MISC[8,9) is missed.
    CHECK(s.overall().gold == 4);
    CHECK(s.overall().guessed == 4);
    CHECK(s.overall().correct == 1);
    CHECK(s.overall().precision() == doctest::Approx(0.25));
    CHECK(s.overall().recall() == doctest::Approx(0.25));
    CHECK(s.overall().f1() == doctest::Approx(0.25));
    CHECK(s.per_type().at("PER").correct == 1);
    CHECK(s.per_type().at("PER").guessed == 2);  // [0,2) and the spurious [9,10)
    CHECK(s.per_type().at("PER").gold == 1);
    CHECK(s.per_type().at("LOC").guessed == 2);
    CHECK(s.per_type().at("LOC").correct == 0);
    CHECK(s.per_type().at("ORG").gold == 1);
    CHECK(s.per_type().at("MISC").gold == 1);
    CHECK(s.per_type().at("MISC").guessed == 0);
    // tokens: 10; equal tags at 0,1,2,3,7 -> 5 of 10.
    CHECK(s.accuracy() == doctest::Approx(0.5));
  }
  SUBCASE("IOB1 gold against IOB2 guesses: the same chunks count as correct") {
    TagScorer s(TagScheme::IOB1);
    // gold (IOB1) PER[0,2) PER[2,3) LOC[4,5); guesses the same chunks in IOB2 spelling -> 3/3 correct,
    // though only tokens 1 (I-PER), 2 (B-PER) and 3 (O) have equal tags: accuracy 3/5.
    s.add({"I-PER", "I-PER", "B-PER", "O", "I-LOC"}, {"B-PER", "I-PER", "B-PER", "O", "B-LOC"});
    CHECK(s.overall().gold == 3);
    CHECK(s.overall().guessed == 3);
    CHECK(s.overall().correct == 3);
    CHECK(s.overall().f1() == doctest::Approx(1.0));
    CHECK(s.accuracy() == doctest::Approx(0.6));
  }
  SUBCASE("a guess that merges two adjacent gold chunks is neither") {
    TagScorer s(TagScheme::IOB2);
    // gold PER[0,1) PER[1,2); guess I-PER I-PER: O->I starts one chunk PER[0,2) -> gold 2, guessed 1,
    // correct 0 (the guess does not end where gold's first chunk ends).
    s.add({"B-PER", "B-PER"}, {"I-PER", "I-PER"});
    CHECK(s.overall().gold == 2);
    CHECK(s.overall().guessed == 1);
    CHECK(s.overall().correct == 0);
    CHECK(s.overall().f1() == 0.0);
  }
  SUBCASE("BMES: adjacent single-character chunks stay two (conlleval alone would merge S-X S-X)") {
    TagScorer s(TagScheme::BMES);
    // gold NAME[0,1) NAME[1,2) ORG[2,5); guess NAME[0,2) ORG[2,5) -> gold 3, guessed 2, correct 1 (ORG).
    s.add({"S-NAME", "S-NAME", "B-ORG", "M-ORG", "E-ORG"}, {"B-NAME", "E-NAME", "B-ORG", "M-ORG", "E-ORG"});
    CHECK(s.overall().gold == 3);
    CHECK(s.overall().guessed == 2);
    CHECK(s.overall().correct == 1);
    CHECK(s.overall().precision() == doctest::Approx(0.5));
    CHECK(s.overall().recall() == doctest::Approx(1.0 / 3.0));
  }
  SUBCASE("mismatched lengths are an error") {
    TagScorer s;
    CHECK(testing::error_of([&] { s.add({"O"}, {"O", "O"}); }).find("1 gold tags but 2") != std::string::npos);
  }
}

TEST_CASE("tag scorer on the CoNLL-2003 test file: gold vs gold is 100, gold vs all-O is 0") {
  for (const char* file : {"conll2003/iob2/test.txt", "conll2003/original_iob1/eng.testb"}) {
    const TaggedDataset test = read_tagged(TagFormat::Conll, testing::shared_data_path(file));
    // SOURCE.txt: 3453 sentences, 46435 tokens, 231 documents; 1617 PER + 1668 LOC + 1661 ORG + 702 MISC.
    CHECK(test.sentences.size() == 3453);
    CHECK(test.stats.tokens == 46435);
    CHECK(test.stats.documents == 231);
    std::vector<std::vector<std::string>> tags;
    for (const auto& s : test.sentences) tags.push_back(s.tags);
    const TagScheme scheme = detect_tag_scheme(tags);
    CHECK(scheme == (std::string(file).find("iob1") != std::string::npos ? TagScheme::IOB1 : TagScheme::IOB2));
    TagScorer self(scheme), none(scheme);
    for (const auto& s : test.sentences) {
      self.add(s.tags, s.tags);
      none.add(s.tags, std::vector<std::string>(s.tags.size(), "O"));
    }
    CHECK(self.overall().gold == 1617 + 1668 + 1661 + 702);
    CHECK(self.per_type().at("PER").gold == 1617);
    CHECK(self.per_type().at("MISC").gold == 702);
    CHECK(self.overall().f1() == 1.0);
    CHECK(self.accuracy() == 1.0);
    CHECK(none.overall().f1() == 0.0);
    CHECK(none.overall().guessed == 0);
    CHECK(none.overall().gold == 5648);
  }
}
