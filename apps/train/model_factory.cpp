#include "apps/train/model_factory.hpp"

#include "apps/tasks/classify.hpp"
#include "apps/tasks/masked_sum.hpp"
#include "apps/tasks/mirrored_sum.hpp"
#include "apps/tasks/tag.hpp"
#include "kernels/error.hpp"
#include "models/registry.hpp"

namespace topo::apps {

ClassifyOptions classify_options(const TrainConfig& config) {
  ClassifyOptions o;
  o.format = config.format;
  o.train = config.train;
  o.dev = config.dev;
  o.test = config.test;
  // MTL-16 ships train and test only; its customary dev set is the last 200 training lines.
  o.dev_split = config.dev_split > 0 ? config.dev_split : (config.dev.empty() && config.format == "mtl" ? 200 : 0);
  o.read.encoding = text::parse_text_encoding(config.encoding);
  o.read.lowercase = config.lowercase;
  o.read.tokenize = text::parse_tokenization(config.tokenize);
  o.read.label_field = config.label_field;
  o.read.text_field = config.text_field;
  o.read.skip_bad = config.skip_bad;
  o.read.max_length = config.max_len > 0 ? config.max_len : 256;  // the Star-Transformer paper's truncation
  o.read.sst_binary = config.binary;
  o.train_subtrees = config.subtrees;
  o.min_freq = config.min_freq;
  o.vectors = config.vectors;
  o.vector_options = {config.vectors_lowercase, text::parse_bad_vector_lines(config.vectors_bad_lines)};
  o.eval_batch = config.eval_batch > 0 ? config.eval_batch : 128;
  return o;
}

TagOptions tag_options(const TrainConfig& config) {
  TagOptions o;
  o.format = config.format;
  o.train = config.train;
  o.dev = config.dev;
  o.test = config.test;
  o.read.encoding = text::parse_text_encoding(config.encoding);
  o.read.skip_bad = config.skip_bad;
  o.read.xpos = config.xpos;
  o.scheme = config.tag_scheme;
  o.lowercase = config.lowercase;
  o.case_feature = config.case_feature;
  o.crf = config.crf;
  o.min_freq = config.min_freq;
  o.max_length = config.max_len > 0 ? config.max_len : 256;
  o.vectors = config.vectors;
  o.vector_options = {config.vectors_lowercase, text::parse_bad_vector_lines(config.vectors_bad_lines)};
  o.eval_batch = config.eval_batch > 0 ? config.eval_batch : 128;
  return o;
}

std::unique_ptr<Task> make_task(const TrainConfig& config) {
  config.validate();
  if (config.task == "masked-sum")
    return std::make_unique<MaskedSumRegression>(
        MaskedSumSpec{config.n, config.n_min, config.k, config.d, static_cast<std::uint64_t>(config.seed)},
        MaskedSumRegression::Sizes{config.train_size, config.dev_size, config.test_size},
        config.eval_batch > 0 ? config.eval_batch : std::max<std::int64_t>(config.batch, 256));
  if (config.task == "mirrored-sum")
    return std::make_unique<MirroredSumRegression>(
        MirroredSumSpec{config.n, config.d, config.k, static_cast<std::uint64_t>(config.seed)},
        MirroredSumRegression::Sizes{config.train_size, config.dev_size, config.test_size},
        config.eval_batch > 0 ? config.eval_batch : std::max<std::int64_t>(config.batch, 256));
  if (config.task == "classify") return std::make_unique<TextClassification>(classify_options(config));
  if (config.task == "tag") return std::make_unique<SequenceTagging>(tag_options(config));
  fail("unknown task '{}'", config.task);
}

std::shared_ptr<models::SequenceEncoder> make_encoder(const TrainConfig& config, const Task& task,
                                                      nn::Generator* gen) {
  const models::ModelRegistration& model = models::find_model(config.model);
  const bool features = task.input_dim() > 0;
  TOPO_CHECK(features ? model.reads_features : model.reads_token_ids, "model '{}' does not read {}, which task '{}' gives",
             config.model, features ? "features" : "token ids", config.task);
  models::EncoderSpec spec;
  spec.hidden = config.hidden;
  spec.heads = config.heads;
  spec.layers = config.layers;
  spec.dropout = static_cast<float>(config.dropout);
  spec.vocab_size = task.vocab_size();
  spec.input_dim = task.input_dim();
  // Learned positions cover the longest sequence the run can see.
  spec.max_length = config.max_len > 0 ? config.max_len : task.max_length();
  spec.pretrained = task.pretrained_embedding();
  spec.pretrained_rows = task.pretrained_rows();
  spec.embedding_dim = task.embedding_dim();  // vectors of another width than hidden: projected
  spec.case_classes = task.case_classes();
  spec.vocabulary = task.token_strings();
  spec.freeze_pretrained = config.freeze_vectors;
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
