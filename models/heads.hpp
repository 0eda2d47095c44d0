#pragma once
// Task models: any SequenceEncoder plus the paper's output MLP. Each is an nn::Module whose encoder is a
// child ("encoder.*") and whose head is "head.*", so checkpoints name parameters the same way for every
// encoder. `hidden` lists the head MLP's hidden widths (empty: a single Linear).
#include <cstdint>
#include <memory>
#include <vector>

#include "models/model.hpp"
#include "nn/crf.hpp"
#include "nn/layers.hpp"

namespace topo::models {

struct HeadOptions {
  std::vector<std::int64_t> hidden;
  nn::Activation activation = nn::Activation::Relu;
  float dropout = 0.f;
  nn::Generator* generator = nullptr;  // dropout masks (default generator when null)
};

// What the trainer drives: one batch in, the task's output Var out.
class SequenceModel : public nn::Module {
 public:
  virtual nn::Var forward(const SequenceBatch& batch) = 0;
  const std::shared_ptr<SequenceEncoder>& encoder() const { return encoder_; }

 protected:
  explicit SequenceModel(std::shared_ptr<SequenceEncoder> encoder);
  std::shared_ptr<SequenceEncoder> encoder_;
};

// MLP(Encoding.sentences) -> [B, out] (masked summation: out = d - 1, MSE).
class SequenceRegressor : public SequenceModel {
 public:
  SequenceRegressor(std::shared_ptr<SequenceEncoder> encoder, std::int64_t out, const HeadOptions& head = {});
  nn::Var forward(const SequenceBatch& batch) override;

 private:
  std::shared_ptr<nn::MLP> head_;
};

// MLP(Encoding.sentences) -> logits [B, num_classes] (SST, MTL-16; cross-entropy).
class SequenceClassifier : public SequenceModel {
 public:
  SequenceClassifier(std::shared_ptr<SequenceEncoder> encoder, std::int64_t num_classes, const HeadOptions& head = {});
  nn::Var forward(const SequenceBatch& batch) override;

 private:
  std::shared_ptr<nn::MLP> head_;
};

// Per-token MLP(Encoding.tokens) -> logits [total tokens, num_tags] (POS, NER). With `crf` the logits are a
// linear-chain CRF's emissions and crf() holds its transitions ("crf.*"): the tagging task trains with its NLL
// and decodes with Viterbi.
class TokenTagger : public SequenceModel {
 public:
  TokenTagger(std::shared_ptr<SequenceEncoder> encoder, std::int64_t num_tags, const HeadOptions& head = {},
              std::shared_ptr<nn::LinearChainCrf> crf = nullptr);
  nn::Var forward(const SequenceBatch& batch) override;
  const std::shared_ptr<nn::LinearChainCrf>& crf() const { return crf_; }

 private:
  std::shared_ptr<nn::MLP> head_;
  std::shared_ptr<nn::LinearChainCrf> crf_;
};

// NLI: one shared encoder reads premises and hypotheses in ONE batch (one batched graph): `pairs` holds 2B
// sequences, the B premises then the B hypotheses, pair b = sequences b and B + b. r1, r2 [B, hidden] are their
// sentence features; the classifier sees [r1; r2; |r1 - r2|; r1 * r2] (4 * hidden) -> logits [B, num_classes].
// |x| is relu(x) + relu(-x).
class PairClassifier : public SequenceModel {
 public:
  PairClassifier(std::shared_ptr<SequenceEncoder> encoder, std::int64_t num_classes, const HeadOptions& head = {});
  nn::Var forward(const SequenceBatch& pairs) override;

 private:
  std::shared_ptr<nn::MLP> head_;
};

}  // namespace topo::models
