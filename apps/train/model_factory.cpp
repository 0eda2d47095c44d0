#include "apps/train/model_factory.hpp"

#include "apps/tasks/classify.hpp"
#include "apps/tasks/masked_sum.hpp"
#include "kernels/error.hpp"
#include "models/baselines/deepsets.hpp"
#include "models/star_transformer/star_transformer.hpp"
#include "models/transformer/transformer.hpp"

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

std::unique_ptr<Task> make_task(const TrainConfig& config) {
  config.validate();
  if (config.task == "masked-sum")
    return std::make_unique<MaskedSumRegression>(
        MaskedSumSpec{config.n, config.n_min, config.k, config.d, static_cast<std::uint64_t>(config.seed)},
        MaskedSumRegression::Sizes{config.train_size, config.dev_size, config.test_size},
        config.eval_batch > 0 ? config.eval_batch : std::max<std::int64_t>(config.batch, 256));
  if (config.task == "classify") return std::make_unique<TextClassification>(classify_options(config));
  fail("unknown task '{}'", config.task);
}

std::shared_ptr<models::SequenceEncoder> make_encoder(const TrainConfig& config, const Task& task,
                                                      nn::Generator* gen) {
  if (config.model == "deepsets") {
    TOPO_CHECK(task.input_dim() > 0, "model 'deepsets' reads features; task '{}' has token ids", config.task);
    models::DeepSetsOptions o;
    o.in_dim = task.input_dim();
    o.hidden = config.hidden;
    o.layers = config.layers;
    o.pooling = models::parse_pooling(config.pooling);
    o.dropout = static_cast<float>(config.dropout);
    return std::make_shared<models::DeepSetsEncoder>(o, gen);
  }
  // Learned positions cover the longest sequence the run can see.
  const std::int64_t max_length = config.max_len > 0 ? config.max_len : task.max_length();
  const Tensor pretrained = task.pretrained_embedding();
  // The fields every attention encoder shares, from the config and the task's inputs.
  auto shared_fields = [&](auto& m) {
    m.vocab_size = task.vocab_size();
    m.input_dim = task.input_dim();
    m.hidden = config.hidden;
    m.heads = config.heads;
    m.layers = config.layers;
    m.max_length = max_length;
    m.dropout = static_cast<float>(config.dropout);
    m.pretrained = pretrained;
    m.freeze_pretrained = config.freeze_vectors;
    m.pretrained_rows = task.pretrained_rows();
    m.embedding_dim = task.embedding_dim();  // vectors of another width than hidden: projected
  };
  if (config.model == "star") {
    models::StarConfig s;
    shared_fields(s);
    s.variant = models::parse_star_variant(config.variant);
    s.residual = config.residual;
    return std::make_shared<models::StarTransformer>(s);
  }
  if (config.model == "transformer") {
    models::TransformerConfig t;
    shared_fields(t);
    t.dense = config.attention == "dense";
    return std::make_shared<models::Transformer>(t);
  }
  fail("unknown model '{}': expected deepsets, star or transformer", config.model);
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
