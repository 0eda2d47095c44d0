#pragma once
// Optimizers over parameter groups: SGD (momentum), Adam (optional L2 decay, as the Star-Transformer
// authors' 1e-5..5e-5) and AdamW (decoupled decay). Each step is one fused in-place kernel per parameter
// (kernels/dense/optim_step.hpp). Per-parameter state (buffers + step count) is exposed for checkpoints.
//
//   auto groups = split_decay_groups(model.named_parameters(), 0.01f);  // no decay on biases / norms
//   AdamW opt(groups, {.lr = 1e-3f});
//   loss.backward(); clip_grad_norm(model.parameters(), 1.f); opt.step(); opt.zero_grad();
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nn/var.hpp"

namespace topo::nn {

struct ParamGroup {
  std::vector<Var> params;
  float weight_decay = 0.f;
  float lr_scale = 1.f;  // this group's lr = optimizer lr * lr_scale
  std::string name;      // for messages and checkpoints ("decay", "no_decay")
};

// Splits named parameters into {"decay", "no_decay"} groups (in that order, either possibly empty):
// no decay for 1-D parameters, names ending in "bias", and names containing "norm" (LayerNorm weights
// registered as "...norm.weight" / "ln.weight" are 1-D anyway). Frozen parameters are left out. `only`
// (non-empty): decay only the weights whose names contain it (PyG's and Kipf's GCN decay the first layer only:
// "conv1."); naming no weight is an error that lists the names.
std::vector<ParamGroup> split_decay_groups(const std::vector<std::pair<std::string, Var>>& named, float weight_decay,
                                           const std::string& only = "");

// Moves the parameters `scales` names (by identity) out of their groups: per group and distinct multiplier, a
// group "<name> lr x<scale>" (lr_scale = the group's times it), placed after the groups it came from. Order is
// kept, so one model and one set of scales always give the same groups (a checkpoint's layout). A multiplier of
// 1 leaves its parameter where it is; naming a parameter no group holds, or a negative multiplier, is an error.
std::vector<ParamGroup> split_lr_groups(const std::vector<ParamGroup>& groups,
                                        const std::vector<std::pair<Var, float>>& scales);

// Per-parameter state: a step count and named buffers shaped like the parameter.
struct ParamState {
  std::int64_t step = 0;
  std::vector<Tensor> buffers;
};

class Optimizer {
 public:
  Optimizer(std::vector<ParamGroup> groups, float lr);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Updates every parameter that has a gradient (others are skipped and their step does not advance).
  void step();
  // Forgets the gradients of every parameter.
  void zero_grad();

  float lr() const { return lr_; }
  void set_lr(float lr);
  const std::vector<ParamGroup>& groups() const { return groups_; }
  // Names of the buffers each ParamState holds ("exp_avg", "exp_avg_sq" for Adam).
  virtual std::vector<std::string> buffer_names() const = 0;
  virtual std::string kind() const = 0;
  // state()[g][i] belongs to groups()[g].params[i]. Buffers are allocated at construction (zeros on the
  // parameter's device), so checkpoints can restore into them before the first step; build the optimizer
  // after Module::to(device) (a step with state on another device than its parameter is an error).
  std::vector<std::vector<ParamState>>& state() { return state_; }
  const std::vector<std::vector<ParamState>>& state() const { return state_; }

 protected:
  virtual void update(const ParamGroup& group, Var& param, ParamState& state) = 0;
  std::vector<ParamGroup> groups_;
  std::vector<std::vector<ParamState>> state_;
  float lr_;
  void allocate_state(std::size_t buffers_per_param);
};

struct SGDOptions {
  float lr = 1e-2f;
  float momentum = 0.f;
};
class SGD : public Optimizer {
 public:
  SGD(std::vector<ParamGroup> groups, const SGDOptions& options);
  SGD(const std::vector<Var>& params, const SGDOptions& options, float weight_decay = 0.f);
  std::vector<std::string> buffer_names() const override;
  std::string kind() const override { return "sgd"; }

 private:
  SGDOptions opt_;
  void update(const ParamGroup& group, Var& param, ParamState& state) override;
};

struct AdamOptions {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
};
// Adam; a group's weight_decay is L2 (added to the gradient, so it passes through the moments).
class Adam : public Optimizer {
 public:
  Adam(std::vector<ParamGroup> groups, const AdamOptions& options);
  Adam(const std::vector<Var>& params, const AdamOptions& options, float weight_decay = 0.f);
  std::vector<std::string> buffer_names() const override;
  std::string kind() const override { return decoupled_ ? "adamw" : "adam"; }
  const AdamOptions& options() const { return opt_; }

 protected:
  Adam(std::vector<ParamGroup> groups, const AdamOptions& options, bool decoupled);

 private:
  AdamOptions opt_;
  bool decoupled_;
  void update(const ParamGroup& group, Var& param, ParamState& state) override;
};

// AdamW (Loshchilov & Hutter): a group's weight_decay shrinks the parameter directly, p *= 1 - lr*wd.
class AdamW : public Adam {
 public:
  AdamW(std::vector<ParamGroup> groups, const AdamOptions& options) : Adam(std::move(groups), options, true) {}
  AdamW(const std::vector<Var>& params, const AdamOptions& options, float weight_decay = 0.01f);
};

// Scales all gradients so their joint L2 norm is at most max_norm (coefficient max_norm / (norm + 1e-6),
// as PyTorch) and returns the norm before clipping. Parameters without a gradient are skipped.
float clip_grad_norm(const std::vector<Var>& params, float max_norm);

}  // namespace topo::nn
