#pragma once
// The thread count of a training run, chosen by timing the run's own steps (issues #39 item 4, #41 item 4).
//
// Why measured: whether a second thread pays depends on the model's size and on the machine, not on the core
// count. A step of a small model crosses ~40 parallel regions, each of which wakes a sleeping thread (20-33 us
// on the VMs measured, docs/performance/threads.md), and on a core fast enough the work a region splits is worth less
// than that: on an Intel Xeon with AMX (2 cores) MR's Star recipe ran 5.29 ms a step on 2 threads and 4.62 on
// one, where the same recipe on a Skylake-SP gained 1.3x from the second thread (docs/performance/threads.md).
// No constant threshold holds on both; the steps themselves say which count is faster.
//
// How: after `warmup` steps at the default count (first-touch allocations, caches), `trials` steps are trials:
// the step's batch runs forward and backward at each candidate count in turn, every run but the last thrown
// away (its gradients cleared, the dropout generator rewound), the last one the step's own. Comparing counts on
// the same batch takes out what differs from batch to batch (lengths, padding), which swamped a 10-20%
// difference when whole steps at different counts were compared per token. The first count of a trial runs
// with colder caches, so the order turns each trial (A B, B A, ...). The count with the lowest median time
// relative to candidates[0] (strictly lower: a tie keeps the default) runs the next `hold` steps; a first round
// whose first `decisive` trials all favour one count by more than `margin` ends there. Then a check of two
// trials (`retrials`, one in each order) changes the choice only for a gain of more than `margin`, the hold
// doubling each time up to `max_hold`, so that a neighbour that loaded the cores during one round (a build,
// another run) does not decide the whole run. The cost is one extra forward and backward per trial: 4 to 8, then
// 2 per hold (10-14 in MR's 1,056 steps; with 8 and 4 per hold it was 20, 2-3% of the run's time).
// Every kernel gives the same bits at any thread count (chunks and slabs of K fixed by the shape:
// kernels/dense/gemm.hpp; tests/apps/test_thread_tuner.cpp trains at 1, 2 and 3 threads), so the choice changes
// the speed of a run, never its results, and a resumed run may choose anew.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace topo::apps {

class ThreadTuner {
 public:
  struct Options {
    int warmup = 3;       // steps at candidates[0] before the first trials
    int trials = 8;       // trials (steps whose batch runs at every count) in the first round, at most
    int decisive = 4;     // ... at least: it ends here when every trial so far favoured one count by > margin
    int retrials = 2;     // in the later rounds (a check of the choice: one trial in each order)
    int hold = 128;       // steps at the chosen count before the next round (doubling each time)
    int max_hold = 2048;  // the hold stops doubling here
    double margin = 0.1;  // a decisive trial, and what a later round must gain to change the choice
  };
  // candidates[0] is the default (run during the warm-up, kept on a tie); at least one count, each >= 1.
  explicit ThreadTuner(std::vector<int> candidates);
  ThreadTuner(std::vector<int> candidates, Options options);

  // The steps before the first choice. A run shorter than 40 times that (440 steps) keeps candidates[0]
  // (`enough_steps`): its trials would cost more than they can gain.
  std::int64_t steps_needed() const;
  static bool enough_steps(std::int64_t total_steps, const Options& options);

  // Whether the next step is a trial, and the counts its batch runs at, in order (the last run is the step's).
  bool trial_due() const { return phase_ == Phase::trials; }
  std::vector<int> trial_order() const;
  // The count of a step that is not a trial.
  int next() const { return phase_ == Phase::warmup ? candidates_[0] : candidates_[chosen_]; }
  // A step that is not a trial has run at next().
  void record_step();
  // A trial has run: seconds[i] is the batch's forward and backward at trial_order()[i]. True when it ended a
  // round whose choice differs from the count chosen before (or is the first choice).
  bool record_trial(const std::vector<double>& seconds);

  bool decided() const { return rounds_ > 0; }
  int chosen() const { return candidates_[chosen_]; }  // candidates[0] until decided

  // "1 thread took 0.87x the time of 2 threads (median of 8 batches run at both)": the last round, for the log.
  std::string summary() const;
  // {"rounds": N, "chosen": 1, "counts": {"1": {"time_over_default": 0.87, "trials": 8, "steps_run": ..}, ..}}:
  // the last round's medians, and the steps each count ran in all (trials' last runs included).
  nlohmann::json report() const;

 private:
  enum class Phase { warmup, trials, hold };
  bool decisive() const;  // this (first) round's trials so far all favour one count by more than the margin
  bool decide();

  std::vector<int> candidates_;
  Options options_;
  Phase phase_ = Phase::warmup;
  std::int64_t in_phase_ = 0;                 // steps recorded in the current phase
  std::int64_t trials_done_ = 0;              // trials over the whole run (turns the order)
  std::int64_t hold_ = 0;                     // the current hold's length
  std::vector<std::vector<double>> ratio_;    // per candidate: its time over candidates[0]'s, this round
  std::vector<std::int64_t> steps_run_;       // per candidate: the steps whose update ran at that count
  int rounds_ = 0;
  std::size_t chosen_ = 0;
};

}  // namespace topo::apps
