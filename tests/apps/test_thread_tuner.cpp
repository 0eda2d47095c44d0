// The measured thread count of a training run (apps/train/thread_tuner.hpp): the trials' order and decision,
// and what makes the choice safe — a run trains to the same bits at 1, 2 and 3 threads (slabs of K in the
// weight gradients included), so a tuned run equals a run at any fixed count.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/train/config.hpp"
#include "apps/train/thread_tuner.hpp"
#include "apps/train/trainer.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/error.hpp"
#include "kernels/threads.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::apps;
namespace fs = std::filesystem;

namespace {
// A trial's seconds in trial_order(): 2 threads take `two`, 1 thread `one`.
std::vector<double> trial_times(const ThreadTuner& t, double two, double one) {
  std::vector<double> seconds;
  for (int count : t.trial_order()) seconds.push_back(count == 2 ? two : one);
  return seconds;
}
}  // namespace

TEST_CASE("thread tuner: warm-up at the default, trials on the same batch in turned order, rounds that re-check") {
  ThreadTuner t({2, 1}, {.warmup = 2, .trials = 4, .retrials = 2, .hold = 3, .max_hold = 5});
  CHECK(t.steps_needed() == 6);
  for (int step = 0; step < 2; ++step) {
    CHECK_FALSE(t.trial_due());
    CHECK(t.next() == 2);
    t.record_step();
  }
  // Round 1: one thread takes 0.8x the time of two, but for one disturbed batch (a median ignores it).
  std::vector<std::vector<int>> orders;
  for (int trial = 0; trial < 4; ++trial) {
    REQUIRE(t.trial_due());
    CHECK_FALSE(t.decided());
    orders.push_back(t.trial_order());
    CHECK_THROWS_AS(t.record_step(), Error);
    const bool changed = t.record_trial(trial_times(t, 1.0, trial == 1 ? 3.0 : 0.8));
    CHECK(changed == (trial == 3));
  }
  CHECK(orders == std::vector<std::vector<int>>{{2, 1}, {1, 2}, {2, 1}, {1, 2}});
  REQUIRE(t.decided());
  CHECK(t.chosen() == 1);
  nlohmann::json r = t.report();
  CHECK(r.at("rounds") == 1);
  CHECK(r.at("counts").at("1").at("time_over_default").get<double>() == doctest::Approx(0.8));
  CHECK(r.at("counts").at("1").at("trials") == 4);
  CHECK(r.at("counts").at("2").at("steps_run") == 4);  // the warm-up's two and two trials' own passes
  CHECK(r.at("counts").at("1").at("steps_run") == 2);
  CHECK(t.summary() == "1 thread took 0.80x the time of 2 (median of 4 batches run at both)");
  // A hold of 3 at the choice, then a shorter round: the load lifted, two threads now win.
  for (int step = 0; step < 3; ++step) {
    CHECK_FALSE(t.trial_due());
    CHECK(t.next() == 1);
    t.record_step();
  }
  CHECK_FALSE(t.record_trial(trial_times(t, 1.0, 1.25)));
  CHECK(t.record_trial(trial_times(t, 1.0, 1.25)));
  CHECK(t.chosen() == 2);
  // The hold doubled, capped at 5; then the next round, where the same choice is no change.
  for (int step = 0; step < 5; ++step) {
    CHECK_FALSE(t.trial_due());
    t.record_step();
  }
  CHECK_FALSE(t.record_trial(trial_times(t, 1.0, 1.25)));
  CHECK_FALSE(t.record_trial(trial_times(t, 1.0, 1.25)));
  CHECK(t.report().at("rounds") == 3);
  CHECK_THROWS_AS(t.record_trial({1.0}), Error);  // no trial due (and one time for two counts)
}

