#include "apps/tasks/classify/classify.hpp"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <map>

#include "apps/tasks/task_vectors.hpp"
#include "apps/text/batching.hpp"
#include "kernels/error.hpp"
#include "nn/json_number.hpp"
#include "nn/ops.hpp"

namespace topo::apps {
namespace {

nlohmann::json read_options_json(const text::ReadOptions& r) {
  return {{"encoding", text::text_encoding_name(r.encoding)},
          {"lowercase", r.lowercase},
          {"tokenize", text::tokenization_name(r.tokenize)},
          {"max_length", r.max_length},
          {"sst_binary", r.sst_binary},
          {"label_field", r.label_field},
          {"text_field", r.text_field},
          {"parse_tokens", r.parse_tokens}};
}

// The most frequent training label (ties: the smaller class id), the majority baseline's prediction.
std::string majority_label(const text::Dataset& train, const text::LabelSet& labels) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(labels.size()), 0);
  for (const text::Example& e : train.examples) ++counts[static_cast<std::size_t>(labels.id(e.label))];
  const auto best = std::max_element(counts.begin(), counts.end()) - counts.begin();
  return labels.name(best);
}

}  // namespace

nlohmann::json read_stats_json(const text::ReadStats& s) {
  return {{"lines", s.lines},
          {"examples", s.examples},
          {"skipped_bad", s.skipped_bad},
          {"invalid_utf8_lines", s.invalid_utf8_lines},
          {"first_invalid_utf8", s.first_invalid_utf8},
          {"truncated", s.truncated},
          {"unlabelled", s.unlabelled},
          {"merged_duplicates", s.merged_duplicates},
          {"label_conflicts", s.label_conflicts}};
}

EncodedSplit encode_split(const text::Dataset& data, const text::Vocabulary& vocab, const text::LabelSet& labels) {
  EncodedSplit out;
  out.ids.reserve(data.examples.size());
  out.labels.reserve(data.examples.size());
  for (const text::Example& e : data.examples) {
    TOPO_CHECK(!e.tokens.empty(), "{}:{}: an example without tokens", data.path, e.line);
    TOPO_CHECK(labels.contains(e.label), "{}:{}: label '{}' is not one of the model's {} classes", data.path,
               e.line, e.label, labels.size());
    out.ids.push_back(vocab.encode(e.tokens));
    if (!e.tokens2.empty()) out.ids2.push_back(vocab.encode(e.tokens2));
    out.labels.push_back(labels.id(e.label));
  }
  return out;
}

TextClassification::TextClassification(const ClassifyOptions& options) : options_(options) {
  TOPO_CHECK(options.read.max_length > 0, "{}: max_length must be > 0 (sentences are truncated to it)", options.task);
  TOPO_CHECK(options.eval_batch > 0, "{}: eval_batch must be > 0", options.task);
  text::ReadOptions train_read = options.read;
  train_read.sst_subtrees = options.train_subtrees;
  train_read.sst_unique_subtrees = options.train_unique_subtrees;
  text::Dataset train = text::read_dataset(options.format, options.train, train_read), dev, test;
  if (!options.dev.empty()) {
    dev = text::read_dataset(options.format, options.dev, options.read);
  } else {
    TOPO_CHECK(options.dev_split > 0, "{}: no dev file and no dev_split", options.task);
    TOPO_CHECK(!options.train_subtrees, "{}: dev_split would hold out subtrees; give a dev file", options.task);
    std::tie(train, dev) = text::split_last(std::move(train), options.dev_split);
  }
  if (!options.test.empty()) test = text::read_dataset(options.format, options.test, options.read);
  TOPO_CHECK(!train.examples.empty(), "{}: '{}' holds no training examples", options.task, options.train);
  TOPO_CHECK(!dev.examples.empty(), "{}: the dev split is empty", options.task);
  pairs_ = !train.examples.front().tokens2.empty();

  vocab_ = text::Vocabulary::build({&train}, options.min_freq);
  ExtendedVocabulary with_vectors;  // the vocabulary and its vectors, read once (with --vectors)
  const bool extend = !options.vectors.empty() && options.vectors_vocabulary != "train";
  if (extend) {
    // Dev and test lend their text only (never their labels): a word training saw too rarely or not at all
    // still reads its pre-trained vector.
    std::vector<std::string> candidates;
    for (const text::Dataset* d : {&train, &dev, &test})
      for (const text::Example& e : d->examples)
        for (const auto* tokens : {&e.tokens, &e.tokens2})
          for (const std::string& t : *tokens)
            if (!vocab_.contains(t)) candidates.push_back(t);
    with_vectors = vocabulary_with_vectors(vocab_, std::move(candidates), options.vectors_vocabulary, options.vectors,
                                           options.vector_options);
    vocab_ = with_vectors.vocab;
  }
  // Classes are what training saw: a dev/test label outside them is an error naming file:line
  // (encode_split), not a class the model could never learn.
  labels_ = text::LabelSet::build({&train});
  TOPO_CHECK(labels_.size() >= 2, "{}: '{}' has a single label '{}'; nothing to classify", options.task, options.train,
             labels_.name(0));
  majority_label_ = majority_label(train, labels_);
  const text::Dataset* parts[3] = {&train, &dev, &test};
  for (int s = 0; s < 3; ++s) {
    splits_[s] = encode_split(*parts[s], vocab_, labels_);
    stats_[s] = parts[s]->stats;
  }
  if (extend) {
    use_vectors(task_vectors(with_vectors.vectors, options.vectors, options.vector_options, vocab_,
                             splits_[static_cast<int>(Split::Train)].ids),
                options.freeze_vectors);
    vectors_.report["vocabulary_added"] = with_vectors.added;
    // The words training never reads stay out of the optimizer (a table of 71k GloVe words would otherwise be
    // stepped, its gradient always zero, at every step).
    const EncodedSplit& t = splits_[static_cast<int>(Split::Train)];
    trained_rows_ = trained_rows_of(vocab_.size(), {&t.ids, &t.ids2});
  } else if (!options.vectors.empty()) {
    load_vectors(options.vectors, options.vector_options, splits_[static_cast<int>(Split::Train)].ids,
                 options.freeze_vectors);
  }
}

