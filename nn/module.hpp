#pragma once
// topo::nn::Module: the PyTorch-style container for parameters and submodules.
//
// No reflection: a module registers its parameters and children in its constructor, e.g.
//   struct Block : Module {
//     std::shared_ptr<Linear> q;
//     Var scale;
//     Block() { q = register_module("q", std::make_shared<Linear>(8, 8));
//               scale = register_parameter("scale", {8}, init::InitSpec::ones()); }
//   };
// Names are hierarchical in registration order ("layers.0.attn.q.weight"), and that order is also the
// parameter index that reset_parameters(seed) derives each parameter's seed from, so a model built
// twice and reset with one seed is identical on any device.
//
// Modules are held by shared_ptr (children are shared with the parent's member fields) and are not
// copyable: copying would silently share or split the parameters.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/init.hpp"
#include "nn/var.hpp"

namespace topo::nn {

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // All parameters of this module and its descendants, depth first in registration order
  // (frozen ones included, as in PyTorch). A submodule registered under two names (tied weights, e.g. an
  // input embedding reused as the output projection) has its parameters listed once, under the first
  // name, so optimizers step them once and checkpoints store them once.
  std::vector<Var> parameters() const;
  std::vector<std::pair<std::string, Var>> named_parameters() const;
  // Direct children, and all descendants with their full names (this module itself excluded).
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& children() const { return children_; }
  std::vector<std::pair<std::string, Module*>> named_modules() const;
  // Total number of parameter elements (only trainable ones when trainable_only).
  std::int64_t num_parameters(bool trainable_only = false) const;

  // Mode, propagated to every descendant (dropout consults it).
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Moves every parameter's data to `device` in place (Var::set_data); gradients are dropped.
  void to(Device device);
  // Forgets every parameter's gradient.
  void zero_grad();
  // Re-draws every parameter whose InitSpec is not Keep, parameter i (named_parameters order, continuations
  // not counted) from init::derive_seed(seed, i), on the parameter's current device; then every module's
  // after_reset().
  void reset_parameters(std::uint64_t seed);
  // The spec a parameter was registered with, by full name; throws naming it when absent.
  init::InitSpec init_spec(const std::string& name) const;

 protected:
  // Runs on every module of the tree after reset_parameters has drawn the parameters: a module whose
  // initial values are partly given (nn::Embedding::with_pretrained_rows) writes them back here.
  virtual void after_reset() {}
  // Registers a parameter initialised per `spec` (seeded by derive_seed(0, local index) until the owner
  // calls reset_parameters) and returns the handle to keep in a member.
  Var register_parameter(const std::string& name, const Shape& shape, const init::InitSpec& spec,
                         bool requires_grad = true, Device device = Device::cpu());
  // Registers given data (float32); its spec is Keep unless one is passed.
  Var register_parameter(const std::string& name, Tensor data, bool requires_grad = true,
                         const init::InitSpec& spec = init::InitSpec::keep());
  // Registers `rows` more rows of the parameter registered just before (one table split in two, nn::Embedding's
  // frozen tail): drawn as that table's rows past its own, from its spec and seed, so a split table holds the
  // values the whole one would and takes no seed index of its own (every later parameter draws as before).
  Var register_continuation(const std::string& name, std::int64_t rows, bool requires_grad);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }

 private:
  struct Param {
    std::string name;
    Var var;
    init::InitSpec spec;
    bool continuation = false;  // register_continuation: the previous parameter's table, continued
  };
  std::vector<Param> params_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;

  void check_new_name(const std::string& name) const;
  void add_child(const std::string& name, std::shared_ptr<Module> module);
  template <class F>
  void visit_params(const std::string& prefix, F&& f) const;  // each shared parameter once
  template <class F>
  void walk_params(const std::string& prefix, F&& f) const;  // every registration
};

// An indexed list of modules named "0", "1", ... (for layer stacks: "layers.3.ffn.weight").
class ModuleList : public Module {
 public:
  template <class M>
  std::shared_ptr<M> push_back(std::shared_ptr<M> module) {
    items_.push_back(module);
    return register_module(std::to_string(items_.size() - 1), std::move(module));
  }
  std::size_t size() const { return items_.size(); }
  const std::shared_ptr<Module>& operator[](std::size_t i) const { return items_.at(i); }
  // The i-th module as its concrete type (throws when it is another type).
  template <class M>
  std::shared_ptr<M> at(std::size_t i) const {
    auto m = std::dynamic_pointer_cast<M>(items_.at(i));
    if (!m) throw_wrong_type(i);
    return m;
  }

 private:
  std::vector<std::shared_ptr<Module>> items_;
  [[noreturn]] void throw_wrong_type(std::size_t i) const;
};

}  // namespace topo::nn
