#pragma once
// Data-parallel gradient averaging with communication overlapped with backward, as PyTorch DDP does.
//
// Every rank runs forward and backward on its shard of the global batch; afterwards each parameter's grad
// must be sum_r weight_r * grad_r, where weight_r = (examples of rank r) / (examples of the global batch):
// the gradient of the global batch's mean loss, whatever the shards' sizes (a rank may have none).
//
// Parameters are packed, in reverse registration order (roughly the order backward finishes them), into
// buckets of about bucket_bytes. During backward the autograd engine tells the reducer when a parameter's
// gradient is final (nn::BackwardObserver); its weighted gradient is copied into its bucket, and a bucket
// whose parameters are all final starts its non-blocking allreduce at once (overlap) — buckets always start
// in index order, so every rank issues the same collectives in the same order. Without overlap the buckets
// start after backward (the reduce-after-backward baseline): the same buckets and sums, so the two give
// identical bits. After the step each parameter's grad is a view into its bucket; the optimizer's
// zero_grad() between steps releases it (begin_step checks).
//
//   GradientReducer reducer(comm, params, {});
//   reducer.begin_step(weight);
//   { nn::BackwardObserverScope watch(reducer); loss.backward(); }
//   std::vector<double> sums = {weight * loss_value};   // summed over ranks with the same collective
//   reducer.finish_step(sums);                            // grads averaged; sums[0] is the global loss
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "dist/communicator.hpp"
#include "nn/autograd.hpp"
#include "nn/var.hpp"

namespace topo::dist {

struct ReducerOptions {
  std::int64_t bucket_bytes = std::int64_t{1} << 20;  // gradient bytes per bucket (a parameter is never split)
  bool overlap = true;  // false: every bucket starts after backward (the baseline)
};

struct ReducerStats {
  std::int64_t steps = 0;
  double finish_seconds = 0.0;  // in finish_step: the communication backward did not hide, plus the copies
  // after-backward only: the part of finish_seconds spent at a barrier waiting for the slowest rank to end
  // its backward, so finish_seconds - peer_wait_seconds is the reduction itself.
  double peer_wait_seconds = 0.0;
  std::int64_t buckets = 0, buckets_started_in_backward = 0;  // over all steps: the overlap at work
};

class GradientReducer final : public nn::BackwardObserver {
 public:
  // `params`: the parameters to average (those that do not require grad are left out); one device.
  GradientReducer(Communicator& comm, const std::vector<nn::Var>& params, ReducerOptions options = {});

  // Starts a step in which this rank's gradients count `weight` times. Every parameter must be without a
  // gradient (zero_grad after the previous step).
  void begin_step(double weight);
  // From the autograd engine while a BackwardObserverScope(*this) lives. Parameters backward cannot reach
  // are final (without gradient) at once, so they do not hold back their bucket.
  void backward_begins(const std::vector<const nn::VarImpl*>& reachable_leaves) override;
  void leaf_ready(nn::VarImpl& leaf) override;
  void after_node() override;
  // Packs the gradients backward has not reported (a rank without examples reports none), starts the
  // remaining buckets, sums `sums` over the ranks (host scalars riding on the flags collective) and waits:
  // each parameter's grad is then the weighted sum over ranks; one no rank gave a gradient stays without.
  void finish_step(std::vector<double>& sums);

  std::int64_t num_buckets() const { return static_cast<std::int64_t>(buckets_.size()); }
  // Parameters per bucket, in bucket order (for tests and logs).
  std::vector<std::int64_t> bucket_sizes() const;
  const ReducerStats& stats() const { return stats_; }
  bool overlap() const { return options_.overlap; }

 private:
  struct Slot {
    nn::Var param;
    std::size_t bucket = 0;
    std::int64_t offset = 0;  // in the bucket, in elements
    bool ready = false, has_grad = false;
  };
  struct Bucket {
    Tensor flat;  // float32 [elements of its parameters], on the parameters' device
    std::int64_t members = 0, pending = 0;
    std::unique_ptr<Request> request;
  };
  void mark_ready(Slot& slot);
  void start_ready_buckets();
  void start_in_backward();  // overlap: start what is ready, counting it

  Communicator& comm_;
  ReducerOptions options_;
  std::vector<Slot> slots_;
  std::vector<Bucket> buckets_;
  std::unordered_map<const nn::VarImpl*, std::size_t> slot_of_;
  bool in_step_ = false;
  float weight_ = 1.f;
  std::size_t next_start_ = 0;     // buckets [0, next_start_) have started their allreduce
  std::size_t first_pending_ = 0;  // buckets before it are known complete
  ReducerStats stats_;
};

}  // namespace topo::dist
