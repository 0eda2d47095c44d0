// Document context for the tagger: text::plan_tag_pieces packs consecutive sentences of one -DOCSTART-
// document into pieces (every token in exactly one span), the conll reader numbers the documents, and the task
// encodes, batches, scores and restores (topo-eval's metadata) packed pieces with the CRF loss a mean per span
// and each sentence's first token marked in its case class.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "apps/tasks/tag/tag.hpp"
#include "apps/train/model_factory.hpp"
#include "apps/text/tag_pieces.hpp"
#include "apps/text/tagged.hpp"
#include "tests/apps/train_args.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::apps;
namespace fs = std::filesystem;

namespace {

// Every token of every sentence in exactly one span, spans in file order.
void check_covers(const std::vector<text::Piece>& pieces, const std::vector<std::int64_t>& lengths) {
  std::int64_t sentence = 0, next = 0;
  for (const text::Piece& piece : pieces) {
    REQUIRE(!piece.empty());
    for (const text::PieceSpan& span : piece) {
      if (span.sentence != sentence) {
        CHECK(next == lengths[static_cast<std::size_t>(sentence)]);
        CHECK(span.sentence == sentence + 1);
        sentence = span.sentence;
        next = 0;
      }
      CHECK(span.offset == next);
      CHECK(span.size > 0);
      next += span.size;
    }
  }
  CHECK(sentence + 1 == static_cast<std::int64_t>(lengths.size()));
  CHECK(next == lengths.back());
}

std::vector<std::vector<std::int64_t>> sentences_of(const std::vector<text::Piece>& pieces) {
  std::vector<std::vector<std::int64_t>> out;
  for (const text::Piece& piece : pieces) {
    std::vector<std::int64_t>& s = out.emplace_back();
    for (const text::PieceSpan& span : piece) s.push_back(span.sentence);
  }
  return out;
}

}  // namespace

TEST_CASE("tag pieces: sentences of one document packed up to the limit; others alone, long ones cut") {
  // Sentences 0-1 before any mark (-1), 2-5 in document 0, 6-7 in document 1.
  const std::vector<std::int64_t> lengths = {3, 2, 4, 5, 2, 9, 1, 1};
  const std::vector<std::int64_t> documents = {-1, -1, 0, 0, 0, 0, 1, 1};
  SUBCASE("no context: each sentence alone, cut at max_length") {
    const auto pieces = text::plan_tag_pieces(lengths, documents, 4, 0);
    check_covers(pieces, lengths);
    CHECK(sentences_of(pieces) ==
          std::vector<std::vector<std::int64_t>>{{0}, {1}, {2}, {3}, {3}, {4}, {5}, {5}, {5}, {6}, {7}});
    CHECK(pieces[4][0].offset == 4);
    CHECK(pieces[8][0].size == 1);  // 9 tokens: 4 + 4 + 1
  }
  SUBCASE("context 8: packed greedily inside a document, never across one") {
    const auto pieces = text::plan_tag_pieces(lengths, documents, 16, 8);
    check_covers(pieces, lengths);
    // 4 + 5 > 8 closes a piece; 9 > 8 stands alone, uncut (max_length 16); documents never mix.
    CHECK(sentences_of(pieces) == std::vector<std::vector<std::int64_t>>{{0}, {1}, {2}, {3, 4}, {5}, {6, 7}});
  }
  SUBCASE("the limit is the smaller of the context and max_length") {
    const auto pieces = text::plan_tag_pieces(lengths, documents, 6, 100);
    check_covers(pieces, lengths);
    CHECK(sentences_of(pieces) == std::vector<std::vector<std::int64_t>>{{0}, {1}, {2}, {3}, {4}, {5}, {5}, {6, 7}});
  }
  CHECK(testing::error_of([&] { text::plan_tag_pieces({2, 0}, {0, 0}, 4, 0); }).find("sentence 1 has 0") !=
        std::string::npos);
  CHECK(testing::error_of([&] { text::plan_tag_pieces({2}, {0, 0}, 4, 0); }).find("2 document ids for 1") !=
        std::string::npos);
}

