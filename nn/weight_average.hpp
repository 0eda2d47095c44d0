#pragma once
// An exponential moving average of a model's trainable parameters (Polyak averaging: PyTorch's
// torch.optim.swa_utils.AveragedModel with get_ema_multi_avg_fn, timm's ModelEmaV2). The training loop
// updates it after each optimizer step and evaluates with the averages swapped into the parameters:
//
//   WeightAverage average(model.named_parameters(), 0.999f);
//   opt.step(); average.update();
//   { AveragesInScope in(average); evaluate(model); }   // the live parameters come back at scope end
//
// Checkpoints hold it as "average/<name>" tensors (nn/checkpoint.hpp), so a resumed run continues the same
// averages bit for bit. Parameters that do not require a gradient (frozen vectors) are not averaged.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nn/var.hpp"

namespace topo::nn {

class WeightAverage {
 public:
  // `named`: the model's parameters by name (Module::named_parameters); `decay` in [0, 1).
  WeightAverage(const std::vector<std::pair<std::string, Var>>& named, float decay);

  // After an optimizer step: average += w * (param - average) with w = 1 - min(decay, (1 + n) / (10 + n)) at
  // the n-th update (n from 0; TensorFlow's ExponentialMovingAverage with num_updates): early averages follow
  // the parameters closely instead of keeping the random initialisation for ~1 / (1 - decay) steps.
  void update();
  // Exchanges the averages and the parameters' values (twice: as before). Parameters keep their storage.
  void swap();
  bool swapped() const { return swapped_; }

  float decay() const { return decay_; }
  std::int64_t updates() const { return updates_; }
  void set_updates(std::int64_t n);
  // ("<parameter name>", average) in named_parameters order; checkpoints read and restore these in place.
  const std::vector<std::pair<std::string, Tensor>>& named_averages() const { return averages_; }

 private:
  std::vector<Var> params_;
  std::vector<std::pair<std::string, Tensor>> averages_;
  float decay_;
  std::int64_t updates_ = 0;
  bool swapped_ = false;
};

// The averages in the parameters for a scope (an evaluation, a best-model save), the live values back at its end.
class AveragesInScope {
 public:
  explicit AveragesInScope(WeightAverage* average) : average_(average) {
    if (average_) average_->swap();
  }
  ~AveragesInScope() {
    if (average_) average_->swap();
  }
  AveragesInScope(const AveragesInScope&) = delete;
  AveragesInScope& operator=(const AveragesInScope&) = delete;

 private:
  WeightAverage* average_;
};

}  // namespace topo::nn
