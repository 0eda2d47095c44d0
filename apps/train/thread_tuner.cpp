#include "apps/train/thread_tuner.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "kernels/error.hpp"

namespace topo::apps {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace

ThreadTuner::ThreadTuner(std::vector<int> candidates) : ThreadTuner(std::move(candidates), Options{}) {}

ThreadTuner::ThreadTuner(std::vector<int> candidates, Options options)
    : candidates_(std::move(candidates)),
      options_(options),
      ratio_(candidates_.size()),
      steps_run_(candidates_.size(), 0) {
  TOPO_CHECK(!candidates_.empty(), "thread tuner: no candidate thread counts");
  for (int c : candidates_) TOPO_CHECK(c >= 1, "thread tuner: thread count {} must be >= 1", c);
  TOPO_CHECK(options_.warmup >= 0 && options_.trials >= 1 && options_.decisive >= 1 && options_.retrials >= 1 &&
                 options_.hold >= 1 && options_.max_hold >= options_.hold && options_.margin >= 0 && options_.margin < 1,
             "thread tuner: warmup {} must be >= 0, trials {}, decisive {}, retrials {} and hold {} >= 1, max_hold {} "
             ">= hold, margin {} in [0, 1)",
             options_.warmup, options_.trials, options_.decisive, options_.retrials, options_.hold, options_.max_hold,
             options_.margin);
  if (candidates_.size() == 1) {  // nothing to compare: chosen from the start, never timed
    phase_ = Phase::hold;
    hold_ = std::numeric_limits<std::int64_t>::max();
    rounds_ = 1;
  } else if (options_.warmup == 0) {
    phase_ = Phase::trials;
  }
}

std::int64_t ThreadTuner::steps_needed() const { return options_.warmup + options_.trials; }

bool ThreadTuner::enough_steps(std::int64_t total_steps, const Options& options) {
  // The first round's extra passes should cost little of the run: at least 40 times its steps. Each trial adds a
  // pass at the other count; on runs of ~60 steps the 8 of them cost up to 14% (CoNLL-2003 cut to 59 steps,
  // 2 threads: 9.7 ms a step at a fixed count, 11.2 tuned), more than a choice of count gains.
  return total_steps >= 40 * (options.warmup + options.trials);
}

std::vector<int> ThreadTuner::trial_order() const {
  // Turned by one each trial: A B, B A, A B ... (with two counts).
  const std::size_t n = candidates_.size();
  std::vector<int> order(n);
  for (std::size_t i = 0; i < n; ++i)
    order[i] = candidates_[(i + static_cast<std::size_t>(trials_done_ % static_cast<std::int64_t>(n))) % n];
  return order;
}

void ThreadTuner::record_step() {
  TOPO_CHECK(phase_ != Phase::trials, "thread tuner: a trial is due, not a plain step");
  ++steps_run_[phase_ == Phase::warmup ? 0 : chosen_];
  ++in_phase_;
  if (phase_ == Phase::warmup && in_phase_ >= options_.warmup) {
    phase_ = Phase::trials;
    in_phase_ = 0;
  } else if (phase_ == Phase::hold && in_phase_ >= hold_) {
    phase_ = Phase::trials;
    in_phase_ = 0;
    for (auto& v : ratio_) v.clear();
  }
}

bool ThreadTuner::record_trial(const std::vector<double>& seconds) {
  TOPO_CHECK(phase_ == Phase::trials, "thread tuner: no trial is due");
  const std::vector<int> order = trial_order();
  TOPO_CHECK(seconds.size() == order.size(), "thread tuner: {} times for a trial of {} counts", seconds.size(),
             order.size());
  std::vector<double> by_candidate(candidates_.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto c = static_cast<std::size_t>(std::find(candidates_.begin(), candidates_.end(), order[i]) - candidates_.begin());
    by_candidate[c] = seconds[i];
    if (i + 1 == order.size()) ++steps_run_[c];
  }
  for (std::size_t c = 0; c < candidates_.size(); ++c)
    ratio_[c].push_back(by_candidate[0] > 0 ? by_candidate[c] / by_candidate[0] : 1.0);
  ++trials_done_;
  ++in_phase_;
  const bool planned_done = in_phase_ >= (rounds_ == 0 ? options_.trials : options_.retrials);
  if (!planned_done && !(rounds_ == 0 && in_phase_ >= options_.decisive && decisive())) return false;
  const bool changed = decide();
  phase_ = Phase::hold;
  in_phase_ = 0;
  hold_ = hold_ == 0 ? options_.hold : std::min<std::int64_t>(2 * hold_, options_.max_hold);
  return changed;
}

bool ThreadTuner::decisive() const {
  // Every trial so far favours one count over all the others by more than the margin.
  const auto all = [&](std::size_t c, auto favoured) {
    return std::all_of(ratio_[c].begin(), ratio_[c].end(), favoured);
  };
  for (std::size_t c = 1; c < candidates_.size(); ++c)
    if (all(c, [&](double r) { return r < 1.0 - options_.margin; })) return candidates_.size() == 2;
  for (std::size_t c = 1; c < candidates_.size(); ++c)
    if (!all(c, [&](double r) { return r > 1.0 + options_.margin; })) return false;
  return true;  // the default by far
}

bool ThreadTuner::decide() {
  const std::size_t before = chosen_;
  const auto ratio = [&](std::size_t c) { return c == 0 ? 1.0 : median(ratio_[c]); };
  std::size_t best = 0;
  for (std::size_t c = 1; c < candidates_.size(); ++c)
    if (ratio(c) < ratio(best)) best = c;  // strictly faster: a tie keeps the default
  // A later round changes the choice only for a gain above the margin (single trials scatter by ~5-10%).
  if (rounds_ > 0 && best != chosen_ && ratio(best) > (1.0 - options_.margin) * ratio(chosen_)) best = chosen_;
  chosen_ = best;
  ++rounds_;
  return rounds_ == 1 || chosen_ != before;
}

std::string ThreadTuner::summary() const {
  std::string out;
  for (std::size_t c = 1; c < candidates_.size(); ++c)
    out += fmt::format("{}{} thread{} took {:.2f}x the time of {} (median of {} batches run at both)", c == 1 ? "" : "; ",
                       candidates_[c], candidates_[c] == 1 ? "" : "s", median(ratio_[c]), candidates_[0],
                       ratio_[c].size());
  return out;
}

nlohmann::json ThreadTuner::report() const {
  nlohmann::json counts = nlohmann::json::object();
  for (std::size_t c = 0; c < candidates_.size(); ++c)
    counts[std::to_string(candidates_[c])] = {{"time_over_default", median(ratio_[c])},
                                              {"trials", ratio_[c].size()},
                                              {"steps_run", steps_run_[c]}};
  return {{"rounds", rounds_}, {"counts", counts}, {"decided", decided()}, {"chosen", chosen()}};
}

}  // namespace topo::apps
