#pragma once
// What the apps train: a model maps a batch of variable-length sequences to task outputs.
// Sentences are concatenated without padding (lengths say where each ends): batching by disjoint union
// makes padding unnecessary, and every topology builder takes the same lengths.
#include <cstdint>
#include <vector>

#include "kernels/tensor.hpp"
#include "nn/module.hpp"

namespace topo::models {

struct SequenceBatch {
  std::vector<std::int64_t> lengths;  // tokens per sentence, each >= 1
  Tensor token_ids;                   // int64 [total tokens] for text; undefined for feature inputs
  Tensor features;                    // float32 [total tokens, in_dim] for continuous inputs (masked summation)

  std::int64_t size() const { return static_cast<std::int64_t>(lengths.size()); }
  std::int64_t num_tokens() const;
  // Sentence index of every token: int64 [total tokens].
  Tensor sentence_ids(Device device = Device::cpu()) const;
  SequenceBatch to(Device device) const;
};

// The model-specific part: token states and one feature vector per sentence.
struct Encoding {
  nn::Var tokens;     // [total tokens, hidden]
  nn::Var sentences;  // [batch, hidden] (the paper's readout feature, e.g. s^T + max_i h_i^T for Star)
};

class SequenceEncoder : public nn::Module {
 public:
  virtual Encoding encode(const SequenceBatch& batch) = 0;
  virtual std::int64_t hidden_size() const = 0;
};

}  // namespace topo::models
