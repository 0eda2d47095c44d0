#include "nn/autograd.hpp"

#include "kernels/profile.hpp"

#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "kernels/dense/binary.hpp"


namespace topo::nn {

namespace {
thread_local bool t_grad_enabled = true;
thread_local BackwardObserver* t_observer = nullptr;

// dst += src, in place. dst is owned by the caller (never aliases another Var's gradient).
void accumulate_(Tensor& dst, const Tensor& src) { axpy_(dst, 1.f, src); }

// Leaves keep their own copy of the first gradient: a node may hand the same tensor to several inputs
// (add passes grad through to both sides), and later in-place accumulation must not touch the others. A
// gradient nothing else holds (sole_owner: a backward's fresh result) is kept as it is, not copied — for an
// embedding table that copy was a whole [vocab, d] pass per step.
void accumulate_into_grad(VarImpl& v, Tensor&& g) {
  if (v.grad.defined())
    accumulate_(v.grad, g);
  else
    v.grad = g.sole_owner() ? std::move(g) : g.clone();
}
void accumulate_into_grad(VarImpl& v, const Tensor& g) { accumulate_into_grad(v, Tensor(g)); }

// A pending interior gradient: the first contribution is borrowed; a second one forces a private copy unless
// the first is already private (sole_owner).
struct Pending {
  Tensor grad;
  bool owned = false;
};
}  // namespace

bool grad_enabled() { return t_grad_enabled; }
NoGradGuard::NoGradGuard() : previous_(t_grad_enabled) { t_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { t_grad_enabled = previous_; }
BackwardObserverScope::BackwardObserverScope(BackwardObserver& observer) : previous_(t_observer) {
  t_observer = &observer;
}
BackwardObserverScope::~BackwardObserverScope() { t_observer = previous_; }

namespace {

// Puts result on the tape when grad mode is on and some input requires grad.
Var attach_node(Var result, const std::vector<Var>& inputs, BackwardFn backward, const char* name) {
  bool any = false;
  if (t_grad_enabled)
    for (const Var& v : inputs) any = any || (v.defined() && v.requires_grad());
  if (!any) return result;
  VarImpl& r = *result.impl();
  TOPO_CHECK(result.dtype() == DType::F32, "{}: a differentiable output must be float32, got {}", name,
             result.data().str());
  auto node = std::make_shared<Node>();
  node->name = name;
  node->inputs.reserve(inputs.size());
  for (const Var& v : inputs) node->inputs.push_back(v.defined() && v.requires_grad() ? v.impl() : nullptr);
  node->backward = std::move(backward);
  r.requires_grad = true;
  r.node = std::move(node);
  return result;
}

}  // namespace

Var make_output(Tensor out, const std::vector<Var>& inputs, BackwardFn backward, const char* name) {
  return attach_node(Var(std::move(out)), inputs, std::move(backward), name);
}

Var make_lazy_output(const Shape& shape, Device device, std::function<Tensor(std::int64_t, std::int64_t)> rows,
                     const std::vector<Var>& inputs, BackwardFn backward, const char* name) {
  return attach_node(Var::lazy(shape, device, std::move(rows)), inputs, std::move(backward), name);
}

void run_backward(const Var& root, const Tensor& grad_output, bool retain_graph) {
  const profile::PhaseGuard phase(profile::Phase::Backward);  // kernels run from here are backward work
  const std::shared_ptr<VarImpl>& root_impl = root.impl();
  TOPO_CHECK(root_impl->requires_grad,
             "backward on a Var that does not require grad (no input of its computation requires grad)");
  TOPO_CHECK(grad_output.defined() && grad_output.dtype() == DType::F32 && grad_output.shape() == root.shape() &&
                 grad_output.device() == root.device(),
             "backward: grad_output {} does not match the output's shape {} on {}", grad_output.str(),
             shape_str(root.shape()), root.device().str());
  NoGradGuard no_grad;  // backward closures work on Tensors; nothing they do is recorded
  if (!root_impl->node) {
    accumulate_into_grad(*root_impl, grad_output);
    return;
  }

  // Post-order DFS over Vars that have a node, with an explicit stack. `order` holds owning pointers so
  // that releasing a node's inputs during the sweep cannot free a Var still waiting its turn.
  std::vector<std::shared_ptr<VarImpl>> order;
  std::unordered_set<const VarImpl*> visited{root_impl.get()};
  std::vector<std::pair<std::shared_ptr<VarImpl>, std::size_t>> stack{{root_impl, 0}};
  // With an observer: how many node input slots still feed each leaf (its gradient is final at zero).
  BackwardObserver* const observer = t_observer;
  std::unordered_map<const VarImpl*, std::int64_t> leaf_uses;
  while (!stack.empty()) {
    auto& [v, next] = stack.back();
    const Node& n = *v->node;
    TOPO_CHECK(!n.released,
               "backward through the output of {} whose tape was already released by an earlier backward; "
               "pass retain_graph=true to the first backward to keep it",
               n.name);
    if (next < n.inputs.size()) {
      const std::shared_ptr<VarImpl>& in = n.inputs[next++];
      if (in && in->node && visited.insert(in.get()).second) stack.emplace_back(in, 0);
      if (observer && in && !in->node) ++leaf_uses[in.get()];
    } else {
      order.push_back(std::move(v));
      stack.pop_back();
    }
  }

  if (observer) {
    std::vector<const VarImpl*> leaves;
    leaves.reserve(leaf_uses.size());
    for (const auto& [leaf, uses] : leaf_uses) leaves.push_back(leaf);
    observer->backward_begins(leaves);
  }

  // Reverse post-order: every Var comes after all Vars that consume it.
  std::unordered_map<const VarImpl*, Pending> pending;
  pending[root_impl.get()] = Pending{grad_output, false};
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    VarImpl& v = **it;
    Node& n = *v.node;
    auto p = pending.find(&v);
    if (p != pending.end()) {
      Tensor g = std::move(p->second.grad);
      pending.erase(p);  // an interior gradient dies once its node has consumed it
      if (v.retains_grad) accumulate_into_grad(v, g);
      std::vector<bool> needs(n.inputs.size());
      for (std::size_t i = 0; i < needs.size(); ++i) needs[i] = n.inputs[i] != nullptr;
      std::vector<Tensor> grads = n.backward(g, needs);
      TOPO_CHECK(grads.size() == n.inputs.size(), "autograd: the backward of {} returned {} gradients for {} inputs",
                 n.name, grads.size(), n.inputs.size());
      for (std::size_t i = 0; i < grads.size(); ++i) {
        if (!n.inputs[i] || !grads[i].defined()) continue;
        VarImpl& in = *n.inputs[i];
        const Shape& in_shape = in.data.defined() ? in.data.shape() : in.shape;  // dropped data keeps its shape
        TOPO_CHECK(grads[i].shape() == in_shape && grads[i].dtype() == DType::F32,
                   "autograd: the backward of {} returned {} for input {} shaped {}", n.name, grads[i].str(), i,
                   shape_str(in_shape));
        if (!in.node) {
          accumulate_into_grad(in, std::move(grads[i]));
          continue;
        }
        const auto slot = pending.find(&in);
        if (slot == pending.end()) {
          pending.emplace(&in, Pending{std::move(grads[i]), false});
          continue;
        }
        if (!slot->second.owned) {
          if (!slot->second.grad.sole_owner()) slot->second.grad = slot->second.grad.clone();
          slot->second.owned = true;
        }
        accumulate_(slot->second.grad, grads[i]);
      }
    }
    if (observer) {
      for (const std::shared_ptr<VarImpl>& in : n.inputs)
        if (in && !in->node && --leaf_uses[in.get()] == 0) observer->leaf_ready(*in);
      observer->after_node();
    }
    if (!retain_graph) {  // free the saved tensors and the links; the Var keeps its (released) node
      n.backward = nullptr;
      n.inputs.clear();
      n.released = true;
    }
  }
}

}  // namespace topo::nn
