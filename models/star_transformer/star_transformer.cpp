#include "models/star_transformer/star_transformer.hpp"

#include "nn/readout.hpp"

namespace topo::models {

StarTransformer::Layer::Layer(std::int64_t hidden, std::int64_t heads) {
  satellite_attention = register_module("satellite_attention", std::make_shared<nn::GraphMultiHeadAttention>(hidden, heads));
  satellite_norm = register_module("satellite_norm", std::make_shared<nn::LayerNorm>(hidden));
  relay_attention = register_module("relay_attention", std::make_shared<nn::GraphMultiHeadAttention>(hidden, heads));
  relay_norm = register_module("relay_norm", std::make_shared<nn::LayerNorm>(hidden));
}

StarTransformer::StarTransformer(const StarConfig& config) : config_(config) {
  const EncoderConfig& e = config.encoder;
  TOPO_CHECK(e.hidden > 0 && e.heads > 0 && e.hidden % e.heads == 0,
             "StarTransformer: heads ({}) must divide hidden ({})", e.heads, e.hidden);
  TOPO_CHECK(e.layers >= 1, "StarTransformer: layers must be >= 1, got {}", e.layers);
  embedding = register_module("embedding", std::make_shared<SequenceEmbedding>(e.embedding()));
  layers = register_module("layers", std::make_shared<nn::ModuleList>());
  for (std::int64_t l = 0; l < e.layers; ++l) layers->push_back(std::make_shared<Layer>(e.hidden, e.heads));
}

Encoding StarTransformer::encode(const SequenceBatch& batch) {
  return encode(batch, star_topology(batch.lengths, config_.variant, parameters().front().device()));
}

Encoding StarTransformer::encode(const SequenceBatch& batch, const StarTopology& topology) {
  TOPO_CHECK(topology.lengths == batch.lengths, "StarTransformer: topology built for other sentence lengths");
  const nn::Var e = embed(batch);
  nn::Var h = e;
  nn::Var s = nn::readout_nodes(e, batch.lengths, nn::Readout::Mean);  // s^0 = mean(E)
  for (std::size_t l = 0; l < layers->size(); ++l) {
    const Layer& layer = this->layer(l);
    // LayerNorm(x + ReLU(update)), fused (or LayerNorm(ReLU(update)) without the residual).
    const auto epilogue = [&](const nn::LayerNorm& norm, const nn::Var& x, const nn::Var& update) {
      return config_.residual ? norm.forward_residual_relu(x, update) : norm.forward(relu(update));
    };
    h = epilogue(*layer.satellite_norm, h,
                 layer.satellite_attention->forward(topology.satellite, h, {{"sat", h}, {"emb", e}, {"relay", s}}));
    s = epilogue(*layer.relay_norm, s, layer.relay_attention->forward(topology.relay, s, {{"sat", h}, {"relay", s}}));
  }
  return Encoding{h, s + nn::readout_nodes(h, batch.lengths, nn::Readout::Max)};
}

}  // namespace topo::models
