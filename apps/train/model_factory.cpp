#include "apps/train/model_factory.hpp"

#include "kernels/error.hpp"
#include "models/baselines/deepsets.hpp"
#include "models/star_transformer/star_transformer.hpp"
#include "models/transformer/transformer.hpp"

namespace topo::apps {

std::int64_t task_input_dim(const TrainConfig& config) {
  if (config.task == "masked-sum") return config.d;
  fail("unknown task '{}'", config.task);
}

std::shared_ptr<models::SequenceEncoder> make_encoder(const TrainConfig& config, nn::Generator* gen) {
  if (config.model == "deepsets") {
    models::DeepSetsOptions o;
    o.in_dim = task_input_dim(config);
    o.hidden = config.hidden;
    o.layers = config.layers;
    o.pooling = models::parse_pooling(config.pooling);
    o.dropout = static_cast<float>(config.dropout);
    return std::make_shared<models::DeepSetsEncoder>(o, gen);
  }
  // Learned positions cover the longest sequence the run can see.
  const std::int64_t max_length = config.max_len > 0 ? config.max_len : config.n;
  if (config.model == "star") {
    models::StarConfig s;
    s.input_dim = task_input_dim(config);
    s.hidden = config.hidden;
    s.heads = config.heads;
    s.layers = config.layers;
    s.max_length = max_length;
    s.dropout = static_cast<float>(config.dropout);
    s.variant = models::parse_star_variant(config.variant);
    s.residual = config.residual;
    return std::make_shared<models::StarTransformer>(s);
  }
  if (config.model == "transformer") {
    models::TransformerConfig t;
    t.input_dim = task_input_dim(config);
    t.hidden = config.hidden;
    t.heads = config.heads;
    t.layers = config.layers;
    t.max_length = max_length;
    t.dropout = static_cast<float>(config.dropout);
    return std::make_shared<models::Transformer>(t);
  }
  fail("unknown model '{}': expected deepsets, star or transformer", config.model);
}

std::shared_ptr<models::SequenceModel> make_task_model(const TrainConfig& config, nn::Generator* gen) {
  models::HeadOptions head;
  if (config.head_hidden > 0) head.hidden = {config.head_hidden};
  head.dropout = static_cast<float>(config.dropout);
  head.generator = gen;
  if (config.task == "masked-sum")
    return std::make_shared<models::SequenceRegressor>(make_encoder(config, gen), config.d - 1, head);
  fail("unknown task '{}'", config.task);
}

}  // namespace topo::apps
