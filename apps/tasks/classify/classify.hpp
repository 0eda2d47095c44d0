#pragma once
// Text classification (SST, MTL-16, any TSV / JSON-lines file): sentences of token ids in, a class out;
// cross-entropy, accuracy. The vocabulary is built from the training split (tokens below min_freq are
// <unk>), the label set from the training split (a dev/test label it lacks is an error naming file:line),
// and both travel in checkpoint metadata so topo-eval can encode new files exactly as training did.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/tasks/registry.hpp"
#include "apps/tasks/task.hpp"
#include "apps/tasks/task_vectors.hpp"
#include "apps/text/dataset.hpp"
#include "apps/text/vocab.hpp"
#include "apps/text/word_vectors.hpp"

namespace topo::apps {

struct ClassifyOptions {
  std::string task = "classify";   // the --task this runs as (classify, nli): its errors name it
  std::string format;              // one of text::dataset_formats()
  std::string train, dev, test;    // paths; empty dev with dev_split > 0, empty test allowed
  std::int64_t dev_split = 0;      // > 0: dev = the last dev_split training examples
  text::ReadOptions read;          // encoding, lowercase, skip_bad, truncation (max_length), sst_binary
  bool train_subtrees = false;     // sst: every labelled subtree of a training tree is an example
  bool train_unique_subtrees = false;  // with train_subtrees: each distinct phrase once (its most frequent label)
  std::int64_t min_freq = 1;
  std::string vectors;             // optional word vectors for the embedding (GloVe / word2vec text, plain or .gz)
  text::WordVectorOptions vector_options;  // lowercase fallback, bad-line policy
  bool freeze_vectors = false;             // the loaded rows stay fixed in training
  // Which tokens the vectors bring into the vocabulary beside the training tokens seen min_freq times:
  // "train" none; "data" every token of the train, dev and test files that the vectors cover (rarer
  // training tokens and unseen ones then read their vector, not <unk>, as the tagger's vocabulary does);
  // "all" those and every other word of the vector file, so that a file scored later (topo-eval on a
  // held-back test set) reads the vectors of its words too. The words training never reads come last and
  // sit in the token table's frozen tail (Task::trained_rows): they keep their vectors, outside the optimizer.
  std::string vectors_vocabulary = "train";
  std::int64_t eval_batch = 128;   // evaluation batch (the "ms per test batch of 128")
};

// A split encoded for the model: token ids per example and class ids.
struct EncodedSplit {
  std::vector<std::vector<std::int64_t>> ids;
  std::vector<std::vector<std::int64_t>> ids2;  // sentence pairs (NLI): the second sentences; empty otherwise
  std::vector<std::int64_t> labels;
  std::int64_t size() const { return static_cast<std::int64_t>(labels.size()); }
};
// A reader's counts as JSON (result.json's "data", topo-eval's output).
nlohmann::json read_stats_json(const text::ReadStats& stats);

EncodedSplit encode_split(const text::Dataset& data, const text::Vocabulary& vocab, const text::LabelSet& labels);

class TextClassification final : public VocabularyTask {
 public:
  // Reads the files and builds the vocabulary and label set.
  explicit TextClassification(const ClassifyOptions& options);
  // Evaluation only: the vocabulary, labels and reading options of a checkpoint's metadata() and one file to
  // score as the test split (no training data is read). `options` supplies format, test path, eval_batch and
  // skip_bad; the rest comes from the metadata so the file is read as training read its files. Missing or
  // malformed metadata is an error naming `source` (the checkpoint file) and the key.
  static std::unique_ptr<TextClassification> for_evaluation(const nlohmann::json& metadata, ClassifyOptions options,
                                                            const std::string& source = "checkpoint metadata");

  const text::LabelSet& labels() const { return labels_; }
  // Sentence pairs (NLI, --format snli): a batch holds the B first sentences, then the B second ones, and the
  // model is models::PairClassifier.
  bool pairs() const { return pairs_; }
  const text::ReadStats& read_stats(Split split) const { return stats_[static_cast<int>(split)]; }

  std::int64_t max_length() const override { return options_.read.max_length; }
  std::shared_ptr<models::SequenceModel> make_model(std::shared_ptr<models::SequenceEncoder> encoder,
                                                    const models::HeadOptions& head) const override;
  std::int64_t size(Split split) const override { return split_(split).size(); }
  std::vector<std::vector<std::int64_t>> epoch_batches(std::int64_t batch, std::uint64_t seed,
                                                       std::int64_t epoch) const override;
  TaskBatch batch(Split split, const std::vector<std::int64_t>& indices) const override;
  nn::Var loss(const nn::Var& output, const Tensor& targets) const override;
  std::string metric() const override { return "acc"; }
  bool higher_is_better() const override { return true; }
  // acc, loss (mean cross-entropy), ms_per_batch (forward of a batch of eval_batch, the data already
  // built), batches, examples.
  Evaluation evaluate(models::SequenceModel& model, Split split, Device device) const override;
  // majority_acc: always predicting the training set's most frequent class.
  nlohmann::json baseline(Split split) const override;
  // {"vocabulary", "labels", "majority_label", "max_length", "read": {...}, "data": {per-split counts},
  //  "embedding_dim", and with vectors "vectors": vectors_report()}.
  nlohmann::json metadata() const override;

 private:
  TextClassification() = default;
  const EncodedSplit& split_(Split split) const { return splits_[static_cast<int>(split)]; }

  ClassifyOptions options_;
  text::LabelSet labels_;
  std::string majority_label_;
  bool pairs_ = false;
  EncodedSplit splits_[3];
  text::ReadStats stats_[3];
};

// The options text_task_options() declares (files, decoding, truncation, vocabulary, vectors) as ClassifyOptions;
// a task built on TextClassification sets its format and its own options on top.
ClassifyOptions text_classification_options(const TaskSettings& settings);
// topo-eval for the tasks built on TextClassification (classify, nli): the checkpoint's classifier scored on
// request.test (accuracy, loss, ms per batch, the majority baseline, the reader's counts) and its report.
nlohmann::json evaluate_classifier_file(const FileEvaluation& request);

}  // namespace topo::apps
