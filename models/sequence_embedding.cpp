#include "models/sequence_embedding.hpp"

#include <algorithm>

namespace topo::models {

Tensor positions_in_sentence(const std::vector<std::int64_t>& lengths, Device device) {
  std::vector<std::int64_t> pos;
  for (std::int64_t n : lengths)
    for (std::int64_t i = 0; i < n; ++i) pos.push_back(i);
  return Tensor::from_vector(pos, {static_cast<std::int64_t>(pos.size())}, device);
}

SequenceEmbedding::SequenceEmbedding(const EmbeddingConfig& config) : config_(config) {
  TOPO_CHECK((config.vocab_size > 0) != (config.input_dim > 0),
             "sequence embedding: set exactly one of vocab_size ({}) and input_dim ({})", config.vocab_size,
             config.input_dim);
  TOPO_CHECK(config.hidden > 0, "sequence embedding: hidden must be > 0, got {}", config.hidden);
  TOPO_CHECK(config.max_length >= 1, "sequence embedding: max_length must be >= 1, got {}", config.max_length);
  TOPO_CHECK(config.embedding_dim >= 0 && (config.embedding_dim == 0 || config.vocab_size > 0),
             "sequence embedding: embedding_dim {} needs token ids (vocab_size > 0)", config.embedding_dim);
  const std::int64_t table_dim = config.embedding_dim > 0 ? config.embedding_dim : config.hidden;
  if (config.pretrained.defined()) {
    TOPO_CHECK(config.vocab_size > 0 && config.pretrained.ndim() == 2 && config.pretrained.size(0) == config.vocab_size &&
                   config.pretrained.size(1) == table_dim,
               "sequence embedding: pre-trained vectors {} must be [vocab_size = {}, {} = {}]", config.pretrained.str(),
               config.vocab_size, config.embedding_dim > 0 ? "embedding_dim" : "hidden", table_dim);
    token_embedding = register_module(
        "token", config.pretrained_rows.empty()
                     ? nn::Embedding::from_pretrained(config.pretrained, config.freeze_pretrained)
                     : nn::Embedding::with_pretrained_rows(config.pretrained, config.pretrained_rows,
                                                           config.freeze_pretrained));
  } else if (config.vocab_size > 0) {
    token_embedding = register_module("token", std::make_shared<nn::Embedding>(config.vocab_size, table_dim));
  } else
    feature_projection = register_module("features", std::make_shared<nn::Linear>(config.input_dim, config.hidden));
  position_embedding = register_module("position", std::make_shared<nn::Embedding>(config.max_length, config.hidden));
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(config.dropout));
  // Registered last so the other parameters keep their names and their reset seeds (registration order).
  if (table_dim != config.hidden)
    token_projection = register_module("token_projection", std::make_shared<nn::Linear>(table_dim, config.hidden, false));
  TOPO_CHECK(config.case_classes >= 0 && (config.case_classes == 0 || config.vocab_size > 0),
             "sequence embedding: case_classes {} needs token ids (vocab_size > 0)", config.case_classes);
  if (config.case_classes > 0)
    case_embedding = register_module("case", std::make_shared<nn::Embedding>(config.case_classes, config.hidden));
}

nn::Var SequenceEmbedding::forward(const SequenceBatch& batch) const {
  TOPO_CHECK(!batch.lengths.empty(), "sequence embedding: empty batch");
  const std::int64_t longest = *std::max_element(batch.lengths.begin(), batch.lengths.end());
  TOPO_CHECK(longest <= config_.max_length, "a sentence of length {} exceeds the model's max_length {}", longest,
             config_.max_length);
  nn::Var tokens;
  if (token_embedding) {
    TOPO_CHECK(batch.token_ids.defined(), "this model reads token ids, the batch has none");
    tokens = token_embedding->forward(batch.token_ids);  // [tokens, table_dim]
    if (token_projection) tokens = token_projection->forward(tokens);  // [tokens, hidden]
    if (case_embedding) {
      TOPO_CHECK(batch.token_case.defined() && batch.token_case.ndim() == 1 &&
                     batch.token_case.size(0) == batch.token_ids.size(0),
                 "this model adds a per-token case class; the batch has {} for {} tokens",
                 batch.token_case.defined() ? batch.token_case.str() : std::string("none"), batch.token_ids.size(0));
      tokens = tokens + case_embedding->forward(batch.token_case);
    }
  } else {
    TOPO_CHECK(batch.features.defined() && batch.features.ndim() == 2 && batch.features.size(1) == config_.input_dim,
               "this model reads features [tokens, {}], the batch has {}", config_.input_dim,
               batch.features.defined() ? batch.features.str() : std::string("none"));
    tokens = feature_projection->forward(nn::Var(batch.features));
  }
  const nn::Var positions = position_embedding->forward(positions_in_sentence(batch.lengths, tokens.device()));
  return dropout->forward(tokens + positions);
}

}  // namespace topo::models
