#include "apps/train/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include "apps/tasks/rng.hpp"
#include "apps/tasks/task.hpp"
#include "apps/train/io.hpp"
#include "kernels/atomic_file.hpp"
#include "apps/train/model_factory.hpp"
#include "apps/train/progress.hpp"
#include "kernels/error.hpp"
#include "kernels/profile.hpp"
#include "nn/checkpoint.hpp"
#include "nn/optim.hpp"
#include "nn/schedule.hpp"

namespace topo::apps {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

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

// Stream keys of the run's independent random streams (data use the seed directly; 3 is the shuffle's).
constexpr std::uint64_t kInitStream = 1, kDropoutStream = 2;

std::uint64_t stream_seed(std::int64_t seed, std::uint64_t stream) {
  return SplitMix64({static_cast<std::uint64_t>(seed), stream}).next();
}

void check_same_config(const nlohmann::json& saved, const TrainConfig& now, const std::string& path) {
  const nlohmann::json current = now.to_json();
  const auto& runtime = TrainConfig::runtime_fields();
  for (const auto& [key, value] : current.items()) {
    if (std::find(runtime.begin(), runtime.end(), key) != runtime.end()) continue;
    TOPO_CHECK(saved.contains(key), "resume: checkpoint {} has no config field '{}'", path, key);
    TOPO_CHECK(saved.at(key) == value,
               "resume: config field '{}' = {} differs from the checkpoint's {} ({}); resume with the same "
               "settings or start a fresh run in another --out",
               key, value.dump(), saved.at(key).dump(), path);
  }
}

}  // namespace

std::string summary_line(const TrainConfig& c, const TrainResult& r) {
  std::string test = "no test split";
  if (r.has_test) {
    test = fmt::format("test {} {:.6f}", r.metric, r.test_metric);
    for (const auto& [key, value] : r.baseline.items())
      if (value.is_number()) test += fmt::format(", {} {:.6f}", key, value.get<double>());
  }
  return fmt::format("{} {} ({}): {}; best dev {} {:.6f} at step {}{}; {} params, {:.2f} s -> {}", c.task, c.model,
                     c.variant, test, r.metric, r.best_dev_metric, r.best_step,
                     r.stopped_early ? " (stopped early)" : "", r.params, r.train_seconds, Trainer::result_path(c.out));
}

Trainer::Trainer(TrainConfig config) : config_(std::move(config)) { config_.validate(); }

