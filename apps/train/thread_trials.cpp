// The thread-count trials of a topo-train run (thread_tuner.hpp): the default count against one thread on the
// same batches, each trial's extra passes thrown away so the run's own steps are as without them.
#include "apps/train/training_run.hpp"

namespace topo::apps::detail {

void TrainingRun::start_thread_tuner() {
  const bool given = c_.threads > 0 || !probe_core_limits().omp_num_threads.empty();
  if (given || threads_.threads <= 1 || distributed_ || device_.is_cuda()) return;
  const ThreadTuner::Options options;
  if (!ThreadTuner::enough_steps(total_steps_ - step_, options)) return;
  default_threads_ = threads_;
  thread_tuner_.emplace(std::vector<int>{threads_.threads, 1}, options);
}

double TrainingRun::discarded_pass(const TaskBatch& batch, int threads) {
  // Kept out of the kernel profile (the step's own pass is profiled as any other); --profile's phase times show
  // it as "thread trials".
  const ProfileOff kernels_off;
  auto scope = profile_.time("thread trials");
  set_num_threads(threads);
  const nn::Generator rewind = dropout_gen_;  // the step's own pass draws the same dropout masks
  const Clock::time_point t0 = Clock::now();
  {
    nn::Var loss = task_->batch_loss(*model_, model_->forward(batch.inputs), batch);
    (void)loss.item();
    loss.backward();
  }
  const double seconds = seconds_since(t0);
  model_->zero_grad();
  dropout_gen_ = rewind;
  return seconds;
}

void TrainingRun::report_thread_choice() {
  const int chosen = thread_tuner_->chosen();
  threads_.source = fmt::format("{}; at step {}, {}", default_threads_.source, step_, thread_tuner_->summary());
  threads_.threads = chosen;
  progress_->message(fmt::format("threads: {} ({}; --threads N fixes the count)", chosen, threads_.source));
}

}  // namespace topo::apps::detail