TEST_CASE("thread tuner: a decisive first round ends early; a tie keeps the default; a check needs the margin") {
  // Four trials that all favour one thread by more than 10%: the round ends there, not at eight.
  ThreadTuner fast({2, 1}, {.warmup = 0, .trials = 8, .decisive = 4});
  for (int trial = 0; trial < 3; ++trial) CHECK_FALSE(fast.record_trial(trial_times(fast, 1.0, 0.7)));
  CHECK(fast.record_trial(trial_times(fast, 1.0, 0.7)));
  CHECK(fast.chosen() == 1);
  CHECK(fast.report().at("counts").at("1").at("trials") == 4);
  // One of the four within the margin: the round runs its eight.
  ThreadTuner close({2, 1}, {.warmup = 0, .trials = 8, .decisive = 4});
  for (int trial = 0; trial < 7; ++trial) CHECK_FALSE(close.record_trial(trial_times(close, 1.0, trial == 2 ? 0.95 : 0.7)));
  CHECK(close.record_trial(trial_times(close, 1.0, 0.7)));
  CHECK(close.chosen() == 1);
  // Two threads by far: decided after four as well, for the default.
  ThreadTuner slow({2, 1}, {.warmup = 0, .trials = 8, .decisive = 4});
  for (int trial = 0; trial < 4; ++trial) slow.record_trial(trial_times(slow, 1.0, 1.5));
  CHECK(slow.decided());
  CHECK(slow.chosen() == 2);
  // A later round that favours the other count by less than the margin keeps the choice.
  ThreadTuner keep({2, 1}, {.warmup = 0, .trials = 2, .retrials = 2, .hold = 1, .max_hold = 1});
  keep.record_trial(trial_times(keep, 1.0, 0.8));
  keep.record_trial(trial_times(keep, 1.0, 0.8));
  REQUIRE(keep.chosen() == 1);
  keep.record_step();  // the hold
  CHECK_FALSE(keep.record_trial(trial_times(keep, 1.0, 1.05)));
  CHECK_FALSE(keep.record_trial(trial_times(keep, 1.0, 1.05)));  // 2 threads 5% faster: not enough to change
  CHECK(keep.chosen() == 1);

  ThreadTuner tie({2, 1}, {.warmup = 0, .trials = 2});
  REQUIRE(tie.trial_due());
  tie.record_trial({1.0, 1.0});
  tie.record_trial({1.0, 1.0});
  CHECK(tie.decided());
  CHECK(tie.chosen() == 2);
  ThreadTuner one({4});
  CHECK(one.decided());
  CHECK_FALSE(one.trial_due());
  one.record_step();
  CHECK(one.next() == 4);
  CHECK(ThreadTuner::enough_steps(440, {.warmup = 3, .trials = 8}));
  CHECK_FALSE(ThreadTuner::enough_steps(439, {.warmup = 3, .trials = 8}));
  CHECK_THROWS_AS(ThreadTuner({}), Error);
  CHECK_THROWS_AS(ThreadTuner({2, 0}), Error);
  CHECK_THROWS_AS(ThreadTuner({2, 1}, {.warmup = 0, .trials = 0}), Error);
  CHECK_THROWS_AS(ThreadTuner({2, 1}, {.warmup = 0, .trials = 2, .retrials = 2, .hold = 8, .max_hold = 4}), Error);
  CHECK_THROWS_AS(ThreadTuner({2, 1}, {.warmup = 0, .trials = 2, .retrials = 0}), Error);
  CHECK_THROWS_AS(ThreadTuner({2, 1}, {.warmup = 0, .trials = 2, .margin = 1.0}), Error);
}

namespace {

// Star on masked summation with batches of 8,192 tokens and width 32: the weight gradients' products have
// K = 8,192 >= 16 max(M, N), so they run as slabs of K; dropout and clipping make every reduction count.
TrainConfig big_batch_config(const fs::path& out, const std::string& model, int threads) {
  TrainConfig c;
  c.set("task", "masked-sum").set("model", model);
  c.set("n", 32).set("k", 3).set("d", 4);
  c.set("train_size", 256 * 24).set("dev_size", 64).set("test_size", 64);
  c.epochs = 1;
  c.hidden = 32;
  c.head_hidden = 32;
  c.set("heads", 4);
  c.batch = 256;
  c.dropout = 0.1;
  c.lr = 3e-3;
  c.progress = "none";
  c.threads = threads;
  c.out = out.string();
  return c;
}

}  // namespace

