#pragma once
// Regression tasks whose examples are generated (the papers' synthetic probes: masked summation, mirrored
// summation). Every example is a pure function of (seed, split, index) — a counter-based stream per example —
// so the splits are disjoint streams that regenerate identically and any subset can be drawn in any order.
// One Task drives every generator: MSE loss and metric, the generator's constant guess as the baseline.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/tasks/registry.hpp"
#include "apps/tasks/task.hpp"

namespace topo::apps {

struct GeneratedExample {
  std::int64_t length = 0;
  std::vector<float> x;  // [length, input_dim], row-major
  std::vector<float> y;  // [output_dim]
};

class ExampleGenerator {
 public:
  virtual ~ExampleGenerator() = default;
  virtual GeneratedExample example(Split split, std::int64_t index) const = 0;
  virtual std::int64_t input_dim() const = 0;
  virtual std::int64_t output_dim() const = 0;
  virtual std::int64_t max_length() const = 0;
  // The trivial predictor: this value for every output element, and what it is (for result files).
  virtual float constant_guess() const = 0;
  virtual std::string constant_guess_name() const = 0;

  // The examples `indices` of `split`, concatenated without padding: features [total, input_dim] (no token
  // ids), float32 targets [B, output_dim].
  TaskBatch batch(Split split, const std::vector<std::int64_t>& indices) const;
  // The examples [begin, end) of `split`.
  TaskBatch range(Split split, std::int64_t begin, std::int64_t end) const;
  // The constant guess's MSE per output element over examples [0, count) of `split` (measured, so the value
  // reported is the one the model is compared with).
  double constant_guess_mse(Split split, std::int64_t count) const;
};

// Mean squared error of `model` over examples [0, count) of `split`, per output element.
double evaluate_mse(models::SequenceModel& model, const ExampleGenerator& generator, Split split, std::int64_t count,
                    std::int64_t batch, Device device);

class GeneratedRegression : public Task {
 public:
  struct Sizes {
    std::int64_t train = 10000, dev = 10000, test = 10000;
  };
  // `name` prefixes errors ("masked-sum: ..."). max_length > 0: the positions a model must accept, beyond the
  // generator's longest sequence (a model to be evaluated on longer sequences later); 0: the generator's.
  GeneratedRegression(std::shared_ptr<const ExampleGenerator> generator, Sizes sizes, std::int64_t eval_batch,
                      std::string name, std::int64_t max_length = 0);
  const ExampleGenerator& generator() const { return *generator_; }

  std::int64_t input_dim() const override { return generator_->input_dim(); }
  std::int64_t max_length() const override { return max_length_ > 0 ? max_length_ : generator_->max_length(); }
  std::shared_ptr<models::SequenceModel> make_model(std::shared_ptr<models::SequenceEncoder> encoder,
                                                    const models::HeadOptions& head) const override;
  std::int64_t size(Split split) const override;
  TaskBatch batch(Split split, const std::vector<std::int64_t>& indices) const override {
    return generator_->batch(split, indices);
  }
  nn::Var loss(const nn::Var& output, const Tensor& targets) const override;
  std::string metric() const override { return "mse"; }
  bool higher_is_better() const override { return false; }
  Evaluation evaluate(models::SequenceModel& model, Split split, Device device) const override;
  nlohmann::json baseline(Split split) const override;

 private:
  std::shared_ptr<const ExampleGenerator> generator_;
  Sizes sizes_;
  std::int64_t eval_batch_;
  std::string name_;
  std::int64_t max_length_;
};

// The options every generated task declares (train_size, dev_size, test_size, max_len) and their checks
// against the longest sequence `n` the task generates; the sizes and evaluation batch they give.
std::vector<models::Option> generated_task_options();
void validate_generated_task(const TaskSettings& settings, std::int64_t longest);
GeneratedRegression::Sizes generated_sizes(const TaskSettings& settings);
std::int64_t generated_eval_batch(const TaskSettings& settings);  // eval_batch, else max(batch, 256)

}  // namespace topo::apps
