#pragma once
// Sequence labelling (NER, POS): a tag per token from the encoder's per-token states (models::TokenTagger: an
// MLP on H^T), cross-entropy over every token of the batch. Batches concatenate sentences without padding, so
// there is no pad position to mask: the loss is the mean over real tokens only.
//
// Data: text::read_tagged (conll, conllu, weibo, bmes). The model predicts tags in `scheme` (default: the
// training file's, detected); dev/test gold tags are converted to it, scored with conlleval's chunk rules
// (text::TagScorer: F1 selects the checkpoint) or, for bare tags (POS), by token accuracy. Sentences longer
// than max_length are cut into consecutive pieces for the model and their predictions joined again, so every
// token of every file is tagged and scored.
//
// Inputs: words (lowercased with `lowercase`, for uncased vectors) from a training-split vocabulary, optional
// word vectors (apps/tasks/task_vectors.hpp), and with case_feature the capitalisation class of the original
// word (text::case_class) as SequenceBatch::token_case; with char_filters, suffix_feature and bigram_feature
// the characters, ending and neighbour pairs of each token (TagOptions).
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "apps/tasks/task.hpp"
#include "apps/tasks/task_vectors.hpp"
#include "apps/text/tag_schemes.hpp"
#include "apps/text/tag_pieces.hpp"
#include "apps/text/tag_scores.hpp"
#include "apps/text/tagged.hpp"
#include "apps/text/vocab.hpp"
#include "apps/text/word_vectors.hpp"

namespace topo::apps {

struct TagOptions {
  std::string format;            // conll | conllu | weibo | bmes; empty: guessed from the training file's name
  std::string train, dev, test;  // test optional
  text::TagReadOptions read;     // encoding, skip_bad, xpos
  // The model's tag scheme: file | auto (IOB1/IOB2 chunks as BIOES) | iob1 | iob2 | bio | bioes | bmes | none (free-form)
  std::string scheme = "file";
  bool lowercase = false;        // vocabulary of lowercased words (the case feature keeps the capitalisation)
  bool case_feature = false;
  // > 0: a character CNN with this many filters reads each word's characters, its first kMaxWordCharacters
  // (training characters seen twice or more; the others share class 0); suffix_feature: an embedding of the
  // lowercased word's last three characters (those seen twice or more in training; the others share class 0).
  std::int64_t char_filters = 0;
  bool suffix_feature = false;
  // Bigram embeddings (Chinese character tagging, Zhang & Yang 2018): each token's pairs with its left and right
  // neighbours (the sentence's edges as "<s>" / "</s>"), the tokens' vocabulary forms joined without a separator,
  // those seen twice or more in training as classes (the others share <unk>). bigram_vectors: a word-vector
  // file keyed by such pairs (scripts/zh_vectors.sh's zh_bigrams.vec); every pair of any split it covers joins
  // the classes, as --vectors does for words, and its rows initialise the table (fine-tuned). Needs bigram_feature.
  bool bigram_feature = false;
  std::string bigram_vectors;
  std::int64_t min_freq = 1;
  std::int64_t max_length = 256;  // longest piece the model sees (its position table)
  // > 0: consecutive sentences of one document (conll files' -DOCSTART- marks) are packed into pieces of up to
  // this many tokens (text::plan_tag_pieces), each sentence tagged in its neighbours' context; batches then hold
  // about `batch` sentences' worth of pieces. 0: each sentence alone.
  std::int64_t document_context = 0;
  std::string vectors;
  text::WordVectorOptions vector_options;
  // With vectors, the words they bring into the vocabulary (task_vectors.hpp's vocabulary_with_vectors):
  // train | data (the train, dev and test files' words) | all (and every other word of the vector file).
  std::string vectors_vocabulary = "data";
  bool freeze_vectors = false;  // the loaded rows stay fixed in training
  std::int64_t eval_batch = 128;
  bool crf = false;  // a linear-chain CRF on the per-token scores (NLL training, Viterbi decoding, scheme constraints)
};

// The characters the CNN reads of one word. Its memory is about 600 bytes a character (a 10 MB token took
// 6.2 GiB), so a longer token (a pasted blob, a file without line breaks) is cut to its first ones; the
// longest words of the recipes' corpora stay whole (UD EWT's URLs: up to 473 code points; CoNLL-2003: 61).
inline constexpr std::size_t kMaxWordCharacters = 512;

// A split cut into model pieces (text::plan_tag_pieces): piece p's tokens are its spans' tokens in order.
struct EncodedTagSplit {
  std::vector<std::vector<std::int64_t>> ids, cases, tags;  // per piece; tags are label ids (-1: not scored)
  // Per piece, with char_filters / suffix_feature: its tokens' character classes in order, the characters per
  // token, and a suffix class per token.
  std::vector<std::vector<std::int64_t>> chars, char_counts, suffixes;
  // Per piece, with bigram_feature: two bigram classes per token, left then right ([2 * tokens]).
  std::vector<std::vector<std::int64_t>> bigrams;
  std::vector<text::Piece> spans;                            // per piece
  std::vector<std::vector<std::string>> gold;               // per sentence, in the model's scheme
  std::int64_t char_truncated_words = 0;                    // words cut to kMaxWordCharacters for the CNN
  std::int64_t size() const { return static_cast<std::int64_t>(ids.size()); }
};

class SequenceTagging final : public VocabularyTask {
 public:
  explicit SequenceTagging(const TagOptions& options);
  // Evaluation only (topo-eval): vocabulary, labels, schemes and reading options from a checkpoint's metadata();
  // options.test is scored as the test split. Missing or malformed metadata: an error naming `source` and the key.
  static std::unique_ptr<SequenceTagging> for_evaluation(const nlohmann::json& metadata, TagOptions options,
                                                         const std::string& source = "checkpoint metadata");

