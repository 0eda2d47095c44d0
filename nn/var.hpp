#pragma once
// topo::nn::Var: a tensor that remembers how it was computed, for reverse-mode differentiation.
// A Var is a handle: copies share one impl (data, grad, history). Ops (nn/ops.hpp) build new Vars whose
// node on the tape points back at the inputs that require grad; backward() walks that tape.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "kernels/device.hpp"
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
  // A lazy Var: the output of an op whose rows are cheap to make from tensors kept anyway (dropout of a leaf:
  // the leaf and the mask's counter). recompute_rows returns rows [begin, end) of the data, bitwise; `data`
  // stays undefined until something reads it whole (Var::data makes it then), and `shape` and `device` describe
  // it meanwhile (float32). Ops that take a recipe (linear, 2-D matmul) work slab by slab from it, forward and
  // backward, so GraphSAGE's dropped-out [1M, 128] input (0.5 GiB) is never made whole.
  std::function<Tensor(std::int64_t begin, std::int64_t end)> recompute_rows;
  Device device;
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
  // A lazy leaf of float32 rows (VarImpl::recompute_rows): rows(begin, end) gives rows [begin, end) of `shape`.
  static Var lazy(const Shape& shape, Device device, std::function<Tensor(std::int64_t, std::int64_t)> rows);

  bool defined() const { return impl_ != nullptr; }
  // The data; a lazy Var's is made here, once (read its shape, dtype and device through the accessors below,
  // which never make it).
  const Tensor& data() const;
  // Whether the data is a recipe not yet made (VarImpl::recompute_rows).
  bool is_lazy() const;
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

  const Shape& shape() const;
  std::int64_t size(int d) const;
  std::int64_t numel() const;
  int ndim() const { return static_cast<int>(shape().size()); }
  DType dtype() const;
  Device device() const;
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