std::unique_ptr<TextClassification> TextClassification::for_evaluation(const nlohmann::json& metadata,
                                                                       ClassifyOptions options,
                                                                       const std::string& source) {
  TOPO_CHECK(!options.test.empty(), "evaluation needs a file to score");
  TOPO_CHECK(metadata.is_object(), "{}: the task metadata is {}, not an object", source, metadata.type_name());
  for (const char* key : {"vocabulary", "labels", "read", "majority_label"})
    TOPO_CHECK(metadata.contains(key),
               "{}: the task metadata has no '{}' (a text classifier's checkpoint carries vocabulary, labels, "
               "read options and majority_label)",
               source, key);
  std::unique_ptr<TextClassification> t(new TextClassification());
  try {
    const nlohmann::json& read = metadata.at("read");
    options.read.encoding = text::parse_text_encoding(read.at("encoding").get<std::string>());
    options.read.lowercase = read.at("lowercase").get<bool>();
    options.read.tokenize = text::parse_tokenization(read.value("tokenize", "whitespace"));  // older checkpoints: words
    options.read.max_length = json_number<std::int64_t>(read.at("max_length"));
    options.read.sst_binary = read.at("sst_binary").get<bool>();
    options.read.label_field = read.at("label_field").get<std::string>();
    options.read.text_field = read.at("text_field").get<std::string>();
    options.read.sst_subtrees = false;
    t->vocab_ = text::Vocabulary::from_json(metadata.at("vocabulary"));
    t->labels_ = text::LabelSet::from_json(metadata.at("labels"));
    t->majority_label_ = metadata.at("majority_label").get<std::string>();
    // embedding_dim is absent in checkpoints before vectors, pairs before sentence pairs.
    t->embedding_dim_ = json_number_or(metadata, "embedding_dim", std::int64_t{0});
    t->trained_rows_ = json_number_or(metadata, "trained_rows", std::int64_t{0});  // before the tail: one table
    t->pairs_ = metadata.value("pairs", false);
    options.read.parse_tokens = read.value("parse_tokens", true);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: malformed task metadata: {}", source, e.what());
  } catch (const Error& e) {
    fail("{}: {}", source, e.what());
  }
  TOPO_CHECK(options.read.max_length > 0 && t->labels_.size() >= 1 && t->labels_.contains(t->majority_label_) &&
                 t->trained_rows_ >= 0 && t->trained_rows_ <= t->vocab_.size(),
             "{}: inconsistent task metadata (max_length {}, {} labels, majority label '{}', trained_rows {} of a "
             "vocabulary of {})",
             source, options.read.max_length, t->labels_.size(), t->majority_label_, t->trained_rows_,
             t->vocab_.size());
  t->options_ = options;
  const text::Dataset test = text::read_dataset(options.format, options.test, options.read);
  TOPO_CHECK(!test.examples.empty(), "'{}' holds no examples", options.test);
  t->splits_[static_cast<int>(Split::Test)] = encode_split(test, t->vocab_, t->labels_);
  t->stats_[static_cast<int>(Split::Test)] = test.stats;
  return t;
}

std::shared_ptr<models::SequenceModel> TextClassification::make_model(std::shared_ptr<models::SequenceEncoder> encoder,
                                                                      const models::HeadOptions& head) const {
  if (pairs_) return std::make_shared<models::PairClassifier>(std::move(encoder), labels_.size(), head);
  return std::make_shared<models::SequenceClassifier>(std::move(encoder), labels_.size(), head);
}

std::vector<std::vector<std::int64_t>> TextClassification::epoch_batches(std::int64_t batch, std::uint64_t seed,
                                                                         std::int64_t epoch) const {
  // Length buckets: sentences of similar length share a batch (the dense baseline pads to the longest; the
  // graph models are indifferent), the batch order is still shuffled.
  const EncodedSplit& train = split_(Split::Train);
  std::vector<std::int64_t> lengths(train.ids.size());
  for (std::size_t i = 0; i < lengths.size(); ++i)
    lengths[i] = static_cast<std::int64_t>(train.ids[i].size() + (pairs_ ? train.ids2[i].size() : 0));
  return text::length_bucketed_batches(lengths, batch, seed, epoch);
}

