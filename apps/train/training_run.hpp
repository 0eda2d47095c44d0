#pragma once
// The state and phases of one topo-train run (Trainer::run), shared by trainer.cpp (the phases: set-up, resume,
// epochs, test) and run_report.cpp (what the run reports: the log's data and settings lines, result.json, the
// summary line). Internal to apps/train: users call Trainer.
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/tasks/task.hpp"
#include "apps/train/progress.hpp"
#include "apps/train/thread_tuner.hpp"
#include "apps/train/trainer.hpp"
#include "dist/gradient_reducer.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/profile.hpp"
#include "kernels/threads.hpp"
#include "nn/optim.hpp"
#include "nn/schedule.hpp"
#include "nn/weight_average.hpp"

namespace topo::apps::detail {

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Wall time per phase of training (--profile reports it). On CUDA the phases that end in a host read
// (the loss item, evaluations) include the queued device work; the others measure launch overhead.
struct Profile {
  std::map<std::string, double> seconds;
  struct Scope {
    Profile& p;
    const char* name;
    Clock::time_point t0 = Clock::now();
    ~Scope() { p.seconds[name] += seconds_since(t0); }
  };
  Scope time(const char* name) { return Scope{*this, name}; }
};

// Kernel profiling off for a scope (evaluations, the thread trials' discarded passes), then as it was.
struct ProfileOff {
  bool was = topo::profile::enabled();
  ProfileOff() { topo::profile::enable(false); }
  ~ProfileOff() { topo::profile::enable(was); }
  ProfileOff(const ProfileOff&) = delete;
  ProfileOff& operator=(const ProfileOff&) = delete;
};

// "variant=full residual=false": the chosen model's own options, for one-line summaries.
std::string model_options_text(const TrainConfig& c);

// One run of Trainer::run, phase by phase; the members are the state that flows between the phases (and
// what the epoch checkpoint saves).
class TrainingRun {
 public:
  // Phase 0: the task (data read or generated), the model, the optimizer and the lr schedule.
  TrainingRun(const TrainConfig& config, dist::Communicator& comm);
  // Phase 1: a fresh run directory, or the state of OUT/checkpoint.ckpt (--resume).
  void start_or_resume();
  // Phase 2: the epochs, each ending with a dev evaluation (or eval_every ones inside), a checkpoint and the
  // stopping rules. False when stop_after or a stop signal (SIGTERM, SIGINT) interrupted the run on purpose:
  // the checkpoint then holds the step it stopped after, and resume continues it.
  bool train();
  // Phase 3: the best-on-dev parameters on the test split, and the task's trivial baseline.
  void test_best();
  // Phase 4: result.json, written once, atomically.
  void write_result();
  const TrainResult& result() const { return r_; }

 private:
  void report_data_and_settings();
  void train_epoch(std::int64_t epoch);
  void train_step(const std::vector<std::int64_t>& indices, std::int64_t epoch);
  // Dev evaluation: best-on-dev bookkeeping, best.ckpt when it improved, a metrics.jsonl line.
  void evaluate_dev(std::int64_t epoch);
  // OUT/checkpoint.ckpt after `batches_done` batches of `epoch` (all of them: the epoch's end).
  void save_checkpoint(std::int64_t epoch, std::int64_t batches_done);
  // The best-on-dev and early-stopping state (checkpoint metadata; broadcast from rank 0 when data parallel),
  // and where in epoch `epochs_done` the run is (`batches_done` of its batches trained: a mid-epoch checkpoint).
  nlohmann::json bookkeeping(std::int64_t epochs_done, std::int64_t batches_done = 0) const;
  void restore_bookkeeping(const nlohmann::json& meta);
  void share_bookkeeping();
  // --profile: the kernel time per phase and op category of the training steps.
  nlohmann::json kernel_profile() const;

