#include "models/star_transformer/star_transformer.hpp"

namespace topo::models {

StarTransformer::Layer::Layer(std::int64_t hidden, std::int64_t heads) {
  satellite_attention = register_module("satellite_attention", std::make_shared<nn::GraphMultiHeadAttention>(hidden, heads));
  satellite_norm = register_module("satellite_norm", std::make_shared<nn::LayerNorm>(hidden));
  relay_attention = register_module("relay_attention", std::make_shared<nn::GraphMultiHeadAttention>(hidden, heads));
  relay_norm = register_module("relay_norm", std::make_shared<nn::LayerNorm>(hidden));
}

StarTransformer::StarTransformer(const StarConfig& config) : config_(config) {
  TOPO_CHECK(config.hidden > 0 && config.heads > 0 && config.hidden % config.heads == 0,
             "StarTransformer: heads ({}) must divide hidden ({})", config.heads, config.hidden);
  TOPO_CHECK(config.layers >= 1, "StarTransformer: layers must be >= 1, got {}", config.layers);
  embedding = register_module("embedding", std::make_shared<SequenceEmbedding>(config.embedding()));
  layers = register_module("layers", std::make_shared<nn::ModuleList>());
  for (std::int64_t l = 0; l < config.layers; ++l) layers->push_back(std::make_shared<Layer>(config.hidden, config.heads));
}

Encoding StarTransformer::encode(const SequenceBatch& batch) {
  return encode(batch, star_topology(batch.lengths, config_.variant, parameters().front().device()));
}

Encoding StarTransformer::encode(const SequenceBatch& batch, const StarTopology& topology) {
  TOPO_CHECK(topology.lengths == batch.lengths, "StarTransformer: topology built for other sentence lengths");
  const nn::Var e = embed(batch);
  const nn::RelationCsr pool = nn::block_csr(topology.pool);
  nn::Var h = e;
  nn::Var s = nn::gspmm(pool, MessageOp::CopyU, SpmmReduce::Mean, e, nn::Var());  // s^0 = mean(E)
  for (std::size_t l = 0; l < layers->size(); ++l) {
    const Layer& layer = this->layer(l);
    const nn::Var context = nn::block_sources(topology.satellite, {{"sat", h}, {"emb", e}, {"relay", s}});
    nn::Var update = relu(layer.satellite_attention->forward(nn::block_csr(topology.satellite), h, context));
    h = layer.satellite_norm->forward(config_.residual ? h + update : update);
    const nn::Var relay_context = nn::block_sources(topology.relay, {{"sat", h}, {"relay", s}});
    update = relu(layer.relay_attention->forward(nn::block_csr(topology.relay), s, relay_context));
    s = layer.relay_norm->forward(config_.residual ? s + update : update);
  }
  const nn::Var pooled = nn::gspmm(pool, MessageOp::CopyU, SpmmReduce::Max, h, nn::Var());
  return Encoding{h, s + pooled};
}

}  // namespace topo::models
