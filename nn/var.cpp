#include "nn/var.hpp"

#include <utility>
#include <vector>

#include "nn/autograd.hpp"

namespace topo::nn {

VarImpl::~VarImpl() {
  // Dropping the last handle to the end of a long chain would destroy impl -> node -> impl -> ...
  // recursively and overflow the stack. Instead, nodes whose last owner is being dropped are unlinked
  // here one at a time: their inputs' nodes are moved onto an explicit stack before they die.
  if (!node) return;
  std::vector<std::shared_ptr<Node>> stack;
  stack.push_back(std::move(node));
  while (!stack.empty()) {
    std::shared_ptr<Node> n = std::move(stack.back());
    stack.pop_back();
    if (n.use_count() != 1) continue;  // still owned elsewhere: dropping our reference is shallow
    for (auto& in : n->inputs)
      if (in && in.use_count() == 1 && in->node) stack.push_back(std::move(in->node));
    // n dies here; the impls it frees have no node left, so their destructors return at once.
  }
}

Var::Var(const Var& other) : impl_(other.impl_) {
  if (impl_) impl_->handles.fetch_add(1, std::memory_order_relaxed);
}

Var& Var::operator=(const Var& other) {
  if (impl_ == other.impl_) return *this;
  if (other.impl_) other.impl_->handles.fetch_add(1, std::memory_order_relaxed);
  drop_handle();
  impl_ = other.impl_;
  return *this;
}

Var& Var::operator=(Var&& other) noexcept {
  if (this == &other) return *this;
  drop_handle();
  impl_ = std::move(other.impl_);
  return *this;
}

Var::~Var() { drop_handle(); }

void Var::drop_handle() {
  if (!impl_) return;
  // Only the tape holds an interior impl with no handle left: nothing can read its data any more.
  if (impl_->handles.fetch_sub(1, std::memory_order_acq_rel) == 1 && impl_->node && impl_.use_count() > 1 &&
      impl_->data.defined()) {
    impl_->shape = impl_->data.shape();
    impl_->data = Tensor();
  }
  impl_.reset();
}

Var::Var(Tensor data, bool requires_grad) : impl_(std::make_shared<VarImpl>()) {
  impl_->handles.store(1, std::memory_order_relaxed);
  TOPO_CHECK(data.defined(), "Var: the data tensor is undefined");
  TOPO_CHECK(!requires_grad || data.dtype() == DType::F32, "Var: requires_grad needs float32 data, got {}",
             data.str());
  impl_->data = std::move(data);
  impl_->requires_grad = requires_grad;
}

VarImpl& Var::checked() const {
  TOPO_CHECK(impl_ != nullptr, "Var: use of an undefined Var");
  return *impl_;
}

Var Var::lazy(const Shape& shape, Device device, std::function<Tensor(std::int64_t, std::int64_t)> rows) {
  TOPO_CHECK(!shape.empty() && rows, "Var::lazy: needs at least one dimension and a recipe for the rows");
  Var v;
  v.impl_ = std::make_shared<VarImpl>();
  v.impl_->handles.store(1, std::memory_order_relaxed);
  v.impl_->shape = shape;
  v.impl_->device = device;
  v.impl_->recompute_rows = std::move(rows);
  return v;
}

const Tensor& Var::data() const {
  VarImpl& v = checked();
  if (!v.data.defined() && v.recompute_rows) {  // lazy: made once, on first read
    v.data = v.recompute_rows(0, v.shape[0]);
    TOPO_CHECK(v.data.shape() == v.shape, "Var: a lazy Var's recipe made {} for shape {}", v.data.str(),
               shape_str(v.shape));
  }
  return v.data;
}

bool Var::is_lazy() const {
  const VarImpl& v = checked();
  return !v.data.defined() && v.recompute_rows != nullptr;
}

// A lazy Var, or an interior one whose data went with its handles, is described by shape and device.
const Shape& Var::shape() const {
  const VarImpl& v = checked();
  return v.data.defined() ? v.data.shape() : v.shape;
}
std::int64_t Var::size(int d) const { return shape_dim(shape(), d); }
std::int64_t Var::numel() const { return shape_numel(shape()); }
DType Var::dtype() const {
  const VarImpl& v = checked();
  return v.data.defined() ? v.data.dtype() : DType::F32;
}
Device Var::device() const {
  const VarImpl& v = checked();
  return v.data.defined() ? v.data.device() : v.device;
}

void Var::set_data(Tensor data) {
  TOPO_CHECK(is_leaf(), "Var::set_data on the output of {}: only leaves can be overwritten", op_name());
  TOPO_CHECK(data.defined(), "Var::set_data: the data tensor is undefined");
  TOPO_CHECK(!requires_grad() || data.dtype() == DType::F32, "Var::set_data: a Var requiring grad needs float32, got {}",
             data.str());
  impl_->data = std::move(data);
  impl_->recompute_rows = nullptr;  // the new data is not the recipe's
}

const Tensor& Var::grad() const { return checked().grad; }

void Var::set_grad(Tensor grad) {
  VarImpl& v = checked();
  if (grad.defined()) {
    TOPO_CHECK(grad.shape() == shape() && grad.dtype() == DType::F32 && grad.device() == device(),
               "Var::set_grad: gradient {} does not match the Var's shape {} on {}", grad.str(), shape_str(shape()),
               device().str());
  }
  v.grad = std::move(grad);
}

void Var::zero_grad() { checked().grad = Tensor(); }

bool Var::requires_grad() const { return checked().requires_grad; }

void Var::set_requires_grad(bool requires_grad) {
  VarImpl& v = checked();
  TOPO_CHECK(!v.node, "Var::set_requires_grad on the output of {}: only leaves can change it", op_name());
  TOPO_CHECK(!requires_grad || dtype() == DType::F32, "Var: requires_grad needs float32 data, got {}",
             data().str());
  v.requires_grad = requires_grad;
}

void Var::retain_grad() {
  VarImpl& v = checked();
  TOPO_CHECK(v.requires_grad, "Var::retain_grad on a Var that does not require grad");
  v.retains_grad = true;
}

bool Var::is_leaf() const { return checked().node == nullptr; }

std::string Var::op_name() const {
  const VarImpl& v = checked();
  return v.node ? v.node->name : "";
}

Var Var::detach() const { return Var(data(), false); }

void Var::backward(bool retain_graph) const {
  TOPO_CHECK(numel() == 1,
             "backward() without a grad_output needs a one-element Var, got shape {}; pass the output gradient",
             shape_str(shape()));
  run_backward(*this, Tensor::full(shape(), 1.f, device()), retain_graph);
}

void Var::backward(const Tensor& grad_output, bool retain_graph) const {
  checked();
  run_backward(*this, grad_output, retain_graph);
}

}  // namespace topo::nn
