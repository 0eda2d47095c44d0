// Optimizers: bookkeeping on the host, one fused kernel per parameter per step (kernels/dense/optim_step).
#include "nn/optim.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include <fmt/ranges.h>

#include "kernels/dense/binary.hpp"
#include "kernels/dense/optim_step.hpp"
#include "kernels/dense/reduce.hpp"

namespace topo::nn {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<ParamGroup> single_group(const std::vector<Var>& params, float weight_decay) {
  ParamGroup g;
  g.params = params;
  g.weight_decay = weight_decay;
  g.name = "all";
  return {g};
}

}  // namespace

std::vector<ParamGroup> split_decay_groups(const std::vector<std::pair<std::string, Var>>& named, float weight_decay,
                                           const std::string& only) {
  ParamGroup decay{{}, weight_decay, 1.f, "decay"}, no_decay{{}, 0.f, 1.f, "no_decay"};
  std::vector<std::string> weights;  // the names `only` may pick from
  for (const auto& [name, v] : named) {
    if (!v.requires_grad()) continue;
    const bool skip = v.ndim() <= 1 || ends_with(name, "bias") || name.find("norm") != std::string::npos;
    if (!skip) weights.push_back(name);
    const bool chosen = only.empty() || name.find(only) != std::string::npos;
    (skip || !chosen ? no_decay : decay).params.push_back(v);
  }
  TOPO_CHECK(only.empty() || !decay.params.empty(), "weight decay only on '{}': no weight's name contains it ({})",
             only, fmt::join(weights, ", "));
  return {decay, no_decay};
}

std::vector<ParamGroup> split_lr_groups(const std::vector<ParamGroup>& groups,
                                        const std::vector<std::pair<Var, float>>& scales) {
  std::vector<ParamGroup> kept, moved;
  std::vector<bool> found(scales.size(), false);
  for (const ParamGroup& g : groups) {
    ParamGroup stay = g;
    stay.params.clear();
    std::vector<ParamGroup> split;  // one per distinct multiplier, in the order first met
    for (const Var& p : g.params) {
      float scale = 1.f;
      for (std::size_t i = 0; i < scales.size(); ++i)
        if (scales[i].first.same(p)) scale = scales[i].second, found[i] = true;
      TOPO_CHECK(scale >= 0.f && std::isfinite(scale), "optimizer: lr multiplier {} for a parameter of group '{}'",
                 scale, g.name);
      if (scale == 1.f) {
        stay.params.push_back(p);
        continue;
      }
      auto it = std::find_if(split.begin(), split.end(),
                             [&](const ParamGroup& s) { return s.lr_scale == g.lr_scale * scale; });
      if (it == split.end()) {
        split.push_back({{}, g.weight_decay, g.lr_scale * scale, fmt::format("{} lr x{:.4g}", g.name, scale)});
        it = split.end() - 1;
      }
      it->params.push_back(p);
    }
    kept.push_back(std::move(stay));
    for (ParamGroup& s : split) moved.push_back(std::move(s));
  }
  for (std::size_t i = 0; i < scales.size(); ++i)
    TOPO_CHECK(found[i], "optimizer: an lr multiplier names a parameter ({}) that no group holds",
               shape_str(scales[i].first.shape()));
  for (ParamGroup& s : moved) kept.push_back(std::move(s));
  return kept;
}

Optimizer::Optimizer(std::vector<ParamGroup> groups, float lr) : groups_(std::move(groups)), lr_(lr) {
  TOPO_CHECK(std::isfinite(lr) && lr >= 0.f, "optimizer: lr must be finite and >= 0, got {}", lr);
  std::unordered_set<const VarImpl*> seen;  // a parameter in two places would be stepped twice
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    for (std::size_t i = 0; i < groups_[g].params.size(); ++i) {
      const Var& p = groups_[g].params[i];
      TOPO_CHECK(p.defined() && p.requires_grad(),
                 "optimizer: group {} ('{}') param {} is undefined or does not require grad", g,
                 groups_[g].name, i);
      check_dtype(p.data(), DType::F32, "optimizer", "param");
      TOPO_CHECK(seen.insert(p.impl().get()).second, "optimizer: group {} ('{}') param {} {} appears twice", g,
                 groups_[g].name, i, shape_str(p.shape()));
    }
    TOPO_CHECK(groups_[g].lr_scale >= 0.f, "optimizer: group {} has negative lr_scale {}", g, groups_[g].lr_scale);
    TOPO_CHECK(groups_[g].weight_decay >= 0.f, "optimizer: group {} has negative weight_decay {}", g,
               groups_[g].weight_decay);
  }
}

void Optimizer::allocate_state(std::size_t buffers_per_param) {
  state_.assign(groups_.size(), {});
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    for (const Var& p : groups_[g].params) {
      ParamState s;
      for (std::size_t b = 0; b < buffers_per_param; ++b)
        s.buffers.push_back(Tensor::zeros(p.shape(), DType::F32, p.device()));
      state_[g].push_back(std::move(s));
    }
  }
}

