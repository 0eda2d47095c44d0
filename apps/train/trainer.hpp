#pragma once
// The training loop of topo-train (masked summation; regression with MSE).
//
// Determinism: data are a function of (seed, split, index); the epoch-e order is a Fisher-Yates shuffle
// keyed by (seed, e); initialisation and dropout have their own seeded streams; the lr is a function of
// the step. A checkpoint at the end of every epoch (OUT/checkpoint.ckpt, atomic) holds the parameters,
// the optimizer state, the dropout generator and the best-on-dev bookkeeping, so `resume` continues the
// exact loss curve of an uninterrupted run (same thread count: CPU reductions are deterministic for a
// fixed number of threads).
//
// Run directory OUT: checkpoint.ckpt (last epoch), best.ckpt (parameters of the best dev evaluation),
// metrics.jsonl (one JSON line per evaluation), result.json (written once, atomically, at the end).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/tasks/masked_sum.hpp"
#include "apps/train/config.hpp"
#include "models/heads.hpp"

namespace topo::apps {

struct TrainResult {
  bool completed = false;       // false when stopped early by stop_after (no test evaluation)
  double test_mse = 0.0;
  double baseline_mse = 0.0;    // "always guess k/2" on the same test set
  double best_dev_mse = 0.0;
  std::int64_t best_step = 0;
  std::int64_t steps = 0;       // optimizer steps done in total (resumed ones included)
  std::int64_t epochs_done = 0;
  double train_seconds = 0.0;   // this process's training time (evaluations included)
  std::int64_t params = 0;
  std::vector<float> losses;    // training loss of every step this process ran, in order
  nlohmann::json result;        // what result.json holds (when completed)
};

// Mean squared error of `model` over examples [0, count) of `split`, per output element.
double evaluate_mse(models::SequenceModel& model, const MaskedSumTask& task, Split split, std::int64_t count,
                    std::int64_t batch, Device device);

// Examples of one epoch in training order: a permutation of [0, size) keyed by (seed, epoch).
std::vector<std::int64_t> epoch_order(std::int64_t size, std::uint64_t seed, std::int64_t epoch);

class Trainer {
 public:
  explicit Trainer(TrainConfig config);
  TrainResult run();

  static std::string checkpoint_path(const std::string& out) { return out + "/checkpoint.ckpt"; }
  static std::string best_path(const std::string& out) { return out + "/best.ckpt"; }
  static std::string metrics_path(const std::string& out) { return out + "/metrics.jsonl"; }
  static std::string result_path(const std::string& out) { return out + "/result.json"; }

 private:
  TrainConfig config_;
};

}  // namespace topo::apps