TEST_CASE("training gives the same bits at 1, 2 and 3 threads, and a tuned run equals them") {
  REQUIRE(cpu::split_k_parts(32, 128, 256 * 32) > 1);  // the case the test is about
  const int before = num_threads();
  for (const std::string model : {"star", "transformer", "multiscale"}) {
    CAPTURE(model);
    // Big batches at fixed counts: slabs of K in the weight gradients.
    const fs::path one = testing::fresh_temp_dir("threads_bits_1");
    const TrainResult base = Trainer(big_batch_config(one, model, 1)).run();
    REQUIRE(base.completed);
    REQUIRE(base.losses.size() == 24u);
    for (int threads : {2, 3}) {
      CAPTURE(threads);
      const fs::path dir = testing::fresh_temp_dir("threads_bits_n");
      const TrainResult r = Trainer(big_batch_config(dir, model, threads)).run();
      REQUIRE(r.completed);
      CHECK(r.losses == base.losses);  // bitwise
      CHECK(r.test_metric == base.test_metric);  // the parameters it ended with
      CHECK(r.result.at("thread_trials").is_null());  // a given count: nothing measured
      fs::remove_all(dir);
    }
    fs::remove_all(one);
    // Small batches, long enough for the trials (440 steps): the measured default against one thread.
    auto small = [&](const fs::path& out, int threads) {
      TrainConfig c = big_batch_config(out, model, threads);
      c.set("n", 12).set("train_size", 8 * 450);
      c.batch = 8;
      return c;
    };
    const fs::path a = testing::fresh_temp_dir("threads_tuned_1"), b = testing::fresh_temp_dir("threads_tuned");
    const TrainResult fixed = Trainer(small(a, 1)).run(), tuned = Trainer(small(b, 0)).run();
    REQUIRE(fixed.completed);
    REQUIRE(tuned.completed);
    REQUIRE(fixed.losses.size() == 450u);
    CHECK(tuned.losses == fixed.losses);  // bitwise: the trials' discarded passes leave no trace
    CHECK(tuned.test_metric == fixed.test_metric);
    const nlohmann::json trials = tuned.result.at("thread_trials");
    if (thread_choice().threads > 1 && probe_core_limits().omp_num_threads.empty()) {
      REQUIRE(trials.is_object());
      CHECK(trials.at("decided") == true);
      CHECK(trials.at("counts").at("1").at("trials").get<int>() >= 2);
      CHECK(trials.at("rounds").get<int>() >= 2);  // 3 + 4 to 8, a hold of 128, 2 trials, a hold of 256, ...
      const std::int64_t run = trials.at("counts").at("1").at("steps_run").get<std::int64_t>() +
                               trials.at("counts").at("2").at("steps_run").get<std::int64_t>();
      CHECK(run == 450);
      CHECK(tuned.result.at("threads") == trials.at("chosen"));
      CHECK(tuned.result.at("threads_source").get<std::string>().find("batches run at both") != std::string::npos);
    } else {
      CHECK(trials.is_null());  // one CPU, or a count from the environment: nothing to measure
    }
    fs::remove_all(a);
    fs::remove_all(b);
  }
  set_num_threads(before);
}

TEST_CASE("graph training gives the same bits at 1 and 2 threads and tuned: GCN, GAT, GraphSAGE, generated graph") {
  // 1,000 nodes of 16 features: the first layer's weight gradient has K = 1,000 >= 16 max(16, 16) (slabs of K).
  // GAT's attention dropout draws from the run's generator, which a trial's discarded pass rewinds. One step an
  // epoch: 450 epochs for the trials.
  const int before = num_threads();
  for (const std::string model : {"gcn", "gat", "sage"}) {
    CAPTURE(model);
    std::vector<float> losses[3];
    double test[3] = {0, 0, 0};
    for (int threads : {1, 2, 0}) {
      const fs::path dir = testing::fresh_temp_dir("threads_bits_graph");
      TrainConfig c;
      c.set("task", "node-classify").set("model", model);
      c.set("data", "csbm:nodes=1000,degree=8,classes=3,features=16");
      c.set("epochs", 450).set("hidden", 16).set("patience", 0);
      c.progress = "none";
      c.threads = threads;
      c.out = dir.string();
      const TrainResult r = Trainer(c).run();
      REQUIRE(r.completed);
      losses[threads] = r.losses;
      test[threads] = r.test_metric;
      fs::remove_all(dir);
    }
    REQUIRE(losses[1].size() == 450u);
    CHECK(losses[2] == losses[1]);  // bitwise
    CHECK(test[2] == test[1]);
    CHECK(losses[0] == losses[1]);  // the tuned run
    CHECK(test[0] == test[1]);
  }
  set_num_threads(before);
}
