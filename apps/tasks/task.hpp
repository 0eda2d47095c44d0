#pragma once
// What topo-train trains on: a Task owns its data splits, builds the model's output stage, and defines the
// loss and the dev/test metric. The trainer drives every task the same way (batches, steps, evaluations,
// checkpoints); a task is a folder under apps/tasks/ with a registration (apps/tasks/registry.hpp).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/tensor.hpp"
#include "models/heads.hpp"
#include "models/model.hpp"

namespace topo::apps {

enum class Split { Train, Dev, Test };
std::string split_name(Split split);

// One batch: inputs (sentences concatenated, no padding) and the targets the loss compares with.
struct TaskBatch {
  models::SequenceBatch inputs;
  Tensor targets;  // regression: float32 [B, out]; classification: int64 [B]
  // What a per-sequence loss averages over when it is not inputs' sequences (0: those): a tagger's packed
  // pieces (document context) hold several sentences' spans, and its CRF loss stays a mean per span.
  std::int64_t loss_items = 0;
  TaskBatch to(Device device) const { return {inputs.to(device), targets.to(device), loss_items}; }
};

// One evaluation of a split: `metric` selects the best model (its direction is the task's), `values` holds
// every figure measured (written to metrics.jsonl and result.json under these names).
struct Evaluation {
  double metric = 0.0;
  nlohmann::json values = nlohmann::json::object();
};

class Task {
 public:
  virtual ~Task() = default;

  // Model input: token ids from a vocabulary of vocab_size(), or input_dim() features (one is > 0).
  virtual std::int64_t vocab_size() const { return 0; }
  virtual std::int64_t input_dim() const { return 0; }
  // Pre-trained token vectors float32 [vocab_size, dim] to initialise the embedding (undefined: none), the
  // rows that hold vectors ([vocab_size], 1 = covered; empty: all rows), and the token table's width
  // (0: the model's hidden; else the vectors' width, projected to hidden). embedding_dim() stays set when a
  // task is rebuilt for evaluation without its vectors, so the model has the checkpoint's shapes.
  virtual Tensor pretrained_embedding() const { return {}; }
  // The token string of every id ([vocab_size()]) for text tasks: models that read the text (lexicon
  // matching) get it through EncoderSpec::vocabulary. Empty for feature tasks.
  virtual std::vector<std::string> token_strings() const { return {}; }
  virtual std::vector<std::uint8_t> pretrained_rows() const { return {}; }
  virtual std::int64_t embedding_dim() const { return 0; }
  // In (0, vocab_size()): ids from here on never occur in training (vocabulary words only the vectors or the
  // dev and test files have): the model keeps their rows outside the optimizer. 0: every row may train.
  virtual std::int64_t trained_rows() const { return 0; }
  // The pre-trained rows stay fixed in training (--freeze-vectors).
  virtual bool freeze_pretrained() const { return false; }
  // > 0: the encoder's last layer emits this many features per node, which the task's model reads directly
  // (node classification: the class scores; EncoderSpec::output_dim). 0: the encoder's hidden size.
  virtual std::int64_t encoder_output_dim() const { return 0; }
  // > 0: batches carry SequenceBatch::token_case ids below this (the tagging task's capitalisation classes).
  virtual std::int64_t case_classes() const { return 0; }
  // > 0: batches carry each token's characters (SequenceBatch::token_chars, classes below char_classes) for a
  // character CNN of char_filters filters, and / or a suffix class per token below suffix_classes (tagging).
  virtual std::int64_t char_classes() const { return 0; }
  virtual std::int64_t char_filters() const { return 0; }
  virtual std::int64_t suffix_classes() const { return 0; }
  // > 0: batches carry two bigram classes per token (SequenceBatch::token_bigrams) below this, embedded at
  // width bigram_dim() (0: the model's hidden), from bigram_vectors() [bigram_classes, bigram_dim] where
  // defined (its covered rows: bigram_vector_rows(), empty: all).
  virtual std::int64_t bigram_classes() const { return 0; }
  virtual std::int64_t bigram_dim() const { return 0; }
  virtual Tensor bigram_vectors() const { return {}; }
  virtual std::vector<std::uint8_t> bigram_vector_rows() const { return {}; }
  // The longest sequence a model must accept (size of the learned position table).
  virtual std::int64_t max_length() const = 0;
  // The encoder plus this task's output stage.
  virtual std::shared_ptr<models::SequenceModel> make_model(std::shared_ptr<models::SequenceEncoder> encoder,
                                                            const models::HeadOptions& head) const = 0;

  // Examples in a split; 0 when the task has none (MTL-16 ships no test file).
  virtual std::int64_t size(Split split) const = 0;
  // One epoch's training batches (example indices), a pure function of (batch, seed, epoch).
  virtual std::vector<std::vector<std::int64_t>> epoch_batches(std::int64_t batch, std::uint64_t seed,
                                                               std::int64_t epoch) const;
  virtual TaskBatch batch(Split split, const std::vector<std::int64_t>& indices) const = 0;
  // Mean loss of a batch's model output against its targets.
  virtual nn::Var loss(const nn::Var& output, const Tensor& targets) const = 0;
  // The training loss of one batch: loss(output, targets) unless the task's loss needs the model's own
  // parameters or the batch's shape (tagging with a CRF: transitions, sentence lengths). The trainer calls this.
  virtual nn::Var batch_loss(models::SequenceModel& /*model*/, const nn::Var& output, const TaskBatch& batch) const {
    return loss(output, batch.targets);
  }

  // Dev/test metric: its name in result files ("mse", "acc") and whether larger is better.
  virtual std::string metric() const = 0;
  virtual bool higher_is_better() const = 0;
  // Evaluates `model` (put in eval mode for the call) on a whole split.
  virtual Evaluation evaluate(models::SequenceModel& model, Split split, Device device) const = 0;
  // The trivial predictor's figures on a split (masked-sum: always k/2; classification: majority class).
  virtual nlohmann::json baseline(Split split) const = 0;
  // Called once before the first training step: a topo::Error saying how much memory a step of `model` on
  // `device` needs, how much there is and which flag lowers it, when it would not fit (node-classify's
  // full-graph steps). The default checks nothing.
  virtual void check_step_memory(const models::SequenceModel& /*model*/, Device /*device*/) const {}
  // What a checkpoint must carry to rebuild the task's inputs later (vocabulary, label names).
  virtual nlohmann::json metadata() const { return nlohmann::json::object(); }
  // Files the task writes into the run directory after the best parameters were tested (tagging: the dev and
  // test files with a predicted column); returns their paths.
  virtual std::vector<std::string> write_outputs(models::SequenceModel& /*model*/, Device /*device*/,
                                                 const std::string& /*out_dir*/) const {
    return {};
  }
};

// Examples [0, size) in training order: a Fisher-Yates permutation keyed by (seed, epoch).
std::vector<std::int64_t> epoch_order(std::int64_t size, std::uint64_t seed, std::int64_t epoch);

}  // namespace topo::apps
