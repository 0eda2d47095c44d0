#include "models/baselines/deepsets.hpp"

#include "kernels/error.hpp"

namespace topo::models {

DeepSetsEncoder::DeepSetsEncoder(const DeepSetsOptions& options, nn::Generator* gen) : options_(options) {
  TOPO_CHECK((options.in_dim > 0) != (options.vocab_size > 0),
             "DeepSets: exactly one of in_dim ({}) and vocab_size ({}) must be positive", options.in_dim,
             options.vocab_size);
  TOPO_CHECK(options.hidden >= 1, "DeepSets: hidden = {} must be >= 1", options.hidden);
  TOPO_CHECK(options.layers >= 1, "DeepSets: layers = {} must be >= 1", options.layers);
  TOPO_CHECK(options.dropout >= 0.f && options.dropout < 1.f, "DeepSets: dropout = {} must be in [0, 1)",
             options.dropout);
  std::int64_t in = options.in_dim;
  if (options.vocab_size > 0) {
    embedding_ = register_module("embedding", std::make_shared<nn::Embedding>(options.vocab_size, options.hidden));
    in = options.hidden;
  }
  auto phi = register_module("phi", std::make_shared<nn::ModuleList>());
  auto dropouts = register_module("dropout", std::make_shared<nn::ModuleList>());
  for (std::int64_t i = 0; i < options.layers; ++i) {
    phi_.push_back(phi->push_back(std::make_shared<nn::Linear>(in, options.hidden)));
    dropouts_.push_back(dropouts->push_back(std::make_shared<nn::Dropout>(options.dropout, gen)));
    in = options.hidden;
  }
}

Encoding DeepSetsEncoder::encode(const SequenceBatch& batch) {
  nn::Var x;
  if (embedding_) {
    TOPO_CHECK(batch.token_ids.defined(), "DeepSets: built for token ids but the batch has none");
    x = embedding_->forward(batch.token_ids);
  } else {
    TOPO_CHECK(batch.features.defined() && batch.features.ndim() == 2 && batch.features.size(1) == options_.in_dim,
               "DeepSets: expected features [total, {}], got {}", options_.in_dim,
               batch.features.defined() ? batch.features.str() : std::string("none"));
    x = nn::Var(batch.features);
  }
  TOPO_CHECK(x.size(0) == batch.num_tokens(), "DeepSets: {} token rows for lengths summing to {}", x.size(0),
             batch.num_tokens());
  for (std::size_t i = 0; i < phi_.size(); ++i) x = dropouts_[i]->forward(nn::apply(options_.activation, phi_[i]->forward(x)));
  return {x, nn::readout_nodes(x, batch.lengths, options_.pooling)};
}

}  // namespace topo::models