void Optimizer::set_lr(float lr) {
  TOPO_CHECK(std::isfinite(lr) && lr >= 0.f, "optimizer: lr must be finite and >= 0, got {}", lr);
  lr_ = lr;
}

void Optimizer::step() {
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    for (std::size_t i = 0; i < groups_[g].params.size(); ++i) {
      Var& p = groups_[g].params[i];
      if (!p.grad().defined()) continue;
      update(groups_[g], p, state_[g][i]);
    }
  }
}

void Optimizer::zero_grad() {
  for (ParamGroup& g : groups_)
    for (Var& p : g.params) p.zero_grad();
}

// ---- SGD

SGD::SGD(std::vector<ParamGroup> groups, const SGDOptions& options)
    : Optimizer(std::move(groups), options.lr), opt_(options) {
  TOPO_CHECK(options.momentum >= 0.f && options.momentum < 1.f, "SGD: momentum must be in [0, 1), got {}",
             options.momentum);
  allocate_state(options.momentum != 0.f ? 1 : 0);
}

SGD::SGD(const std::vector<Var>& params, const SGDOptions& options, float weight_decay)
    : SGD(single_group(params, weight_decay), options) {}

std::vector<std::string> SGD::buffer_names() const {
  if (opt_.momentum != 0.f) return {"momentum_buffer"};
  return {};
}

void SGD::update(const ParamGroup& group, Var& param, ParamState& state) {
  SgdStepConfig c;
  c.lr = lr_ * group.lr_scale;
  c.momentum = opt_.momentum;
  c.weight_decay = group.weight_decay;
  c.first = state.step == 0;
  Tensor p = param.data();  // shares storage: updated in place
  Tensor none;
  sgd_step(p, param.grad(), state.buffers.empty() ? none : state.buffers[0], c);
  ++state.step;
}

// ---- Adam / AdamW

Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& options, bool decoupled)
    : Optimizer(std::move(groups), options.lr), opt_(options), decoupled_(decoupled) {
  TOPO_CHECK(options.beta1 >= 0.f && options.beta1 < 1.f && options.beta2 >= 0.f && options.beta2 < 1.f,
             "Adam: betas must be in [0, 1), got ({}, {})", options.beta1, options.beta2);
  TOPO_CHECK(options.eps > 0.f, "Adam: eps must be positive, got {}", options.eps);
  allocate_state(2);
}

Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& options) : Adam(std::move(groups), options, false) {}

Adam::Adam(const std::vector<Var>& params, const AdamOptions& options, float weight_decay)
    : Adam(single_group(params, weight_decay), options, false) {}

AdamW::AdamW(const std::vector<Var>& params, const AdamOptions& options, float weight_decay)
    : Adam(single_group(params, weight_decay), options, true) {}

std::vector<std::string> Adam::buffer_names() const { return {"exp_avg", "exp_avg_sq"}; }

void Adam::update(const ParamGroup& group, Var& param, ParamState& state) {
  ++state.step;
  AdamStepConfig c;
  c.lr = lr_ * group.lr_scale;
  c.beta1 = opt_.beta1;
  c.beta2 = opt_.beta2;
  c.eps = opt_.eps;
  c.weight_decay = group.weight_decay;
  c.decoupled = decoupled_;
  // 1 - beta^t in double: for beta2 = 0.999 and small t the float power loses digits.
  const double t = static_cast<double>(state.step);
  c.bias_correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(opt_.beta1), t));
  c.bias_correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(opt_.beta2), t));
  Tensor p = param.data();
  adam_step(p, param.grad(), state.buffers[0], state.buffers[1], c);
}

// ---- clipping

float clip_grad_norm(const std::vector<Var>& params, float max_norm) {
  TOPO_CHECK(max_norm > 0.f && std::isfinite(max_norm), "clip_grad_norm: max_norm must be positive, got {}",
             max_norm);
  double total_sq = 0.0;
  for (const Var& p : params) {
    if (!p.defined() || !p.grad().defined()) continue;
    const Tensor& g = p.grad();
    total_sq += static_cast<double>(sum_all(mul(g, g)).item());
  }
  const float total = static_cast<float>(std::sqrt(total_sq));
  const float coef = max_norm / (total + 1e-6f);
  if (coef < 1.f) {
    for (const Var& p : params) {
      if (!p.defined() || !p.grad().defined()) continue;
      // A fresh tensor, not an in-place scale: the tape may have handed one gradient tensor to several
      // parameters (an add's backward passes its input gradient through), which would scale it twice.
      Var handle = p;
      handle.set_grad(mul_scalar(p.grad(), coef));
    }
  }
  return total;
}

}  // namespace topo::nn
