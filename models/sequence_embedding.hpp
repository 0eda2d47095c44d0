#pragma once
// The input stage every sequence model here shares: token ids through an embedding table, or continuous
// features (masked summation) through a linear projection, plus a learned position embedding, then dropout.
#include <cstdint>
#include <memory>

#include "models/model.hpp"
#include "nn/layers.hpp"

namespace topo::models {

struct EmbeddingConfig {
  std::int64_t vocab_size = 0;  // > 0: token ids
  std::int64_t input_dim = 0;   // > 0: features (exactly one of the two)
  std::int64_t hidden = 100;
  std::int64_t max_length = 256;  // a longer sentence is an error naming its length
  float dropout = 0.f;
  // Optional pre-trained token vectors float32 [vocab_size, hidden] (reset_parameters keeps them), and
  // whether training leaves them fixed.
  Tensor pretrained;
  bool freeze_pretrained = false;
};

class SequenceEmbedding : public nn::Module {
 public:
  explicit SequenceEmbedding(const EmbeddingConfig& config);
  // [total tokens, hidden].
  nn::Var forward(const SequenceBatch& batch) const;
  const EmbeddingConfig& config() const { return config_; }

  std::shared_ptr<nn::Embedding> token_embedding;  // when vocab_size > 0
  std::shared_ptr<nn::Linear> feature_projection;  // when input_dim > 0
  std::shared_ptr<nn::Embedding> position_embedding;
  std::shared_ptr<nn::Dropout> dropout;

 private:
  EmbeddingConfig config_;
};

// Position of every token within its sentence: int64 [total tokens].
Tensor positions_in_sentence(const std::vector<std::int64_t>& lengths, Device device = Device::cpu());

}  // namespace topo::models
