#pragma once
// The Star-Transformer (Guo et al., NAACL 2019) exactly as ../shared/docs/models.md §1:
//   E = token embedding (or a projection of input features) + learned position embedding
//   H^0 = E,  s^0 = mean_i E_i (per sentence)
//   layer t: H^t = LayerNorm(ReLU(MultiAtt(H^{t-1}, [h_{i-1}, h_i, h_{i+1}, e_i, s^{t-1}])))   satellites
//            s^t = LayerNorm(ReLU(MultiAtt(s^{t-1}, [s^{t-1}; H^t])))                       relay
//   readout: tokens H^T, sentence feature s^T + max_i H^T_i
// The topology is star_topology() (graph builders); each phase is one GraphMultiHeadAttention over a block,
// with separate weights per layer and per phase. `residual` adds x + ReLU(MultiAtt(...)) inside the
// LayerNorm, the authors' advice for deep stacks (off by default: the paper's equations).
#include <cstdint>
#include <memory>

#include "models/model.hpp"
#include "models/sequence_embedding.hpp"
#include "models/star_transformer/topology.hpp"
#include "nn/attention.hpp"

namespace topo::models {

struct StarConfig {
  std::int64_t vocab_size = 0;  // > 0: token ids through an embedding table
  std::int64_t input_dim = 0;   // > 0: continuous features through a linear projection (exactly one of the two)
  std::int64_t hidden = 100;
  std::int64_t heads = 10;
  std::int64_t layers = 2;
  std::int64_t max_length = 256;  // learned positions; a longer sentence is an error naming its length
  float dropout = 0.f;            // on the embedding output
  Tensor pretrained;              // optional token vectors [vocab_size, embedding_dim] (see EmbeddingConfig)
  bool freeze_pretrained = false;
  std::vector<std::uint8_t> pretrained_rows;  // the rows of `pretrained` that hold vectors (empty: all)
  std::int64_t embedding_dim = 0;             // token table width (0: hidden; else projected to hidden)
  std::int64_t case_classes = 0;               // > 0: a capitalisation embedding added per token (tagging)
  EmbeddingConfig embedding() const {
    return {vocab_size, input_dim, hidden, max_length, dropout, pretrained, freeze_pretrained, pretrained_rows,
            embedding_dim, case_classes};
  }
  StarVariant variant = StarVariant::Full;
  bool residual = false;
};

class StarTransformer : public SequenceEncoder {
 public:
  explicit StarTransformer(const StarConfig& config);
  Encoding encode(const SequenceBatch& batch) override;
  // The same, on a topology built by the caller (benchmarks build it once; the dense reference shares it).
  Encoding encode(const SequenceBatch& batch, const StarTopology& topology);
  std::int64_t hidden_size() const override { return config_.hidden; }
  const StarConfig& config() const { return config_; }

  // E: token (or feature) embedding + position embedding, dropout applied: [total tokens, hidden].
  nn::Var embed(const SequenceBatch& batch) const { return embedding->forward(batch); }

  struct Layer : nn::Module {
    Layer(std::int64_t hidden, std::int64_t heads);
    std::shared_ptr<nn::GraphMultiHeadAttention> satellite_attention, relay_attention;
    std::shared_ptr<nn::LayerNorm> satellite_norm, relay_norm;
  };
  std::shared_ptr<SequenceEmbedding> embedding;
  std::shared_ptr<nn::ModuleList> layers;
  const Layer& layer(std::size_t i) const { return *layers->at<Layer>(i); }

 private:
  StarConfig config_;
};

}  // namespace topo::models