TaskBatch TextClassification::batch(Split split, const std::vector<std::int64_t>& indices) const {
  const EncodedSplit& data = split_(split);
  TOPO_CHECK(!indices.empty(), "classify: empty batch");
  TaskBatch out;
  std::vector<std::int64_t> ids, labels;
  for (std::int64_t i : indices) {
    TOPO_CHECK(i >= 0 && i < data.size(), "classify: example {} out of range for the {} split of {}", i,
               split_name(split), data.size());
    const auto& sentence = data.ids[static_cast<std::size_t>(i)];
    out.inputs.lengths.push_back(static_cast<std::int64_t>(sentence.size()));
    ids.insert(ids.end(), sentence.begin(), sentence.end());
    labels.push_back(data.labels[static_cast<std::size_t>(i)]);
  }
  // Pairs: the second sentences follow as sequences of their own, in the same order (one batched graph).
  if (pairs_)
    for (std::int64_t i : indices) {
      const auto& second = data.ids2[static_cast<std::size_t>(i)];
      out.inputs.lengths.push_back(static_cast<std::int64_t>(second.size()));
      ids.insert(ids.end(), second.begin(), second.end());
    }
  out.inputs.token_ids = Tensor::from_vector(ids, {static_cast<std::int64_t>(ids.size())});
  out.targets = Tensor::from_vector(labels, {static_cast<std::int64_t>(labels.size())});
  return out;
}

nn::Var TextClassification::loss(const nn::Var& output, const Tensor& targets) const {
  return nn::cross_entropy(output, targets);
}

Evaluation TextClassification::evaluate(models::SequenceModel& model, Split split, Device device) const {
  using Clock = std::chrono::steady_clock;
  const EncodedSplit& data = split_(split);
  TOPO_CHECK(data.size() > 0, "classify: the {} split is empty", split_name(split));
  const bool was_training = model.is_training();
  model.eval();
  nn::NoGradGuard no_grad;
  std::int64_t correct = 0;
  double loss_sum = 0.0, forward_seconds = 0.0;
  const auto batches = text::sequential_batches(data.size(), options_.eval_batch);
  for (const auto& indices : batches) {
    const TaskBatch b = batch(split, indices).to(device);
    const auto t0 = Clock::now();
    const nn::Var logits = model.forward(b.inputs);
    const std::vector<float> out = logits.data().to(Device::cpu()).to_vector<float>();  // waits for the device
    forward_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    const float batch_loss = nn::cross_entropy(logits, b.targets).item();
    loss_sum += double(batch_loss) * double(indices.size());
    const std::int64_t classes = labels_.size();
    TOPO_CHECK(static_cast<std::int64_t>(out.size()) == classes * static_cast<std::int64_t>(indices.size()),
               "evaluate: model gives {} outputs for {} examples of {} classes", out.size(), indices.size(), classes);
    for (std::size_t r = 0; r < indices.size(); ++r) {
      const float* row = out.data() + r * static_cast<std::size_t>(classes);
      const auto predicted = std::max_element(row, row + classes) - row;
      correct += predicted == data.labels[static_cast<std::size_t>(indices[r])];
    }
  }
  model.train(was_training);
  Evaluation e;
  e.metric = double(correct) / double(data.size());
  e.values = {{"acc", e.metric},
              {"loss", loss_sum / double(data.size())},
              {"ms_per_batch", 1e3 * forward_seconds / double(batches.size())},
              {"batch", options_.eval_batch},
              {"examples", data.size()}};
  return e;
}

nlohmann::json TextClassification::baseline(Split split) const {
  const EncodedSplit& data = split_(split);
  const std::int64_t majority = labels_.id(majority_label_);
  const auto hits = std::count(data.labels.begin(), data.labels.end(), majority);
  return {{"majority_acc", data.size() > 0 ? double(hits) / double(data.size()) : 0.0},
          {"majority_label", majority_label_},
          {"baseline", "always predict the training set's most frequent label"}};
}

nlohmann::json TextClassification::metadata() const {
  nlohmann::json data;
  for (Split s : {Split::Train, Split::Dev, Split::Test})
    if (size(s) > 0) data[split_name(s)] = read_stats_json(read_stats(s));
  return {{"vocabulary", vocab_.to_json()},
          {"labels", labels_.to_json()},
          {"majority_label", majority_label_},
          {"max_length", options_.read.max_length},
          {"format", options_.format},
          {"read", read_options_json(options_.read)},
          {"vocab_size", vocab_.size()},
          {"pairs", pairs_},
          {"embedding_dim", embedding_dim_},
          {"trained_rows", trained_rows_},
          {"vectors", vectors_report()},
          {"data", data}};
}

}  // namespace topo::apps
