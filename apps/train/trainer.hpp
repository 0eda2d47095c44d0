#pragma once
// The training loop of topo-train, the same for every task (apps/tasks/task.hpp): regression (masked
// summation, MSE) and classification (text, cross-entropy, accuracy).
//
// Determinism: data are a function of the config (generated from the seed, or read from files); the epoch-e
// batches are keyed by (seed, e); initialisation and dropout have their own seeded streams; the lr is a
// function of the step. A checkpoint at the end of every epoch (OUT/checkpoint.ckpt, atomic) holds the
// parameters, the optimizer state, the dropout generator and the best-on-dev / early-stopping bookkeeping,
// so `resume` continues the exact loss curve of an uninterrupted run (same thread count: CPU reductions are
// deterministic for a fixed number of threads). Data parallel (several ranks, data_parallel.hpp): the same
// steps on the same global batches; a checkpoint resumes with any rank count.
//
// Run directory OUT: checkpoint.ckpt (last epoch), best.ckpt (parameters of the best dev evaluation, with
// the config and the task's metadata — vocabulary, labels — so topo-eval can rebuild the model from it),
// metrics.jsonl (one JSON line per evaluation), result.json (written once, atomically, at the end).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/train/config.hpp"
#include "dist/communicator.hpp"

namespace topo::apps {

struct TrainResult {
  bool completed = false;       // false when stopped by stop_after or a stop signal (no test evaluation)
  int stop_signal = 0;          // SIGTERM / SIGINT when one stopped the run (its checkpoint resumes it)
  bool stopped_early = false;   // patience ran out before the last epoch
  std::string metric;           // the task's dev/test metric ("mse", "acc")
  bool has_test = false;        // the task has a test split (MTL-16's is held back)
  double test_metric = 0.0;     // of the best-on-dev parameters, when has_test
  double best_dev_metric = 0.0;
  std::int64_t best_step = 0;
  std::int64_t steps = 0;       // optimizer steps done in total (resumed ones included)
  std::int64_t epochs_done = 0;
  double train_seconds = 0.0;   // this process's training time (evaluations included)
  std::int64_t params = 0;
  std::vector<float> losses;    // training loss of every step this process ran, in order (the global
                                // batch's, on every rank, when data parallel)
  int ranks = 1;                // processes that trained together (apps/train/data_parallel.hpp)
  double allreduce_seconds = 0; // data parallel: time in the gradient reduction backward did not hide
  nlohmann::json baseline;      // the task's trivial predictor on the test split (dev when there is none)
  nlohmann::json result;        // what result.json holds (when completed)
};

// One line for the terminal: the test metric against the task's baseline, the best dev, size and time.
std::string summary_line(const TrainConfig& config, const TrainResult& r);

class Trainer {
 public:
  // `comm`: the ranks that train together (dist::init_world under mpirun); null: this process alone. Not
  // owned. Under several ranks rank 0 alone writes the run directory and holds the full result.
  explicit Trainer(TrainConfig config, dist::Communicator* comm = nullptr);
  // The phases, in order (trainer.cpp's TrainingRun): build the task, model, optimizer and schedule; start a
  // fresh run directory or resume its checkpoint; train the epochs (dev evaluations, checkpoints, stopping
  // rules); test the best-on-dev parameters; write result.json.
  TrainResult run();

  static std::string checkpoint_path(const std::string& out) { return out + "/checkpoint.ckpt"; }
  static std::string best_path(const std::string& out) { return out + "/best.ckpt"; }
  static std::string metrics_path(const std::string& out) { return out + "/metrics.jsonl"; }
  static std::string result_path(const std::string& out) { return out + "/result.json"; }

 private:
  TrainConfig config_;
  dist::Communicator* comm_;
};

}  // namespace topo::apps