  const TrainConfig& c_;
  dist::Communicator& comm_;
  const bool distributed_, root_;  // several ranks; this is rank 0 (the one that writes files)
  std::unique_ptr<dist::GradientReducer> reducer_;  // when distributed_
  ThreadCount threads_;  // how many and where the count came from (the log's first line, result.json)
  // The default count against one thread, timed on the first steps and again at doubling intervals
  // (thread_tuner.hpp); unset when the count was given (--threads, OMP_NUM_THREADS), is 1, or the run is data
  // parallel, on CUDA or too short.
  std::optional<ThreadTuner> thread_tuner_;
  ThreadCount default_threads_;  // the count the tuner compares with one thread, and its source
  void start_thread_tuner();
  // A trial's run of the batch at `threads`, thrown away (gradients cleared, dropout generator rewound): seconds.
  double discarded_pass(const TaskBatch& batch, int threads);
  void report_thread_choice();  // the log line and threads_ after a round of trials changed the count
  // The process's GEMM precision is set for this run (--precision) and restored when the run ends, so a run in
  // a test does not leak its precision into the next.
  GemmPrecisionGuard restore_precision_{gemm_precision()};
  std::string width_lr_line_;  // the lr per width (apps/train/model_factory.hpp), when it scales any weight
  std::string warmup_line_;    // when a recipe's warm-up was shortened to fit a short run
  PrecisionChoice precision_;  // what runs (bf16 falls back to fp32 without AVX512_BF16) and its log line
  Device device_;
  std::uint64_t seed_;
  std::unique_ptr<Task> task_;
  bool higher_better_ = false;
  std::string metric_;
  // Every dropout mask comes from the default generator (the attention encoders use it implicitly), so
  // seeding and checkpointing it covers them all. It is the constructing thread's (one per thread), so a run
  // is driven by the thread that built it.
  nn::Generator& dropout_gen_ = nn::default_generator();
  std::shared_ptr<models::SequenceModel> model_;
  std::vector<nn::Var> params_;
  std::unique_ptr<nn::Optimizer> optimizer_;
  // --ema-decay: the weights' moving average, updated after every step on rank 0 (which alone evaluates and
  // writes): dev evaluations run with it swapped in, so best.ckpt, the test and the predictions are its.
  std::optional<nn::WeightAverage> average_;
  nn::WeightAverage* average() { return average_ ? &*average_ : nullptr; }
  std::int64_t steps_per_epoch_ = 0, total_steps_ = 0;
  std::int64_t epochs_ = 0;  // c_.epochs, or more to reach c_.min_steps
  nn::LrSchedule schedule_;
  std::string ckpt_, best_, metrics_, result_file_;

  TrainResult r_;
  std::int64_t start_epoch_ = 0, step_ = 0;
  std::int64_t resume_batches_ = 0;   // batches of start_epoch_ a mid-epoch checkpoint had trained
  std::int64_t last_eval_step_ = -1;  // the step of this epoch's last dev evaluation (-1: none yet)
  bool stop_now_ = false;             // a stop signal arrived (on any rank): stop after this step
  int stopped_by_ = 0;                // which: SIGTERM (when any rank got one) or SIGINT
  std::int64_t stopped_batches_ = 0;  // batches of the epoch trained when it stopped
  double best_dev_ = 0.0;
  nlohmann::json best_dev_values_ = nlohmann::json::object();
  std::int64_t best_step_ = -1;
  std::int64_t evals_since_best_ = 0;  // early stopping counts evaluations without a better dev metric
  double window_sum_ = 0.0;            // training loss since the last evaluation
  std::int64_t window_steps_ = 0;

  // Seconds of training steps per epoch (evaluations and checkpoints left out): the epoch time runs report.
  std::vector<double> epoch_seconds_;
  double epoch_seconds_now_ = 0.0;  // the epoch in progress so far
  // The run's memory at an evaluation or the end: the process's RSS high-water mark and the allocator's peak.
  nlohmann::json memory_report() const;

  Profile profile_;
  std::optional<Progress> progress_;
  Clock::time_point t_start_;
  std::int64_t tokens_seen_ = 0;
  bool resumed_ = false;     // this run continued a checkpoint
  std::string resume_note_;  // what --resume did, for the log ("resume auto: ... starting fresh")
  nlohmann::json test_values_;
  std::vector<std::string> outputs_;  // files the task wrote beside result.json (tagging: predictions)
  nlohmann::json kernel_profile_;
};

}  // namespace topo::apps::detail
