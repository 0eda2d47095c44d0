#pragma once
// Pre-trained word vectors for a text task's vocabulary (classify, tag): loaded once through
// text::load_word_vectors, turned into the embedding's initial table, and reported (coverage of the training
// split, bad lines, load time) in the log, result.json and the checkpoint metadata.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/tasks/task.hpp"
#include "apps/text/vocab.hpp"
#include "apps/text/word_vectors.hpp"
#include "kernels/tensor.hpp"

namespace topo::apps {

struct TaskVectors {
  Tensor table;                     // float32 [vocab.size(), dim]; rows without a vector are 0
  std::vector<std::uint8_t> rows;   // [vocab.size()]: 1 = the row holds a vector
  std::int64_t dim = 0;
  nlohmann::json report;            // file, dim, vectors, found_lowercase, duplicates, bad lines, train_coverage
};

// `train_ids`: the training split's encoded sentences (for the token coverage). A file that covers none of
// the vocabulary is a topo::Error (the wrong file, or a cased look-up of uncased vectors).
TaskVectors load_task_vectors(const std::string& path, const text::WordVectorOptions& options,
                              const text::Vocabulary& vocab, const std::vector<std::vector<std::int64_t>>& train_ids);
// The same from `loaded`, what text::load_word_vectors(path, vocab, options) returned (no second read).
TaskVectors task_vectors(const text::WordVectors& loaded, const std::string& path,
                         const text::WordVectorOptions& options, const text::Vocabulary& vocab,
                         const std::vector<std::vector<std::int64_t>>& train_ids);

// `vocab` extended by the `candidates` (in order) that the vector file covers: a token unseen in training (or
// seen too rarely) still gets its pre-trained vector instead of <unk>. The file is read once, for vocab and the
// candidates together; `vectors` are its rows for the extended vocabulary, `added` how many tokens joined.
struct ExtendedVocabulary {
  text::Vocabulary vocab;
  std::int64_t added = 0;
  text::WordVectors vectors;
};
ExtendedVocabulary extended_by_vectors(const text::Vocabulary& vocab, const std::vector<std::string>& candidates,
                                       const std::string& path, const text::WordVectorOptions& options);

// --vectors-vocabulary (classify, tag): the words a vector file brings into `vocab` (the training tokens seen
// min_freq times): "data" the `candidates` it covers (the tokens of the task's train, dev and test files, their
// text only, in order), "all" those and then every other word of the file, so that a held-back file scored later
// with topo-eval reads its words' vectors too (the file is read twice: its word list, then the vectors). "train"
// brings none and reads no file here (the task loads the vectors for its own vocabulary).
ExtendedVocabulary vocabulary_with_vectors(const text::Vocabulary& vocab, std::vector<std::string> candidates,
                                           const std::string& which, const std::string& path,
                                           const text::WordVectorOptions& options);

// The token table's trained rows (nn::Embedding's trained_rows): the largest id the training sentences read
// + 1 (at least <unk>'s), so the rows past it (words only dev, test or the vector file have) sit in a frozen
// tail outside the optimizer; 0 (one table) when training reads up to the last row.
std::int64_t trained_rows_of(std::int64_t vocab_size,
                             const std::vector<const std::vector<std::vector<std::int64_t>>*>& training_sentences);

// The token side the text tasks (classify, tag) share: a vocabulary of token ids and, with --vectors, the
// pre-trained rows for it, as the Task interface hands them to the encoder.
class VocabularyTask : public Task {
 public:
  const text::Vocabulary& vocabulary() const { return vocab_; }
  // With --vectors: load_task_vectors' report; null without vectors. Also in metadata()["vectors"].
  const nlohmann::json& vectors_report() const { return vectors_.report; }

  std::int64_t vocab_size() const override { return vocab_.size(); }
  Tensor pretrained_embedding() const override { return vectors_.table; }
  std::vector<std::string> token_strings() const override { return vocab_.tokens(); }
  std::vector<std::uint8_t> pretrained_rows() const override { return vectors_.rows; }
  std::int64_t embedding_dim() const override { return embedding_dim_; }
  std::int64_t trained_rows() const override { return trained_rows_; }
  bool freeze_pretrained() const override { return freeze_; }

 protected:
  // Vectors for vocab_ (which must be final); the embedding table takes their width; `freeze`: they stay fixed.
  void load_vectors(const std::string& path, const text::WordVectorOptions& options,
                    const std::vector<std::vector<std::int64_t>>& train_ids, bool freeze) {
    use_vectors(load_task_vectors(path, options, vocab_, train_ids), freeze);
  }
  void use_vectors(TaskVectors vectors, bool freeze) {
    vectors_ = std::move(vectors);
    embedding_dim_ = vectors_.dim;
    freeze_ = freeze;
  }

  text::Vocabulary vocab_;
  TaskVectors vectors_;
  // Token table width: the vectors' (0 without: the model's hidden); kept from a checkpoint's metadata when a
  // task is rebuilt for evaluation without its vectors, so the model has the checkpoint's shapes.
  std::int64_t embedding_dim_ = 0;
  // See Task::trained_rows; kept from a checkpoint's metadata for evaluation, as embedding_dim_.
  std::int64_t trained_rows_ = 0;
  bool freeze_ = false;
};

}  // namespace topo::apps
