#include "nn/weight_average.hpp"

#include <algorithm>

#include "kernels/dense/optim_step.hpp"
#include "kernels/error.hpp"

namespace topo::nn {

WeightAverage::WeightAverage(const std::vector<std::pair<std::string, Var>>& named, float decay) : decay_(decay) {
  TOPO_CHECK(decay >= 0.f && decay < 1.f, "weight average: decay must be in [0, 1), got {}", decay);
  for (const auto& [name, v] : named) {
    if (!v.requires_grad()) continue;
    params_.push_back(v);
    averages_.emplace_back(name, v.data().clone());
  }
}

void WeightAverage::update() {
  TOPO_CHECK(!swapped_, "weight average: update() while the averages are in the parameters (swap back first)");
  const double n = static_cast<double>(updates_);
  const double decay = std::min(static_cast<double>(decay_), (1.0 + n) / (10.0 + n));
  const float weight = static_cast<float>(1.0 - decay);
  for (std::size_t i = 0; i < params_.size(); ++i) ema_step(averages_[i].second, params_[i].data(), weight);
  ++updates_;
}

void WeightAverage::swap() {
  for (std::size_t i = 0; i < params_.size(); ++i) {
    Tensor live = params_[i].data();  // shares the parameter's storage
    const Tensor kept = live.clone();
    live.copy_from(averages_[i].second);
    averages_[i].second.copy_from(kept);
  }
  swapped_ = !swapped_;
}

void WeightAverage::set_updates(std::int64_t n) {
  TOPO_CHECK(n >= 0, "weight average: updates must be >= 0, got {}", n);
  updates_ = n;
}

}  // namespace topo::nn