TEST_CASE("tag: document context packs a conll file's documents; spans score as sentences; CRF loss per span") {
  const fs::path dir = testing::fresh_temp_dir("tag_document_context");
  std::ofstream f(dir / "t.conll");
  // A sentence before any -DOCSTART- (alone), then document 0 with three sentences, document 1 with one.
  f << "Hello UH O\n\n"
       "-DOCSTART- -X- O\n\n"
       "EU NNP B-ORG\nrejects VBZ O\n\nGerman JJ B-MISC\ncall NN O\n\nPeter NNP B-PER\nBlackburn NNP I-PER\n\n"
       "-DOCSTART- -X- O\n\n"
       "UK NNP B-LOC\nsaid VBD O\n\n";
  f.close();
  const std::string path = (dir / "t.conll").string();
  const text::TaggedDataset d = text::read_tagged(text::TagFormat::Conll, path);
  REQUIRE(d.sentences.size() == 5);
  std::vector<std::int64_t> documents;
  for (const auto& s : d.sentences) documents.push_back(s.document);
  CHECK(documents == std::vector<std::int64_t>{-1, 0, 0, 0, 1});

  TagOptions o;
  o.train = o.dev = path;
  o.crf = true;
  o.case_feature = true;
  o.document_context = 5;  // document 0's 2 + 2 tokens fit, its third sentence starts the next piece
  SequenceTagging task(o);
  CHECK(task.size(Split::Dev) == 4);  // {Hello}, {EU.., German..}, {Peter..}, {UK..}
  CHECK(task.metadata().at("data").at("dev").at("pieces") == 4);
  CHECK(task.metadata().at("data").at("dev").at("documents") == 2);
  const TaskBatch b = task.batch(Split::Dev, {0, 1, 2, 3});
  CHECK(b.inputs.lengths == std::vector<std::int64_t>{1, 4, 2, 2});
  CHECK(b.loss_items == 5);
  // A sentence's first token reads its case class + 5 (lower 0, Upper 1, ALLCAPS 2): packing hides the start.
  CHECK(task.case_classes() == 10);
  CHECK(b.inputs.token_case.to_vector<std::int64_t>() == std::vector<std::int64_t>{6, 7, 0, 6, 0, 6, 1, 7, 0});
  // `batch` counts sentences: 5 sentences in 4 pieces, so a batch of 5 sentences takes 4 pieces.
  CHECK(task.epoch_batches(5, 1, 0).size() == 1);
  CHECK(task.epoch_batches(2, 1, 0).size() == 2);

  TrainConfig c = testing::tiny_star_tagger_config();
  auto model = make_task_model(c, task);
  model->reset_parameters(3);
  const nn::Var out = model->forward(b.inputs);
  const auto* tagger = dynamic_cast<const models::TokenTagger*>(model.get());
  REQUIRE(tagger != nullptr);
  const float mean_per_piece = tagger->crf()->nll(out, b.inputs.lengths, b.targets).item();
  CHECK(task.batch_loss(*model, out, b).item() == doctest::Approx(mean_per_piece * 4.f / 5.f).epsilon(1e-6));

  // Predictions come back per sentence; gold against itself scores 1.
  const auto p = task.predict(*model, Split::Dev, Device::cpu());
  REQUIRE(p.tags.size() == 5);
  for (std::size_t s = 0; s < 5; ++s) CHECK(p.tags[s].size() == d.sentences[s].tags.size());
  std::vector<std::vector<std::string>> gold;
  for (const auto& s : d.sentences) gold.push_back(s.tags);
  CHECK(task.score(Split::Dev, gold).overall().f1() == 1.0);

  // topo-eval rebuilds the same pieces from the checkpoint's metadata.
  TagOptions e;
  e.test = path;
  const auto restored = SequenceTagging::for_evaluation(task.metadata(), e);
  CHECK(restored->size(Split::Test) == 4);
  CHECK(restored->predict(*model, Split::Test, Device::cpu()).tags == p.tags);
  fs::remove_all(dir);
}
