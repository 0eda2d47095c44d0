#include "dist/gradient_reducer.hpp"

#include <chrono>

#include "kernels/dense/binary.hpp"
#include "kernels/error.hpp"

namespace topo::dist {

GradientReducer::GradientReducer(Communicator& comm, const std::vector<nn::Var>& params, ReducerOptions options)
    : comm_(comm), options_(options) {
  TOPO_CHECK(options.bucket_bytes > 0, "gradient buckets must hold at least 1 byte, got {}", options.bucket_bytes);
  // Reverse registration order: the output layers' gradients are final first in backward.
  std::vector<std::int64_t> bucket_elements;
  std::int64_t elements = 0;
  for (auto it = params.rbegin(); it != params.rend(); ++it) {
    if (!it->requires_grad()) continue;
    TOPO_CHECK(it->dtype() == DType::F32, "gradient reducer: parameter {} is not float32", it->data().str());
    TOPO_CHECK(slots_.empty() || it->device() == slots_.front().param.device(),
               "gradient reducer: parameters on {} and {}: one device per process", slots_.front().param.device().str(),
               it->device().str());
    TOPO_CHECK(slot_of_.emplace(it->impl().get(), slots_.size()).second, "gradient reducer: a parameter is listed twice");
    const std::int64_t bytes = it->numel() * 4;
    if (buckets_.empty() || (elements > 0 && (elements * 4 + bytes) > options.bucket_bytes)) {
      if (!buckets_.empty()) bucket_elements.push_back(elements);
      buckets_.emplace_back();
      elements = 0;
    }
    Slot slot;
    slot.param = *it;
    slot.bucket = buckets_.size() - 1;
    slot.offset = elements;
    elements += it->numel();
    ++buckets_.back().members;
    slots_.push_back(std::move(slot));
  }
  if (!buckets_.empty()) bucket_elements.push_back(elements);
  for (std::size_t b = 0; b < buckets_.size(); ++b)
    buckets_[b].flat = Tensor::zeros({bucket_elements[b]}, DType::F32, slots_.front().param.device());
}

std::vector<std::int64_t> GradientReducer::bucket_sizes() const {
  std::vector<std::int64_t> sizes;
  for (const Bucket& b : buckets_) sizes.push_back(b.members);
  return sizes;
}

void GradientReducer::begin_step(double weight) {
  TOPO_CHECK(!in_step_, "gradient reducer: begin_step twice without finish_step");
  for (Slot& s : slots_) {
    TOPO_CHECK(!s.param.grad().defined(),
               "gradient reducer: a parameter {} still has a gradient at the start of a step (zero_grad first)",
               s.param.data().str());
    s.ready = s.has_grad = false;
  }
  for (Bucket& b : buckets_) {
    b.pending = b.members;
    b.request.reset();
  }
  weight_ = static_cast<float>(weight);
  next_start_ = first_pending_ = 0;
  in_step_ = true;
}

// The parameter's weighted gradient (or zeros, when it has none on this rank) into its bucket.
void GradientReducer::mark_ready(Slot& slot) {
  slot.ready = true;
  Bucket& bucket = buckets_[slot.bucket];
  Tensor view = bucket.flat.slice_rows(slot.offset, slot.offset + slot.param.numel());
  const Tensor& grad = slot.param.grad();
  slot.has_grad = grad.defined();
  if (!slot.has_grad) {
    fill_(view, 0.f);
  } else if (weight_ == 1.f) {
    view.copy_from(grad.reshape({slot.param.numel()}));
  } else {
    fill_(view, 0.f);
    axpy_(view, weight_, grad.reshape({slot.param.numel()}));
  }
  --bucket.pending;
}

void GradientReducer::start_ready_buckets() {
  while (next_start_ < buckets_.size() && buckets_[next_start_].pending == 0) {
    Bucket& b = buckets_[next_start_++];
    b.request = comm_.start_allreduce_sum(b.flat);
  }
}

void GradientReducer::backward_begins(const std::vector<const nn::VarImpl*>& reachable_leaves) {
  if (!in_step_) return;
  std::vector<bool> reachable(slots_.size(), false);
  for (const nn::VarImpl* leaf : reachable_leaves)
    if (const auto found = slot_of_.find(leaf); found != slot_of_.end()) reachable[found->second] = true;
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (!reachable[i] && !slots_[i].ready) mark_ready(slots_[i]);
  start_in_backward();
}

void GradientReducer::start_in_backward() {
  if (!options_.overlap) return;
  const std::size_t before = next_start_;
  start_ready_buckets();
  stats_.buckets_started_in_backward += static_cast<std::int64_t>(next_start_ - before);
}

void GradientReducer::leaf_ready(nn::VarImpl& leaf) {
  if (!in_step_) return;
  const auto found = slot_of_.find(&leaf);
  if (found == slot_of_.end() || slots_[found->second].ready) return;
  mark_ready(slots_[found->second]);
  start_in_backward();
}

void GradientReducer::after_node() {
  // MPI advances a non-blocking collective only inside MPI calls: one test per node keeps the buckets in
  // flight moving while backward computes (one call progresses them all).
  if (!in_step_ || !options_.overlap) return;
  while (first_pending_ < next_start_ && buckets_[first_pending_].request->test()) ++first_pending_;
}

void GradientReducer::finish_step(std::vector<double>& sums) {
  TOPO_CHECK(in_step_, "gradient reducer: finish_step without begin_step");
  const auto t0 = std::chrono::steady_clock::now();
  if (!options_.overlap) {  // the baseline measures its own skew: wait for every rank first
    comm_.barrier();
    stats_.peer_wait_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  for (Slot& s : slots_)
    if (!s.ready) mark_ready(s);
  start_ready_buckets();
  // Which parameters got a gradient on some rank (a parameter no example used keeps none, as in one process),
  // and the caller's scalars, in one small collective after the buckets.
  std::vector<double> flags(slots_.size() + sums.size());
  for (std::size_t i = 0; i < slots_.size(); ++i) flags[i] = slots_[i].has_grad ? 1.0 : 0.0;
  std::copy(sums.begin(), sums.end(), flags.begin() + static_cast<std::ptrdiff_t>(slots_.size()));
  comm_.allreduce_sum(flags);
  for (Bucket& b : buckets_) b.request->wait();
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (flags[i] > 0)
      s.param.set_grad(buckets_[s.bucket].flat.slice_rows(s.offset, s.offset + s.param.numel()).reshape(s.param.shape()));
  }
  std::copy(flags.begin() + static_cast<std::ptrdiff_t>(slots_.size()), flags.end(), sums.begin());
  in_step_ = false;
  ++stats_.steps;
  stats_.buckets += static_cast<std::int64_t>(buckets_.size());
  stats_.finish_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace topo::dist
