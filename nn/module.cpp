// Module bookkeeping: depth-first walks over the registration-ordered parameter and child lists.
#include "nn/module.hpp"

#include <unordered_set>

namespace topo::nn {

namespace {

// A continuation's values: the rows after the table's `head` rows in one draw of the whole table per `spec`
// from `seed` (the counter-based draw gives the table's own rows first, as it draws them alone).
Tensor continued_rows(const init::InitSpec& spec, std::int64_t head, Shape shape, std::uint64_t seed, Device device) {
  const std::int64_t rows = shape[0];
  shape[0] += head;
  return init::make(spec, shape, seed, device).slice_rows(head, head + rows).clone();
}

}  // namespace

template <class F>
void Module::visit_params(const std::string& prefix, F&& f) const {
  // A parameter shared by two modules (tied weights) is visited once, under its first name, as
  // PyTorch's named_parameters() does: optimizers must not step it twice, nor reset draw it twice.
  std::unordered_set<const VarImpl*> seen;
  walk_params(prefix, [&](const std::string& name, const Param& p) {
    if (seen.insert(p.var.impl().get()).second) f(name, p);
  });
}

template <class F>
void Module::walk_params(const std::string& prefix, F&& f) const {
  for (const Param& p : params_) f(prefix + p.name, p);
  for (const auto& [name, child] : children_) child->walk_params(prefix + name + ".", f);
}

std::vector<std::pair<std::string, Var>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Var>> out;
  visit_params("", [&](const std::string& name, const Param& p) { out.emplace_back(name, p.var); });
  return out;
}

std::vector<Var> Module::parameters() const {
  std::vector<Var> out;
  visit_params("", [&](const std::string&, const Param& p) { out.push_back(p.var); });
  return out;
}

std::vector<std::pair<std::string, Module*>> Module::named_modules() const {
  std::vector<std::pair<std::string, Module*>> out;
  for (const auto& [name, child] : children_) {
    out.emplace_back(name, child.get());
    for (auto& [sub, m] : child->named_modules()) out.emplace_back(name + "." + sub, m);
  }
  return out;
}

std::int64_t Module::num_parameters(bool trainable_only) const {
  std::int64_t n = 0;
  visit_params("", [&](const std::string&, const Param& p) {
    if (!trainable_only || p.var.requires_grad()) n += p.var.numel();
  });
  return n;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

void Module::to(Device device) {
  visit_params("", [&](const std::string&, const Param& p) {
    Var v = p.var;  // handle: shares the impl
    v.zero_grad();
    if (v.device() != device) v.set_data(v.data().to(device));
  });
}

void Module::zero_grad() {
  visit_params("", [&](const std::string&, const Param& p) {
    Var v = p.var;
    v.zero_grad();
  });
}

void Module::reset_parameters(std::uint64_t seed) {
  std::uint64_t index = 0;
  const Param* previous = nullptr;  // the table a continuation continues, and its seed
  std::uint64_t previous_seed = 0;
  visit_params("", [&](const std::string&, const Param& p) {
    Var v = p.var;
    if (p.continuation) {
      TOPO_CHECK(previous != nullptr, "Module::reset_parameters: a continued parameter follows no table");
      if (previous->spec.kind == init::InitSpec::Kind::Keep) return;
      v.zero_grad();
      v.set_data(continued_rows(previous->spec, previous->var.size(0), v.shape(), previous_seed, v.device()));
      return;
    }
    const std::uint64_t i = index++;
    previous = &p;
    previous_seed = init::derive_seed(seed, i);
    if (p.spec.kind == init::InitSpec::Kind::Keep) return;
    v.zero_grad();
    v.set_data(init::make(p.spec, v.shape(), previous_seed, v.device()));
  });
  for (const auto& [name, m] : named_modules()) m->after_reset();
  after_reset();
}

init::InitSpec Module::init_spec(const std::string& name) const {
  const init::InitSpec* found = nullptr;
  visit_params("", [&](const std::string& full, const Param& p) {
    if (full == name) found = &p.spec;
  });
  TOPO_CHECK(found != nullptr, "Module::init_spec: no parameter named '{}'", name);
  return *found;
}

void Module::check_new_name(const std::string& name) const {
  TOPO_CHECK(!name.empty() && name.find('.') == std::string::npos,
             "Module: a parameter or submodule name must be non-empty and dot-free, got '{}'", name);
  for (const Param& p : params_) TOPO_CHECK(p.name != name, "Module: '{}' is already a parameter", name);
  for (const auto& [n, c] : children_) TOPO_CHECK(n != name, "Module: '{}' is already a submodule", name);
}

Var Module::register_parameter(const std::string& name, const Shape& shape, const init::InitSpec& spec,
                               bool requires_grad, Device device) {
  check_new_name(name);
  TOPO_CHECK(spec.kind != init::InitSpec::Kind::Keep,
             "Module: parameter '{}' registered by shape needs an initialiser, not 'keep'", name);
  Var v(init::make(spec, shape, init::derive_seed(0, params_.size()), device), requires_grad);
  params_.push_back({name, v, spec});
  return v;
}

Var Module::register_continuation(const std::string& name, std::int64_t rows, bool requires_grad) {
  check_new_name(name);
  TOPO_CHECK(!params_.empty() && !params_.back().continuation && params_.back().var.ndim() >= 1 && rows > 0,
             "Module: parameter '{}' continues no table (it must follow a parameter of this module, with rows > 0)",
             name);
  const Param& table = params_.back();
  Shape shape = table.var.shape();
  shape[0] = rows;
  // Seeded as register_parameter seeded the table (its local index) until the owner calls reset_parameters.
  Tensor data = table.spec.kind == init::InitSpec::Kind::Keep
                    ? Tensor::zeros(shape, table.var.dtype(), table.var.device())
                    : continued_rows(table.spec, table.var.size(0), shape, init::derive_seed(0, params_.size() - 1),
                                     table.var.device());
  Var v(std::move(data), requires_grad);
  params_.push_back({name, v, table.spec, true});
  return v;
}

Var Module::register_parameter(const std::string& name, Tensor data, bool requires_grad,
                               const init::InitSpec& spec) {
  check_new_name(name);
  TOPO_CHECK(data.defined(), "Module: parameter '{}' has undefined data", name);
  check_dtype(data, DType::F32, "Module::register_parameter", name.c_str());
  Var v(std::move(data), requires_grad);
  params_.push_back({name, v, spec});
  return v;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_new_name(name);
  TOPO_CHECK(module != nullptr, "Module: submodule '{}' is null", name);
  TOPO_CHECK(module.get() != this, "Module: '{}' cannot be its own child", name);
  module->train(training_);
  children_.emplace_back(name, std::move(module));
}

void ModuleList::throw_wrong_type(std::size_t i) const {
  fail("ModuleList: item {} is not of the requested type", i);
}

}  // namespace topo::nn
