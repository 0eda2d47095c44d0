#pragma once
// DeepSets (Zaheer et al. 2017) as a SequenceEncoder: a per-token MLP phi, then a per-sentence pooling.
// Order-blind by construction, so it is the baseline that shows what attention over positions adds; on
// masked summation sum pooling can represent the target exactly (phi can compute mask * value with
// relu(value + mask - 1)), so it is also the model the trainer is first tested with.
// The task head (rho) is the MLP of models/heads.hpp on Encoding.sentences.
#include <cstdint>
#include <memory>
#include <vector>

#include "nn/readout.hpp"
#include "models/model.hpp"
#include "nn/layers.hpp"

namespace topo::models {

// Not an EncoderConfig (models/encoder_config.hpp): DeepSets has no attention heads, no positions and no
// pre-trained token tables, so it takes only the sizes and dropout it reads (deepsets_registration.cpp).
struct DeepSetsOptions {
  std::int64_t in_dim = 0;      // feature inputs: SequenceBatch.features [total, in_dim]
  std::int64_t vocab_size = 0;  // token inputs instead (in_dim == 0): an embedding of this many ids
  std::int64_t hidden = 100;
  std::int64_t layers = 2;      // Linear + activation layers in phi (>= 1)
  nn::Readout pooling = nn::Readout::Sum;  // per-sentence readout of phi(x)
  nn::Activation activation = nn::Activation::Relu;
  float dropout = 0.f;          // after every phi layer
};

class DeepSetsEncoder : public SequenceEncoder {
 public:
  // `gen` drives dropout masks (default generator when null).
  explicit DeepSetsEncoder(const DeepSetsOptions& options, nn::Generator* gen = nullptr);
  // tokens = phi(x) [total, hidden]; sentences = pool(tokens) [B, hidden].
  Encoding encode(const SequenceBatch& batch) override;
  std::int64_t hidden_size() const override { return options_.hidden; }
  const DeepSetsOptions& options() const { return options_; }

 private:
  DeepSetsOptions options_;
  std::shared_ptr<nn::Embedding> embedding_;  // token inputs only
  std::vector<std::shared_ptr<nn::Linear>> phi_;
  std::vector<std::shared_ptr<nn::Dropout>> dropouts_;
};

}  // namespace topo::models
