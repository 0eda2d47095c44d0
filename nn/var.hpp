#pragma once
// topo::nn::Var: a tensor that remembers how it was computed, for reverse-mode differentiation.
// A Var is a handle: copies share one impl (data, grad, history). Ops (nn/ops.hpp) build new Vars whose
// node on the tape points back at the inputs that require grad; backward() walks that tape.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/tensor.hpp"

namespace topo::nn {

struct Node;

// The shared state behind a Var. Ops and autograd reach it through Var::impl(); users need not.
struct VarImpl {
  // An interior Var's data is dropped when its last Var handle goes (only the tape still reaches it): an op
  // keeps what its backward needs by capturing those Tensors, never through its inputs' impls, so a forward
  // holds only what backward reads (a [1M, 16] product consumed by a scale no longer lives until backward).
  // `shape` stays for the engine's checks. Leaves always keep their data.
  Tensor data;
  Shape shape;
  std::atomic<std::int64_t> handles{0};
  Tensor grad;                  // accumulated gradient; undefined until a backward reaches this Var
  bool requires_grad = false;
  bool retains_grad = false;    // an interior Var that keeps its gradient (Var::retain_grad)
  std::shared_ptr<Node> node;   // the op that produced this Var; null for leaves
  ~VarImpl();                   // unlinks long chains iteratively (no recursion through the tape)
};

class Var {
 public:
  Var() = default;  // undefined: defined() is false (e.g. an absent layer_norm gamma)
  Var(const Var& other);
  Var(Var&& other) noexcept = default;
  Var& operator=(const Var& other);
  Var& operator=(Var&& other) noexcept;
  ~Var();
  // A leaf. requires_grad needs float32 data (gradients are float32).
  explicit Var(Tensor data, bool requires_grad = false);

  bool defined() const { return impl_ != nullptr; }
  const Tensor& data() const;
  // Replaces the data of a leaf (loading a checkpoint); an interior Var's data is its op's output.
  void set_data(Tensor data);
  // The accumulated gradient, undefined until a backward reached this Var. Leaves accumulate across
  // backward calls (as in PyTorch); call zero_grad() between steps.
  const Tensor& grad() const;
  void set_grad(Tensor grad);
  // Forgets the gradient (it becomes undefined, so the next backward stores a fresh one).
  void zero_grad();

  bool requires_grad() const;
  // Only on leaves: an interior Var requires grad exactly when one of its inputs does.
  void set_requires_grad(bool requires_grad = true);
  // Asks an interior Var to keep its gradient in grad() (leaves always do). For inspection and tests.
  void retain_grad();
  bool is_leaf() const;
  // Name of the op that produced this Var ("" for a leaf).
  std::string op_name() const;
  // A new leaf sharing this Var's data, without history and not requiring grad.
  Var detach() const;

  const Shape& shape() const { return data().shape(); }
  std::int64_t size(int d) const { return data().size(d); }
  std::int64_t numel() const { return data().numel(); }
  int ndim() const { return data().ndim(); }
  DType dtype() const { return data().dtype(); }
  Device device() const { return data().device(); }
  float item() const { return data().item(); }

  // Backpropagates from this Var. Without grad_output the Var must have one element and the seed is 1.
  // The tape behind this Var is released afterwards (its saved tensors freed) unless retain_graph is set;
  // a second backward through a released part of the tape is a topo::Error.
  void backward(bool retain_graph = false) const;
  void backward(const Tensor& grad_output, bool retain_graph = false) const;

  const std::shared_ptr<VarImpl>& impl() const { return impl_; }
  // True when both handles share one impl.
  bool same(const Var& other) const { return impl_ == other.impl_; }

 private:
  std::shared_ptr<VarImpl> impl_;
  VarImpl& checked() const;
  void drop_handle();  // this handle goes; the last one of an interior Var drops its data
};

}  // namespace topo::nn
