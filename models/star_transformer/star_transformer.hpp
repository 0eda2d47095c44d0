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

#include "models/encoder_config.hpp"
#include "models/model.hpp"
#include "models/sequence_embedding.hpp"
#include "models/star_transformer/topology.hpp"
#include "nn/attention.hpp"

namespace topo::models {

struct StarConfig {
  EncoderConfig encoder;  // dropout: on the embedding output
  StarVariant variant = StarVariant::Full;
  bool residual = false;
};

class StarTransformer : public SequenceEncoder {
 public:
  explicit StarTransformer(const StarConfig& config);
  Encoding encode(const SequenceBatch& batch) override;
  // The same, on a topology built by the caller (benchmarks build it once; the dense reference shares it).
  Encoding encode(const SequenceBatch& batch, const StarTopology& topology);
  std::int64_t hidden_size() const override { return config_.encoder.hidden; }
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
