#include "models/star_transformer/star_transformer.hpp"

#include <algorithm>

namespace topo::models {

Tensor positions_in_sentence(const std::vector<std::int64_t>& lengths, Device device) {
  std::vector<std::int64_t> pos;
  for (std::int64_t n : lengths)
    for (std::int64_t i = 0; i < n; ++i) pos.push_back(i);
  return Tensor::from_vector(pos, {static_cast<std::int64_t>(pos.size())}, device);
}

StarTransformer::Layer::Layer(std::int64_t hidden, std::int64_t heads) {
  satellite_attention = register_module("satellite_attention", std::make_shared<nn::GraphMultiHeadAttention>(hidden, heads));
  satellite_norm = register_module("satellite_norm", std::make_shared<nn::LayerNorm>(hidden));
  relay_attention = register_module("relay_attention", std::make_shared<nn::GraphMultiHeadAttention>(hidden, heads));
  relay_norm = register_module("relay_norm", std::make_shared<nn::LayerNorm>(hidden));
}

StarTransformer::StarTransformer(const StarConfig& config) : config_(config) {
  TOPO_CHECK((config.vocab_size > 0) != (config.input_dim > 0),
             "StarTransformer: set exactly one of vocab_size ({}) and input_dim ({})", config.vocab_size,
             config.input_dim);
  TOPO_CHECK(config.hidden > 0 && config.heads > 0 && config.hidden % config.heads == 0,
             "StarTransformer: heads ({}) must divide hidden ({})", config.heads, config.hidden);
  TOPO_CHECK(config.layers >= 1, "StarTransformer: layers must be >= 1, got {}", config.layers);
  TOPO_CHECK(config.max_length >= 1, "StarTransformer: max_length must be >= 1, got {}", config.max_length);
  if (config.vocab_size > 0)
    token_embedding = register_module("token_embedding", std::make_shared<nn::Embedding>(config.vocab_size, config.hidden));
  else
    feature_projection = register_module("feature_projection", std::make_shared<nn::Linear>(config.input_dim, config.hidden));
  position_embedding = register_module("position_embedding", std::make_shared<nn::Embedding>(config.max_length, config.hidden));
  embedding_dropout = register_module("embedding_dropout", std::make_shared<nn::Dropout>(config.dropout));
  layers = register_module("layers", std::make_shared<nn::ModuleList>());
  for (std::int64_t l = 0; l < config.layers; ++l) layers->push_back(std::make_shared<Layer>(config.hidden, config.heads));
}

nn::Var StarTransformer::embed(const SequenceBatch& batch) const {
  const std::int64_t longest = *std::max_element(batch.lengths.begin(), batch.lengths.end());
  TOPO_CHECK(longest <= config_.max_length, "StarTransformer: a sentence of length {} exceeds max_length {}", longest,
             config_.max_length);
  nn::Var tokens;
  if (token_embedding) {
    TOPO_CHECK(batch.token_ids.defined(), "StarTransformer: this model reads token ids, the batch has none");
    tokens = token_embedding->forward(batch.token_ids);
  } else {
    TOPO_CHECK(batch.features.defined() && batch.features.ndim() == 2 && batch.features.size(1) == config_.input_dim,
               "StarTransformer: this model reads features [tokens, {}], the batch has {}", config_.input_dim,
               batch.features.defined() ? batch.features.str() : std::string("none"));
    tokens = feature_projection->forward(nn::Var(batch.features));
  }
  const nn::Var positions = position_embedding->forward(positions_in_sentence(batch.lengths, tokens.device()));
  return embedding_dropout->forward(tokens + positions);
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
