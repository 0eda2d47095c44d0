#include "apps/tasks/masked_sum.hpp"

#include "apps/tasks/rng.hpp"
#include "kernels/error.hpp"
#include "nn/ops.hpp"

namespace topo::apps {

void MaskedSumSpec::validate() const {
  TOPO_CHECK(d >= 2, "masked-sum: d = {} must be >= 2 (one mask feature plus at least one value)", d);
  TOPO_CHECK(n >= 1, "masked-sum: n = {} must be >= 1", n);
  TOPO_CHECK(n <= (std::int64_t{1} << 31), "masked-sum: n = {} is too long", n);
  TOPO_CHECK(n_min >= 0 && n_min <= n, "masked-sum: n_min = {} must be in [0, n = {}] (0: fixed length)", n_min, n);
  const std::int64_t shortest = n_min > 0 ? n_min : n;
  TOPO_CHECK(k >= 1 && k <= shortest, "masked-sum: k = {} must be in [1, {}] (the shortest sequence length)", k,
             shortest);
}

MaskedSumTask::MaskedSumTask(const MaskedSumSpec& spec) : spec_(spec) { spec_.validate(); }

MaskedSumExample MaskedSumTask::example(Split split, std::int64_t index) const {
  TOPO_CHECK(index >= 0, "masked-sum: example index {} must be >= 0", index);
  SplitMix64 rng({spec_.seed, static_cast<std::uint64_t>(split), static_cast<std::uint64_t>(index)});
  const std::int64_t d = spec_.d;
  MaskedSumExample ex;
  ex.length = spec_.n_min > 0 ? spec_.n_min + rng.below(spec_.n - spec_.n_min + 1) : spec_.n;
  ex.x.assign(static_cast<std::size_t>(ex.length * d), 0.f);
  for (std::int64_t i = 0; i < ex.length; ++i)
    for (std::int64_t f = 1; f < d; ++f) ex.x[static_cast<std::size_t>(i * d + f)] = rng.uniform();
  // Exactly k distinct masked positions: the first k of a partial Fisher-Yates shuffle.
  std::vector<std::int64_t> positions(static_cast<std::size_t>(ex.length));
  for (std::int64_t i = 0; i < ex.length; ++i) positions[static_cast<std::size_t>(i)] = i;
  for (std::int64_t j = 0; j < spec_.k; ++j) {
    const std::int64_t pick = j + rng.below(ex.length - j);
    std::swap(positions[static_cast<std::size_t>(j)], positions[static_cast<std::size_t>(pick)]);
    ex.x[static_cast<std::size_t>(positions[static_cast<std::size_t>(j)] * d)] = 1.f;
  }
  // Target summed in double, in position order, then rounded once.
  std::vector<double> y(static_cast<std::size_t>(d - 1), 0.0);
  for (std::int64_t i = 0; i < ex.length; ++i) {
    if (ex.x[static_cast<std::size_t>(i * d)] == 0.f) continue;
    for (std::int64_t f = 1; f < d; ++f) y[static_cast<std::size_t>(f - 1)] += ex.x[static_cast<std::size_t>(i * d + f)];
  }
  ex.y.assign(y.begin(), y.end());
  return ex;
}

TaskBatch MaskedSumTask::batch(Split split, const std::vector<std::int64_t>& indices) const {
  TOPO_CHECK(!indices.empty(), "masked-sum: empty batch");
  const std::int64_t d = spec_.d;
  TaskBatch out;
  std::vector<float> x, y;
  x.reserve(indices.size() * static_cast<std::size_t>(spec_.n * d));
  y.reserve(indices.size() * static_cast<std::size_t>(d - 1));
  for (std::int64_t index : indices) {
    MaskedSumExample ex = example(split, index);
    out.inputs.lengths.push_back(ex.length);
    x.insert(x.end(), ex.x.begin(), ex.x.end());
    y.insert(y.end(), ex.y.begin(), ex.y.end());
  }
  const auto total = static_cast<std::int64_t>(x.size()) / d;
  out.inputs.features = Tensor::from_vector(x, {total, d});
  out.targets = Tensor::from_vector(y, {static_cast<std::int64_t>(indices.size()), d - 1});
  return out;
}

TaskBatch MaskedSumTask::range(Split split, std::int64_t begin, std::int64_t end) const {
  TOPO_CHECK(0 <= begin && begin < end, "masked-sum: bad example range [{}, {})", begin, end);
  std::vector<std::int64_t> indices;
  for (std::int64_t i = begin; i < end; ++i) indices.push_back(i);
  return batch(split, indices);
}

double MaskedSumTask::constant_guess_mse(Split split, std::int64_t count) const {
  TOPO_CHECK(count >= 1, "masked-sum: baseline over {} examples (need >= 1)", count);
  const double guess = constant_guess();
  double total = 0.0;
  for (std::int64_t i = 0; i < count; ++i) {
    const MaskedSumExample ex = example(split, i);
    for (float t : ex.y) total += (t - guess) * (t - guess);
  }
  return total / static_cast<double>(count * (spec_.d - 1));
}

double evaluate_mse(models::SequenceModel& model, const MaskedSumTask& task, Split split, std::int64_t count,
                    std::int64_t batch, Device device) {
  const bool was_training = model.is_training();
  model.eval();
  nn::NoGradGuard no_grad;
  double sum = 0.0;
  std::int64_t elements = 0;
  for (std::int64_t begin = 0; begin < count; begin += batch) {
    const TaskBatch b = task.range(split, begin, std::min(count, begin + batch));
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

MaskedSumRegression::MaskedSumRegression(const MaskedSumSpec& spec, Sizes sizes, std::int64_t eval_batch)
    : data_(spec), sizes_(sizes), eval_batch_(eval_batch) {
  TOPO_CHECK(sizes.train >= 1 && sizes.dev >= 1 && sizes.test >= 1,
             "masked-sum: split sizes train {} / dev {} / test {} must all be >= 1", sizes.train, sizes.dev,
             sizes.test);
  TOPO_CHECK(eval_batch >= 1, "masked-sum: evaluation batch {} must be >= 1", eval_batch);
}

std::shared_ptr<models::SequenceModel> MaskedSumRegression::make_model(
    std::shared_ptr<models::SequenceEncoder> encoder, const models::HeadOptions& head) const {
  return std::make_shared<models::SequenceRegressor>(std::move(encoder), data_.spec().out_dim(), head);
}

std::int64_t MaskedSumRegression::size(Split split) const {
  switch (split) {
    case Split::Train: return sizes_.train;
    case Split::Dev: return sizes_.dev;
    case Split::Test: return sizes_.test;
  }
  return 0;
}

nn::Var MaskedSumRegression::loss(const nn::Var& output, const Tensor& targets) const {
  return nn::mse(output, nn::Var(targets));
}

Evaluation MaskedSumRegression::evaluate(models::SequenceModel& model, Split split, Device device) const {
  Evaluation e;
  e.metric = evaluate_mse(model, data_, split, size(split), eval_batch_, device);
  e.values["mse"] = e.metric;
  return e;
}

nlohmann::json MaskedSumRegression::baseline(Split split) const {
  return {{"baseline_mse", data_.constant_guess_mse(split, size(split))},
          {"baseline", "always guess k/2 per output, measured on the " + split_name(split) + " set"}};
}

}  // namespace topo::apps
