#include "apps/train/model_factory.hpp"

#include "kernels/error.hpp"
#include "models/baselines/deepsets.hpp"

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
  if (config.model == "star") fail("model 'star' is not built into this binary yet");
  fail("unknown model '{}': expected deepsets or star", config.model);
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