  const text::LabelSet& labels() const { return labels_; }
  text::TagScheme scheme() const { return scheme_; }
  const text::TaggedDataset& data(Split split) const { return data_[static_cast<int>(split)]; }

  // With document_context, a sentence's first token reads its case class + kCaseClasses (packing hides where a
  // sentence starts, where capitalisation says little).
  std::int64_t case_classes() const override {
    return options_.case_feature ? text::kCaseClasses * (options_.document_context > 0 ? 2 : 1) : 0;
  }
  std::int64_t char_classes() const override {
    return options_.char_filters > 0 ? static_cast<std::int64_t>(chars_.size()) + 1 : 0;
  }
  std::int64_t char_filters() const override { return options_.char_filters; }
  std::int64_t suffix_classes() const override {
    return options_.suffix_feature ? static_cast<std::int64_t>(suffixes_.size()) + 1 : 0;
  }
  std::int64_t bigram_classes() const override { return options_.bigram_feature ? bigrams_.size() : 0; }
  std::int64_t bigram_dim() const override { return bigram_dim_; }
  Tensor bigram_vectors() const override { return bigram_vectors_.table; }
  std::vector<std::uint8_t> bigram_vector_rows() const override { return bigram_vectors_.rows; }
  const text::Vocabulary& bigrams() const { return bigrams_; }
  std::int64_t max_length() const override { return options_.max_length; }
  std::shared_ptr<models::SequenceModel> make_model(std::shared_ptr<models::SequenceEncoder> encoder,
                                                    const models::HeadOptions& head) const override;
  std::int64_t size(Split split) const override { return split_(split).size(); }
  std::vector<std::vector<std::int64_t>> epoch_batches(std::int64_t batch, std::uint64_t seed,
                                                       std::int64_t epoch) const override;
  TaskBatch batch(Split split, const std::vector<std::int64_t>& indices) const override;
  nn::Var loss(const nn::Var& output, const Tensor& targets) const override;
  // With a CRF: its NLL over the batch's pieces (mean over pieces); else the per-token cross-entropy.
  nn::Var batch_loss(models::SequenceModel& model, const nn::Var& output, const TaskBatch& batch) const override;
  // f1 (conlleval, micro over chunk types) for chunk tags; acc (token accuracy) for bare tags (POS).
  std::string metric() const override { return scheme_ == text::TagScheme::None ? "acc" : "f1"; }
  bool higher_is_better() const override { return true; }
  // f1, precision, recall, acc, per_type (when chunked), loss, ms_per_batch, sentences, tokens.
  Evaluation evaluate(models::SequenceModel& model, Split split, Device device) const override;
  // majority_tag and its token accuracy (and F1, 0 when it is "O").
  nlohmann::json baseline(Split split) const override;
  nlohmann::json metadata() const override;
  // OUT/dev.predictions.txt and OUT/test.predictions.txt: the input lines plus the predicted tag (in the file's
  // scheme), written atomically.
  std::vector<std::string> write_outputs(models::SequenceModel& model, Device device,
                                         const std::string& out_dir) const override;

  // The tags the model predicts for a split, per sentence, in the model's scheme; also the mean loss and the
  // forward time.
  struct Predictions {
    std::vector<std::vector<std::string>> tags;
    double loss = 0.0, forward_seconds = 0.0;
    std::int64_t batches = 0;
  };
  Predictions predict(models::SequenceModel& model, Split split, Device device) const;
  // The predictions scored against the split's gold tags.
  text::TagScorer score(Split split, const std::vector<std::vector<std::string>>& predicted) const;

 private:
  SequenceTagging() = default;
  const EncodedTagSplit& split_(Split split) const { return splits_[static_cast<int>(split)]; }
  void encode_(Split split);
  void build_char_classes_();  // chars_ and suffixes_ from the training words
  void build_bigram_classes_();  // bigrams_ (and bigram_vectors_) from the training sentences
  // Token t's left and right bigram keys in a sentence (bigram_feature).
  std::pair<std::string, std::string> bigram_keys_(const std::vector<std::string>& tokens, std::size_t t) const;

  // Class k + 1 is chars_[k] (a code point) / suffixes_[k]; class 0 every other character / suffix.
  std::int64_t char_class_(char32_t c) const;
  std::int64_t suffix_class_(const std::string& word) const;

  TagOptions options_;
  text::TagFormat format_ = text::TagFormat::Conll;
  text::TagScheme file_scheme_ = text::TagScheme::IOB2, scheme_ = text::TagScheme::IOB2;
  text::LabelSet labels_;
  std::string majority_tag_;
  text::TaggedDataset data_[3];
  EncodedTagSplit splits_[3];
  std::vector<std::int64_t> chars_;     // sorted code points
  std::vector<std::string> suffixes_;  // sorted
  text::Vocabulary bigrams_;           // bigram classes (<pad> unused, <unk> the rare and unseen pairs)
  TaskVectors bigram_vectors_;         // with bigram_vectors: the table's initial rows
  // Bigram table width: the bigram vectors' (0 without: the model's hidden); kept from a checkpoint's metadata.
  std::int64_t bigram_dim_ = 0;
};

}  // namespace topo::apps
