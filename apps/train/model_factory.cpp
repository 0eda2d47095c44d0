#include "apps/train/model_factory.hpp"

#include <map>

#include "kernels/error.hpp"
#include "nn/layers.hpp"
#include "models/registry.hpp"

namespace topo::apps {

std::unique_ptr<Task> make_task(const TrainConfig& config) {
  return find_task(config.task).make(task_settings(config));
}

std::shared_ptr<models::SequenceEncoder> make_encoder(const TrainConfig& config, const Task& task,
                                                      nn::Generator* gen) {
  const models::ModelRegistration& model = models::find_model(config.model);
  models::EncoderSpec spec;
  spec.hidden = config.hidden;
  spec.heads = config.heads;
  spec.layers = config.layers;
  spec.dropout = static_cast<float>(config.dropout);
  spec.word_dropout = static_cast<float>(config.word_dropout);
  spec.vocab_size = task.vocab_size();
  spec.input_dim = task.input_dim();
  spec.max_length = task.max_length();  // learned positions cover the longest sequence the run can see
  spec.pretrained = task.pretrained_embedding();
  spec.pretrained_rows = task.pretrained_rows();
  spec.trained_rows = task.trained_rows();
  spec.embedding_dim = task.embedding_dim();  // vectors of another width than hidden: projected
  spec.case_classes = task.case_classes();
  spec.char_classes = task.char_classes();
  spec.char_filters = task.char_filters();
  spec.suffix_classes = task.suffix_classes();
  spec.bigram_classes = task.bigram_classes();
  spec.bigram_dim = task.bigram_dim();
  spec.bigram_pretrained = task.bigram_vectors();
  spec.bigram_pretrained_rows = task.bigram_vector_rows();
  spec.output_dim = task.encoder_output_dim();
  spec.vocabulary = task.token_strings();
  spec.freeze_pretrained = task.freeze_pretrained();
  spec.generator = gen;
  spec.options = config.options_of_model();
  return model.make(spec);
}

std::shared_ptr<models::SequenceModel> make_task_model(const TrainConfig& config, const Task& task,
                                                       nn::Generator* gen) {
  models::HeadOptions head;
  if (config.head_hidden > 0) head.hidden = {config.head_hidden};
  head.dropout = static_cast<float>(config.dropout);
  head.generator = gen;
  return task.make_model(make_encoder(config, task, gen), head);
}

std::vector<WidthLrScale> width_lr_scales(const TrainConfig& config, const Task& task, const nn::Module& model) {
  if (!config.scales_lr_by_width()) return {};
  TrainConfig wider = config;
  wider.hidden = config.hidden + config.heads;  // still a multiple of heads
  std::shared_ptr<models::SequenceModel> probe;
  try {
    probe = make_task_model(wider, task);
  } catch (const Error& e) {
    fail("lr_base_width {}: building the model at hidden {} (to find the weights whose fan-in grows with the width) "
         "failed: {}",
         config.lr_base_width, wider.hidden, e.what());
  }
  std::map<std::string, const nn::Linear*> probe_linears;
  for (const auto& [name, m] : probe->named_modules())
    if (const auto* linear = dynamic_cast<const nn::Linear*>(m)) probe_linears.emplace(name, linear);
  std::vector<WidthLrScale> out;
  for (const auto& [name, m] : model.named_modules()) {
    const auto* linear = dynamic_cast<const nn::Linear*>(m);
    if (linear == nullptr || !linear->weight.requires_grad()) continue;
    const auto it = probe_linears.find(name);
    TOPO_CHECK(it != probe_linears.end(), "lr_base_width: the model at hidden {} has no Linear '{}'", wider.hidden,
               name);
    const std::int64_t fan_in = linear->in_features(), grown = it->second->in_features() - fan_in;
    if (grown == 0) continue;
    TOPO_CHECK(grown > 0 && grown % config.heads == 0,
               "lr_base_width: Linear '{}' has fan-in {} at hidden {} and {} at hidden {}: not k x hidden + c",
               name, fan_in, config.hidden, fan_in + grown, wider.hidden);
    const std::int64_t k = grown / config.heads, fixed = fan_in - k * config.hidden;
    out.push_back({name, linear->weight, fan_in, k * config.lr_base_width + fixed});
  }
  return out;
}

}  // namespace topo::apps
