#include "apps/tasks/generated_regression.hpp"

#include <algorithm>

#include "kernels/error.hpp"
#include "nn/ops.hpp"

namespace topo::apps {

TaskBatch ExampleGenerator::batch(Split split, const std::vector<std::int64_t>& indices) const {
  const std::int64_t d = input_dim(), out = output_dim();
  TOPO_CHECK(!indices.empty(), "generated batch: empty batch");
  TaskBatch b;
  std::vector<float> x, y;
  x.reserve(indices.size() * static_cast<std::size_t>(max_length() * d));
  y.reserve(indices.size() * static_cast<std::size_t>(out));
  for (std::int64_t index : indices) {
    GeneratedExample ex = example(split, index);
    b.inputs.lengths.push_back(ex.length);
    x.insert(x.end(), ex.x.begin(), ex.x.end());
    y.insert(y.end(), ex.y.begin(), ex.y.end());
  }
  const auto total = static_cast<std::int64_t>(x.size()) / d;
  b.inputs.features = Tensor::from_vector(x, {total, d});
  b.targets = Tensor::from_vector(y, {static_cast<std::int64_t>(indices.size()), out});
  return b;
}

TaskBatch ExampleGenerator::range(Split split, std::int64_t begin, std::int64_t end) const {
  TOPO_CHECK(0 <= begin && begin < end, "generated batch: bad example range [{}, {})", begin, end);
  std::vector<std::int64_t> indices;
  for (std::int64_t i = begin; i < end; ++i) indices.push_back(i);
  return batch(split, indices);
}

double ExampleGenerator::constant_guess_mse(Split split, std::int64_t count) const {
  TOPO_CHECK(count >= 1, "baseline over {} examples (need >= 1)", count);
  const double guess = constant_guess();
  double total = 0.0;
  for (std::int64_t i = 0; i < count; ++i) {
    const GeneratedExample ex = example(split, i);
    for (float t : ex.y) total += (t - guess) * (t - guess);
  }
  return total / static_cast<double>(count * output_dim());
}

double evaluate_mse(models::SequenceModel& model, const ExampleGenerator& generator, Split split, std::int64_t count,
                    std::int64_t batch, Device device) {
  const bool was_training = model.is_training();
  model.eval();
  nn::NoGradGuard no_grad;
  double sum = 0.0;
  std::int64_t elements = 0;
  for (std::int64_t begin = 0; begin < count; begin += batch) {
    const TaskBatch b = generator.range(split, begin, std::min(count, begin + batch));
    const std::vector<float> pred = model.forward(b.inputs.to(device)).data().to(Device::cpu()).to_vector<float>();
    const std::vector<float> target = b.targets.to_vector<float>();
    TOPO_CHECK(pred.size() == target.size(), "evaluate: model gives {} outputs for {} targets", pred.size(),
               target.size());
    for (std::size_t i = 0; i < pred.size(); ++i) sum += (double(pred[i]) - target[i]) * (double(pred[i]) - target[i]);
    elements += static_cast<std::int64_t>(pred.size());
  }
  model.train(was_training);
  return sum / static_cast<double>(elements);
}

GeneratedRegression::GeneratedRegression(std::shared_ptr<const ExampleGenerator> generator, Sizes sizes,
                                         std::int64_t eval_batch, std::string name, std::int64_t max_length)
    : generator_(std::move(generator)), sizes_(sizes), eval_batch_(eval_batch), name_(std::move(name)),
      max_length_(max_length) {
  TOPO_CHECK(sizes.train >= 1 && sizes.dev >= 1 && sizes.test >= 1,
             "{}: split sizes train {} / dev {} / test {} must all be >= 1", name_, sizes.train, sizes.dev, sizes.test);
  TOPO_CHECK(eval_batch >= 1, "{}: evaluation batch {} must be >= 1", name_, eval_batch);
}

std::shared_ptr<models::SequenceModel> GeneratedRegression::make_model(std::shared_ptr<models::SequenceEncoder> encoder,
                                                                       const models::HeadOptions& head) const {
  return std::make_shared<models::SequenceRegressor>(std::move(encoder), generator_->output_dim(), head);
}

std::int64_t GeneratedRegression::size(Split split) const {
  switch (split) {
    case Split::Train: return sizes_.train;
    case Split::Dev: return sizes_.dev;
    case Split::Test: return sizes_.test;
  }
  return 0;
}

nn::Var GeneratedRegression::loss(const nn::Var& output, const Tensor& targets) const {
  return nn::mse(output, nn::Var(targets));
}

Evaluation GeneratedRegression::evaluate(models::SequenceModel& model, Split split, Device device) const {
  Evaluation e;
  e.metric = evaluate_mse(model, *generator_, split, size(split), eval_batch_, device);
  e.values["mse"] = e.metric;
  return e;
}

nlohmann::json GeneratedRegression::baseline(Split split) const {
  return {{"baseline_mse", generator_->constant_guess_mse(split, size(split))},
          {"baseline", generator_->constant_guess_name() + ", measured on the " + split_name(split) + " set"}};
}

std::vector<models::Option> generated_task_options() {
  return {{"train_size", 10000, "training examples", {}},
          {"dev_size", 10000, "development examples", {}},
          {"test_size", 10000, "test examples", {}},
          {"max_len", 0, "positions the model accepts beyond the longest generated sequence (0: that length)", {}}};
}

void validate_generated_task(const TaskSettings& settings, std::int64_t longest) {
  for (const char* split : {"train_size", "dev_size", "test_size"}) {
    const auto size = settings.option<std::int64_t>(split);
    if (size < 1) models::fail_invalid_field(split, size, "must be >= 1");
  }
  const auto max_len = settings.option<std::int64_t>("max_len");
  if (max_len < 0) models::fail_invalid_field("max_len", max_len, "must be >= 0 (0: the longest sequence)");
  if (max_len > 0 && longest > max_len)
    models::fail_invalid_field("n", longest, fmt::format("exceeds max_len = {}", max_len));
}

GeneratedRegression::Sizes generated_sizes(const TaskSettings& settings) {
  return {settings.option<std::int64_t>("train_size"), settings.option<std::int64_t>("dev_size"),
          settings.option<std::int64_t>("test_size")};
}

std::int64_t generated_eval_batch(const TaskSettings& settings) {
  return settings.eval_batch > 0 ? settings.eval_batch : std::max<std::int64_t>(settings.batch, 256);
}

}  // namespace topo::apps
