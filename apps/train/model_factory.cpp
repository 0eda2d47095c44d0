#include "apps/train/model_factory.hpp"

#include "kernels/error.hpp"
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
  spec.vocab_size = task.vocab_size();
  spec.input_dim = task.input_dim();
  spec.max_length = task.max_length();  // learned positions cover the longest sequence the run can see
  spec.pretrained = task.pretrained_embedding();
  spec.pretrained_rows = task.pretrained_rows();
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

}  // namespace topo::apps