TrainResult Trainer::run() {
  namespace fs = std::filesystem;
  const TrainConfig& c = config_;
  if (c.threads > 0) set_num_threads(static_cast<int>(c.threads));
  const Device device = Device::parse(c.device);
  require_available(device);
  const auto seed = static_cast<std::uint64_t>(c.seed);
  const std::unique_ptr<Task> task_owner = make_task(c);
  const Task& task = *task_owner;
  const bool higher_better = task.higher_is_better();
  const std::string metric = task.metric();
  auto better = [&](double a, double b) { return higher_better ? a > b : a < b; };

  // Every dropout mask comes from the default generator (the attention encoders use it implicitly), so
  // seeding and checkpointing it covers them all.
  nn::Generator& dropout_gen = nn::default_generator();
  dropout_gen.set_seed(stream_seed(c.seed, kDropoutStream));
  const std::shared_ptr<models::SequenceModel> model = make_task_model(c, task, &dropout_gen);
  model->reset_parameters(stream_seed(c.seed, kInitStream));
  model->to(device);
  const std::vector<nn::Var> params = model->parameters();
  auto groups = nn::split_decay_groups(model->named_parameters(), static_cast<float>(c.weight_decay));
  nn::AdamOptions adam;
  adam.lr = static_cast<float>(c.lr);
  std::unique_ptr<nn::Optimizer> optimizer;
  if (c.optimizer == "adamw")
    optimizer = std::make_unique<nn::AdamW>(std::move(groups), adam);
  else
    optimizer = std::make_unique<nn::Adam>(std::move(groups), adam);

  // Every epoch has as many batches (the task cuts the same sizes in another order).
  const std::int64_t steps_per_epoch = static_cast<std::int64_t>(task.epoch_batches(c.batch, seed, 0).size());
  const std::int64_t total_steps = c.epochs * steps_per_epoch;
  nn::LrSchedule schedule;
  schedule.kind = nn::parse_schedule_kind(c.schedule);
  schedule.base_lr = static_cast<float>(c.lr);
  schedule.warmup_steps = c.warmup;
  schedule.total_steps = total_steps;
  try {
    schedule.validate();
  } catch (const Error& e) {
    fail("invalid config field 'schedule' = '{}' with warmup = {} over {} steps: {}", c.schedule, c.warmup,
         total_steps, e.what());
  }

  fs::create_directories(c.out);
  const std::string ckpt = checkpoint_path(c.out), best = best_path(c.out), metrics = metrics_path(c.out),
                    result_file = result_path(c.out);
  TrainResult r;
  r.metric = metric;
  r.params = model->num_parameters(true);
  std::int64_t start_epoch = 0, step = 0;
  double best_dev = higher_better ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  nlohmann::json best_dev_values = nlohmann::json::object();
  std::int64_t best_step = -1;
  std::int64_t evals_since_best = 0;  // early stopping counts evaluations without a better dev metric
  double window_sum = 0.0;  // training loss since the last evaluation
  std::int64_t window_steps = 0;
  if (c.resume) {
    TOPO_CHECK(fs::exists(ckpt), "resume: no checkpoint at '{}' (run without --resume first)", ckpt);
    const nn::CheckpointInfo info = nn::load_checkpoint(ckpt, *model, optimizer.get(), &dropout_gen);
    const nlohmann::json& meta = info.metadata;
    TOPO_CHECK(meta.is_object() && meta.contains("config") && meta.contains("epochs_done"),
               "resume: '{}' was not written by topo-train (no config / epochs_done metadata)", ckpt);
    check_same_config(meta.at("config"), c, ckpt);
    start_epoch = meta.at("epochs_done").get<std::int64_t>();
    step = info.step;
    if (!meta.at("best_dev").is_null()) best_dev = meta.at("best_dev").get<double>();
    best_dev_values = meta.at("best_dev_values");
    best_step = meta.at("best_step").get<std::int64_t>();
    evals_since_best = meta.at("evals_since_best").get<std::int64_t>();
    window_sum = meta.at("window_loss_sum").get<double>();
    window_steps = meta.at("window_steps").get<std::int64_t>();
    // Evaluations an interrupted run logged after its last checkpoint are redone: drop them.
    std::string kept;
    for (const nlohmann::json& line : read_json_lines(metrics, /*drop_torn_tail=*/true))
      if (line.value("step", std::int64_t{0}) <= step) kept += line.dump() + "\n";
    write_file_atomically(metrics, kept);
  } else {
    for (const std::string& stale : {ckpt, best, metrics, result_file}) fs::remove(stale);
  }
  r.steps = step;
  r.epochs_done = start_epoch;

  Profile profile;
  Progress progress(Progress::parse_mode(c.progress, stderr), total_steps, c.epochs, c.log_every);
  {
    const nlohmann::json meta = task.metadata();
    if (meta.contains("data"))
      for (const auto& [split, stats] : meta.at("data").items())
        if (stats.value("invalid_utf8_lines", 0) > 0 || stats.value("skipped_bad", 0) > 0 || stats.value("truncated", 0) > 0)
          progress.message(fmt::format("{} data: {} invalid UTF-8 lines (decoded with U+FFFD), {} malformed lines "
                                       "skipped, {} examples truncated to {} tokens",
                                       split, stats.value("invalid_utf8_lines", 0), stats.value("skipped_bad", 0),
                                       stats.value("truncated", 0), meta.value("max_length", 0)));
    // Word vectors: the coverage line (also result.json's "vectors") and the malformed lines skipped.
    if (const nlohmann::json v = meta.value("vectors", nlohmann::json()); v.is_object()) {
      const nlohmann::json& cov = v.at("train_coverage");
      progress.message(fmt::format(
          "vectors {} ({}-d): {} of {} vocabulary types ({:.1f}%, {} lowercased) and {} of {} training tokens "
          "({:.1f}%) found; {} malformed lines skipped; loaded in {:.0f} ms",
          v.at("file").get<std::string>(), v.at("dim").get<std::int64_t>(), cov.at("types_found").get<std::int64_t>(),
          cov.at("types").get<std::int64_t>(), cov.at("types_pct").get<double>(),
          v.at("found_lowercase").get<std::int64_t>(), cov.at("tokens_found").get<std::int64_t>(),
          cov.at("tokens").get<std::int64_t>(), cov.at("tokens_pct").get<double>(), v.at("bad_lines").get<std::int64_t>(),
          1e3 * v.at("load_seconds").get<double>()));
      for (const nlohmann::json& bad : v.at("bad_line_examples")) progress.message("  skipped " + bad.get<std::string>());
    }
  }
  const auto t_start = Clock::now();
  std::int64_t tokens_seen = 0;

  // --profile: per-op-category kernel time of training steps (kernels/profile.hpp); evaluations are left out.
  if (c.profile) {
    topo::profile::reset();
    topo::profile::enable(true);
  }
  struct ProfileOff {
    bool was = topo::profile::enabled();
    ProfileOff() { topo::profile::enable(false); }
    ~ProfileOff() { topo::profile::enable(was); }
  };

  auto evaluate_dev = [&](std::int64_t epoch) {
    const ProfileOff kernels_off;
    auto scope = profile.time("eval");
    const Evaluation eval = task.evaluate(*model, Split::Dev, device);
    const double dev = eval.metric;
    const bool improved = better(dev, best_dev);
    if (improved) {
      best_dev = dev;
      best_dev_values = eval.values;
      best_step = step;
      evals_since_best = 0;
      nn::save_checkpoint(best, *model, nullptr, nullptr, step,
                          {{"config", c.to_json()}, {"task", task.metadata()}, {"dev", eval.values}});
    } else {
      ++evals_since_best;
    }
    nlohmann::json line = {{"step", step}, {"epoch", epoch + 1}, {"split", "dev"}};
    line.update(eval.values);
    line["best_" + metric] = best_dev;
    line["train_loss"] = window_steps > 0 ? window_sum / double(window_steps) : 0.0;
    line["lr"] = optimizer->lr();
    line["seconds"] = seconds_since(t_start);
    append_json_line(metrics, line);
    window_sum = 0.0;
    window_steps = 0;
    progress.message(fmt::format("step {}: dev {} {:.6f}{}", step, metric, dev, improved ? " (best)" : ""));
  };

  progress.start(step);
  model->train();
  for (std::int64_t epoch = start_epoch; epoch < c.epochs; ++epoch) {
    const std::vector<std::vector<std::int64_t>> batches = task.epoch_batches(c.batch, seed, epoch);
    TOPO_CHECK(static_cast<std::int64_t>(batches.size()) == steps_per_epoch,
               "task '{}' cut epoch {} into {} batches, epoch 1 into {}", c.task, epoch + 1, batches.size(),
               steps_per_epoch);
    std::int64_t last_eval_step = -1;
    for (const std::vector<std::int64_t>& indices : batches) {
      TaskBatch batch;
      {
        auto scope = profile.time("data");
        batch = task.batch(Split::Train, indices).to(device);
      }
      nn::Var loss;
      float loss_value = 0.f;
      {
        auto scope = profile.time("forward");
        loss = task.loss(model->forward(batch.inputs), batch.targets);
        loss_value = loss.item();
      }
      TOPO_CHECK(std::isfinite(loss_value), "training diverged: loss {} at step {} (lower --lr or set --clip)",
                 loss_value, step);
      {
        auto scope = profile.time("backward");
        loss.backward();
      }
      {
        auto scope = profile.time("optimizer");
        if (c.clip > 0) nn::clip_grad_norm(params, static_cast<float>(c.clip));
        schedule.apply(*optimizer, step);
        optimizer->step();
        optimizer->zero_grad();
      }
      ++step;
      r.losses.push_back(loss_value);
      window_sum += loss_value;
      ++window_steps;
      tokens_seen += batch.inputs.num_tokens();
      progress.step(step, epoch, loss_value, batch.inputs.num_tokens());
      if (c.eval_every > 0 && step % c.eval_every == 0) {
        evaluate_dev(epoch);
        last_eval_step = step;
      }
    }
    // Every epoch ends with an evaluation when eval_every is 0; the run always ends with one.
    if ((c.eval_every == 0 || epoch + 1 == c.epochs) && last_eval_step != step) evaluate_dev(epoch);
    {
      auto scope = profile.time("checkpoint");
      nlohmann::json meta = {{"config", c.to_json()},
                             {"epochs_done", epoch + 1},
                             {"best_dev", std::isfinite(best_dev) ? nlohmann::json(best_dev) : nlohmann::json()},
                             {"best_dev_values", best_dev_values},
                             {"best_step", best_step},
                             {"evals_since_best", evals_since_best},
                             {"window_loss_sum", window_sum},
                             {"window_steps", window_steps}};
      nn::save_checkpoint(ckpt, *model, optimizer.get(), &dropout_gen, step, meta);
    }
    r.epochs_done = epoch + 1;
    r.steps = step;
    if (c.patience > 0 && evals_since_best >= c.patience && epoch + 1 < c.epochs) {
      progress.message(fmt::format("early stop after epoch {}: no better dev {} in {} evaluations", epoch + 1,
                                   metric, evals_since_best));
      r.stopped_early = true;
      break;
    }
    if (c.stop_after > 0 && epoch + 1 >= c.stop_after && epoch + 1 < c.epochs) {
      progress.finish();
      r.train_seconds = seconds_since(t_start);
      r.best_dev_metric = best_dev;
      r.best_step = best_step;
      return r;  // interrupted on purpose: resume continues from the checkpoint
    }
  }
  progress.finish();
  r.train_seconds = seconds_since(t_start);
  nlohmann::json kernel_profile;
  if (c.profile) {
    const topo::profile::Table table = topo::profile::snapshot();
    for (int p = 0; p < static_cast<int>(topo::profile::Phase::Count); ++p)
      for (int k = 0; k < static_cast<int>(topo::profile::Category::Count); ++k) {
        const topo::profile::Entry& e = table[static_cast<std::size_t>(p)][static_cast<std::size_t>(k)];
        if (e.calls == 0) continue;
        kernel_profile[topo::profile::phase_name(static_cast<topo::profile::Phase>(p))]
                      [topo::profile::category_name(static_cast<topo::profile::Category>(k))] = {
                          {"seconds", e.seconds}, {"calls", e.calls}};
      }
    topo::profile::enable(false);
  }

  // The final test evaluation uses the best-on-dev parameters.
  TOPO_CHECK(fs::exists(best), "no best-on-dev parameters at '{}' (was the run directory changed?)", best);
  nn::load_checkpoint(best, *model, nullptr, nullptr);
  r.has_test = task.size(Split::Test) > 0;
  nlohmann::json test_values;
  if (r.has_test) {
    auto scope = profile.time("test");
    const Evaluation test = task.evaluate(*model, Split::Test, device);
    r.test_metric = test.metric;
    test_values = test.values;
  }
  r.baseline = task.baseline(r.has_test ? Split::Test : Split::Dev);
  r.best_dev_metric = best_dev;
  r.best_step = best_step;
  r.completed = true;

  nlohmann::json result = {{"task", c.task}, {"model", c.model}, {"variant", c.variant}, {"metric", metric}};
  // Test figures as test_<name>; the best dev evaluation's as dev_<name>.
  if (r.has_test) {
    for (const auto& [key, value] : test_values.items()) result["test_" + key] = value;
    if (test_values.contains("ms_per_batch")) result["ms_per_test_batch"] = test_values.at("ms_per_batch");
  } else {
    result["test_" + metric] = nullptr;
    result["test_note"] = "the task has no test split: evaluate a checkpoint with topo-eval";
  }
  for (const auto& [key, value] : best_dev_values.items()) result["dev_" + key] = value;
  // The protocol's names (issue #13): the dev-selected checkpoint (best.ckpt) scored on dev and, when a test
  // file is given, once on test; topo-eval on the same file gives the same number.
  if (metric == "acc") {
    result["dev_accuracy"] = r.best_dev_metric;
    if (r.has_test) result["test_accuracy"] = r.test_metric;
  }
  result.update(r.baseline);
  result["baseline_split"] = r.has_test ? "test" : "dev";
  if (!higher_better && r.has_test && r.baseline.contains("baseline_" + metric))
    result[metric + "_over_baseline"] = r.test_metric / r.baseline.at("baseline_" + metric).get<double>();
  const nlohmann::json more = {{"best_dev_" + metric, r.best_dev_metric},
                               {"best_step", r.best_step},
                               {"epochs", c.epochs},
                               {"epochs_done", r.epochs_done},
                               {"stopped_early", r.stopped_early},
                               {"steps", r.steps},
                               {"train_seconds", r.train_seconds},
                               {"tokens_per_second", r.train_seconds > 0 ? double(tokens_seen) / r.train_seconds : 0.0},
                               {"resumed", c.resume},
                               {"params", r.params},
                               {"device", device.str()},
                               {"threads", num_threads()},
                               {"data", task.metadata().value("data", nlohmann::json::object())},
                               {"vectors", task.metadata().value("vectors", nlohmann::json())},
                               {"config", c.to_json()}};
  result.update(more);
  if (c.profile) {
    result["profile_seconds"] = profile.seconds;
    result["kernel_profile"] = kernel_profile;
  }
  r.result = result;
  write_file_atomically(result_file, result.dump(2) + "\n");
  return r;
}

}  // namespace topo::apps
