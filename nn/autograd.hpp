#pragma once
// The tape: each op output carries a Node that knows its inputs and how to map the output's gradient to
// theirs. backward() orders the nodes reachable from the root topologically (iteratively, so 10^5-long
// chains are fine), runs each node once after all its consumers, sums gradients per Var, accumulates
// them into the leaves' grad and frees interior gradients as soon as they are consumed.
//
// Writing an op (every op in nn/ops*.cpp does this):
//   Tensor y = kernel(x.data());
//   return make_output(y, {x}, [x_data = x.data(), y](const Tensor& g, const std::vector<bool>& needs) {
//     return std::vector<Tensor>{needs[0] ? kernel_backward(g, x_data, y) : Tensor()};
//   }, "kernel");
// The closure must capture Tensors, never Vars: a Var captured by its own node's closure is a cycle.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nn/var.hpp"

namespace topo::nn {

// Maps the output gradient to one gradient per op input (same order as make_output's `inputs`).
// needs[i] says whether input i requires grad; an entry may be left undefined when it does not (or when
// the gradient is known to be zero). Each defined gradient must have its input's shape.
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_output, const std::vector<bool>& needs)>;

struct Node {
  const char* name = "";
  // One slot per op input: the input's impl when it requires grad, null otherwise.
  std::vector<std::shared_ptr<VarImpl>> inputs;
  BackwardFn backward;
  bool released = false;  // backward ran without retain_graph: closure and inputs were dropped
};

// Wraps an op's output. Attaches a Node only when grad mode is on and some input requires grad;
// otherwise the result is a plain leaf without history. Undefined inputs are allowed (optional args).
Var make_output(Tensor out, const std::vector<Var>& inputs, BackwardFn backward, const char* name);
// The same for a lazy output (Var::lazy): rows(begin, end) makes rows [begin, end) of `shape` on `device`.
Var make_lazy_output(const Shape& shape, Device device, std::function<Tensor(std::int64_t, std::int64_t)> rows,
                     const std::vector<Var>& inputs, BackwardFn backward, const char* name);

// Grad mode (per thread). While a NoGradGuard lives, ops record nothing.
bool grad_enabled();
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// The engine behind Var::backward.
void run_backward(const Var& root, const Tensor& grad_output, bool retain_graph);

// Watches the backward passes run on this thread while a BackwardObserverScope lives (dist/'s gradient
// reducer starts each bucket's allreduce as soon as its gradients are final, as PyTorch DDP's hooks do).
//   backward_begins: the leaves this pass can reach, before any node runs (a watched parameter not among
//               them gets no gradient from it: DDP's "unused parameter", final at once).
//   leaf_ready: a leaf's gradient is final for this pass — every node of the tape that feeds it has run
//               (its grad may still be undefined: the nodes gave it none). Called once per reachable leaf.
//   after_node: after each node's backward (a chance to progress communication in flight).
class BackwardObserver {
 public:
  virtual ~BackwardObserver() = default;
  virtual void backward_begins(const std::vector<const VarImpl*>& reachable_leaves) { (void)reachable_leaves; }
  virtual void leaf_ready(VarImpl& leaf) = 0;
  virtual void after_node() {}
};
class BackwardObserverScope {
 public:
  explicit BackwardObserverScope(BackwardObserver& observer);
  ~BackwardObserverScope();
  BackwardObserverScope(const BackwardObserverScope&) = delete;
  BackwardObserverScope& operator=(const BackwardObserverScope&) = delete;

 private:
  BackwardObserver* previous_;
};

}  // namespace topo::nn
