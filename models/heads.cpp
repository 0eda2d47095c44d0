#include "models/heads.hpp"

#include "kernels/error.hpp"
#include "nn/ops.hpp"

namespace topo::models {
namespace {

std::shared_ptr<nn::MLP> make_head(std::int64_t in, std::int64_t out, const HeadOptions& head, const char* what) {
  TOPO_CHECK(out >= 1, "{}: output size {} must be >= 1", what, out);
  for (std::int64_t h : head.hidden) TOPO_CHECK(h >= 1, "{}: head hidden width {} must be >= 1", what, h);
  return std::make_shared<nn::MLP>(in, head.hidden, out, head.activation, head.dropout, head.generator);
}

const std::shared_ptr<SequenceEncoder>& checked(const std::shared_ptr<SequenceEncoder>& encoder, const char* what) {
  TOPO_CHECK(encoder != nullptr, "{}: null encoder", what);
  return encoder;
}

}  // namespace

SequenceModel::SequenceModel(std::shared_ptr<SequenceEncoder> encoder)
    : encoder_(register_module("encoder", checked(encoder, "SequenceModel"))) {}

SequenceRegressor::SequenceRegressor(std::shared_ptr<SequenceEncoder> encoder, std::int64_t out, const HeadOptions& head)
    : SequenceModel(std::move(encoder)) {
  head_ = register_module("head", make_head(encoder_->hidden_size(), out, head, "SequenceRegressor"));
}

nn::Var SequenceRegressor::forward(const SequenceBatch& batch) { return head_->forward(encoder_->encode(batch).sentences); }

SequenceClassifier::SequenceClassifier(std::shared_ptr<SequenceEncoder> encoder, std::int64_t num_classes,
                                       const HeadOptions& head)
    : SequenceModel(std::move(encoder)) {
  head_ = register_module("head", make_head(encoder_->hidden_size(), num_classes, head, "SequenceClassifier"));
}

nn::Var SequenceClassifier::forward(const SequenceBatch& batch) {
  return head_->forward(encoder_->encode(batch).sentences);
}

TokenTagger::TokenTagger(std::shared_ptr<SequenceEncoder> encoder, std::int64_t num_tags, const HeadOptions& head,
                         std::shared_ptr<nn::LinearChainCrf> crf)
    : SequenceModel(std::move(encoder)) {
  head_ = register_module("head", make_head(encoder_->hidden_size(), num_tags, head, "TokenTagger"));
  if (crf) crf_ = register_module("crf", std::move(crf));
}

nn::Var TokenTagger::forward(const SequenceBatch& batch) { return head_->forward(encoder_->encode(batch).tokens); }

PairClassifier::PairClassifier(std::shared_ptr<SequenceEncoder> encoder, std::int64_t num_classes,
                               const HeadOptions& head)
    : SequenceModel(checked(std::move(encoder), "PairClassifier")) {
  head_ = register_module("head", make_head(4 * encoder_->hidden_size(), num_classes, head, "PairClassifier"));
}

nn::Var PairClassifier::forward(const SequenceBatch& pairs) {
  TOPO_CHECK(pairs.size() % 2 == 0 && pairs.size() > 0,
             "PairClassifier: a batch of pairs holds an even number of sequences (premises, then hypotheses), got {}",
             pairs.size());
  const std::int64_t b = pairs.size() / 2;
  const std::vector<nn::Var> halves = nn::split(encoder_->encode(pairs).sentences, {b, b}, 0);
  const nn::Var &r1 = halves[0], &r2 = halves[1];
  const nn::Var diff = r1 - r2;
  const nn::Var abs_diff = nn::relu(diff) + nn::relu(-diff);
  return head_->forward(nn::concat({r1, r2, abs_diff, r1 * r2}, 1));
}

}  // namespace topo::models
