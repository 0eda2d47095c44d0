#include "apps/train/trainer.hpp"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <fmt/ranges.h>

#include "apps/tasks/rng.hpp"
#include "apps/tasks/task.hpp"
#include "apps/train/data_parallel.hpp"
#include "apps/train/io.hpp"
#include "apps/train/model_factory.hpp"
#include "apps/train/progress.hpp"
#include "apps/train/training_run.hpp"
#include "dist/gradient_reducer.hpp"
#include "kernels/atomic_file.hpp"
#include "kernels/dense/gemm_backend.hpp"
#include "kernels/error.hpp"
#include "kernels/memory.hpp"
#include "kernels/profile.hpp"
#include "kernels/storage.hpp"
#include "kernels/threads.hpp"
#include "nn/checkpoint.hpp"
#include "nn/json_input.hpp"
#include "nn/json_number.hpp"
#include "nn/optim.hpp"
#include "nn/schedule.hpp"

namespace topo::apps {
namespace {

// Stream keys of the run's independent random streams (data use the seed directly; 3 is the shuffle's).
constexpr std::uint64_t kInitStream = 1, kDropoutStream = 2;

std::uint64_t stream_seed(std::int64_t seed, std::uint64_t stream) {
  return SplitMix64({static_cast<std::uint64_t>(seed), stream}).next();
}

// SIGTERM / SIGINT during Trainer::run: the handler only records the signal; the step in progress finishes,
// then the run writes its checkpoint and stops (TrainResult::stop_signal). SA_RESETHAND gives a second signal
// the default action, which ends the process at once: every file the run writes is replaced atomically, so
// that loses nothing already written. SA_RESTART: the run's reads and writes are not cut short by it.
std::atomic<int> g_stop_signal{0};

extern "C" void record_stop_signal(int signal) { g_stop_signal.store(signal, std::memory_order_relaxed); }

int stop_signal_received() { return g_stop_signal.load(std::memory_order_relaxed); }

class StopSignalHandlers {
 public:
  StopSignalHandlers() {
    g_stop_signal.store(0);
    struct sigaction action {};
    action.sa_handler = record_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND | SA_RESTART;
    sigaction(SIGTERM, &action, &old_term_);
    sigaction(SIGINT, &action, &old_int_);
  }
  ~StopSignalHandlers() {
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGINT, &old_int_, nullptr);
  }
  StopSignalHandlers(const StopSignalHandlers&) = delete;
  StopSignalHandlers& operator=(const StopSignalHandlers&) = delete;

 private:
  struct sigaction old_term_ {}, old_int_ {};
};

void check_same_config(const nlohmann::json& saved, const TrainConfig& now, const std::string& path) {
  const nlohmann::json current = now.recorded_json();
  const auto& runtime = TrainConfig::runtime_fields();
  static const nlohmann::json defaults = TrainConfig{}.to_json();
  // The task and the model first: they decide which other fields a config holds, so another model's run
  // otherwise stopped at the first option its model has ("no config field 'attention'").
  for (const char* key : {"task", "model"})
    if (saved.contains(key) && current.contains(key))
      TOPO_CHECK(saved.at(key) == current.at(key),
                 "resume: --{} {} differs from the checkpoint's {} ({}); resume with the same settings or start a "
                 "fresh run in another --out",
                 key, current.at(key).get<std::string>(),
                 saved.at(key).is_string() ? saved.at(key).get<std::string>() : saved.at(key).dump(), path);
  for (const auto& [key, value] : current.items()) {
    if (std::find(runtime.begin(), runtime.end(), key) != runtime.end()) continue;
    // A checkpoint older than a field ran with that field's default (e.g. precision fp32).
    if (!saved.contains(key) && defaults.contains(key) && defaults.at(key) == value) continue;
    TOPO_CHECK(saved.contains(key), "resume: checkpoint {} has no config field '{}'", path, key);
    TOPO_CHECK(saved.at(key) == value,
               "resume: config field '{}' = {} differs from the checkpoint's {} ({}); resume with the same "
               "settings or start a fresh run in another --out",
               key, value.dump(), saved.at(key).dump(), path);
  }
}

}  // namespace

namespace detail {

TrainingRun::TrainingRun(const TrainConfig& c, dist::Communicator& comm)
    : c_(c), comm_(comm), distributed_(comm.size() > 1), root_(comm.rank() == 0) {
  host_memory::reset_peak();  // the allocator's peak is this run's (the process's RSS high-water mark cannot be)
  comm_.set_timeout_seconds(c.dist_timeout);
  threads_ = configure_threads(c.threads);  // under mpirun: the cores per rank on this node
  device_ = Device::parse(c.device);
  // Ranks on one node share its GPUs: "cuda" without an index means the local rank's device.
  if (distributed_ && device_.is_cuda() && c.device == "cuda" && cuda_device_count() > 0)
    device_ = Device::cuda(comm.local_rank() % cuda_device_count());
  require_available(device_);
  precision_ = configure_gemm_precision(c.precision, device_.is_cuda());
  seed_ = static_cast<std::uint64_t>(c.seed);
  task_ = make_task(c);
  higher_better_ = task_->higher_is_better();
  metric_ = task_->metric();
  best_dev_ = higher_better_ ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();

  dropout_gen_.set_seed(stream_seed(c.seed, kDropoutStream));
  model_ = make_task_model(c, *task_, &dropout_gen_);
  model_->reset_parameters(stream_seed(c.seed, kInitStream));
  model_->to(device_);
  task_->check_step_memory(*model_, device_);  // before the first step allocates: an error, not an OOM kill
  params_ = model_->parameters();
  auto groups =
      nn::split_decay_groups(model_->named_parameters(), static_cast<float>(c.weight_decay), c.weight_decay_only);
  const std::vector<WidthLrScale> width_scales = width_lr_scales(c, *task_, *model_);
  if (!width_scales.empty()) {
    std::vector<std::pair<nn::Var, float>> scales;
    std::set<float> distinct;
    for (const WidthLrScale& w : width_scales) scales.emplace_back(w.weight, w.scale()), distinct.insert(w.scale());
    groups = nn::split_lr_groups(groups, scales);
    width_lr_line_ = fmt::format(
        "lr per width: {} Linear weights whose fan-in grows with hidden learn at lr x {:.4g} (hidden {} against "
        "lr_base_width {}, muP's Adam rule; --lr-base-width 0: one lr)",
        width_scales.size(), fmt::join(distinct, " / "), c.hidden, c.lr_base_width);
  }
  nn::AdamOptions adam;
  adam.lr = static_cast<float>(c.lr);
  if (c.optimizer == "adamw")
    optimizer_ = std::make_unique<nn::AdamW>(std::move(groups), adam);
  else
    optimizer_ = std::make_unique<nn::Adam>(std::move(groups), adam);
  if (c.ema_decay > 0 && root_) average_.emplace(model_->named_parameters(), static_cast<float>(c.ema_decay));

  // Every epoch has as many batches (the task cuts the same sizes in another order).
  steps_per_epoch_ = static_cast<std::int64_t>(task_->epoch_batches(c.batch, seed_, 0).size());
  // min_steps (PyTorch Lightning's name): a small training set gets as many updates as the recipe assumes.
  epochs_ = std::max(c.epochs, (c.min_steps + steps_per_epoch_ - 1) / std::max<std::int64_t>(1, steps_per_epoch_));
  total_steps_ = epochs_ * steps_per_epoch_;
  schedule_.kind = nn::parse_schedule_kind(c.schedule);
  schedule_.base_lr = static_cast<float>(c.lr);
  schedule_.warmup_steps = c.warmup;
  schedule_.total_steps = total_steps_;
  // A recipe's warm-up yields to a run too short for it (`--epochs 1` on a small file): a decaying schedule needs
  // steps after its warm-up, so the recipe's shrinks to a tenth of the run. A --warmup the user gave stays (and an
  // impossible one is the error below).
  const auto warmup_source = c.sources.find("warmup");
  if ((schedule_.kind == nn::LrSchedule::Kind::Cosine || schedule_.kind == nn::LrSchedule::Kind::Linear) &&
      c.warmup >= total_steps_ && warmup_source != c.sources.end() && warmup_source->second.starts_with("recipe")) {
    schedule_.warmup_steps = total_steps_ / 10;
    warmup_line_ = fmt::format("warm-up shortened from the recipe's {} to {} steps: the run has {} ({} schedule)",
                               c.warmup, schedule_.warmup_steps, total_steps_, c.schedule);
  }
  try {
    schedule_.validate();
  } catch (const Error& e) {
    fail("invalid config field 'schedule' = '{}' with warmup = {} over {} steps: {}", c.schedule, c.warmup,
         total_steps_, e.what());
  }
  ckpt_ = Trainer::checkpoint_path(c.out);
  best_ = Trainer::best_path(c.out);
  metrics_ = Trainer::metrics_path(c.out);
  result_file_ = Trainer::result_path(c.out);
  r_.metric = metric_;
  r_.params = model_->num_parameters(true);
  r_.ranks = comm_.size();
  if (distributed_)
    reducer_ = std::make_unique<dist::GradientReducer>(
        comm_, params_, dist::ReducerOptions{static_cast<std::int64_t>(c.dist_bucket_mb * 1024 * 1024), c.dist_reduce == "overlap"});
}

nlohmann::json TrainingRun::bookkeeping(std::int64_t epochs_done, std::int64_t batches_done) const {
  return {{"epochs_done", epochs_done},
          {"epoch_batches_done", batches_done},
          {"last_eval_step", last_eval_step_},
          {"best_dev", std::isfinite(best_dev_) ? nlohmann::json(best_dev_) : nlohmann::json()},
          {"best_dev_values", best_dev_values_},
          {"best_step", best_step_},
          {"evals_since_best", evals_since_best_},
          {"window_loss_sum", window_sum_},
          {"window_steps", window_steps_}};
}

void TrainingRun::restore_bookkeeping(const nlohmann::json& meta) {
  start_epoch_ = json_number<std::int64_t>(meta.at("epochs_done"));
  // Checkpoints written before mid-epoch stops existed end an epoch.
  resume_batches_ = json_number_or(meta, "epoch_batches_done", std::int64_t{0});
  last_eval_step_ = json_number_or(meta, "last_eval_step", std::int64_t{-1});
  if (!meta.at("best_dev").is_null()) best_dev_ = meta.at("best_dev").get<double>();
  best_dev_values_ = meta.at("best_dev_values");
  best_step_ = json_number<std::int64_t>(meta.at("best_step"));
  evals_since_best_ = json_number<std::int64_t>(meta.at("evals_since_best"));
  window_sum_ = meta.at("window_loss_sum").get<double>();
  window_steps_ = json_number<std::int64_t>(meta.at("window_steps"));
}

// Rank 0's bookkeeping onto every rank (after its evaluations, which it alone runs).
void TrainingRun::share_bookkeeping() {
  if (!distributed_) return;
  nlohmann::json state = bookkeeping(start_epoch_, resume_batches_);
  dist::broadcast_json(comm_, state, 0);
  restore_bookkeeping(state);
}

void TrainingRun::start_or_resume() {
  namespace fs = std::filesystem;
  if (root_) {
    // The error_code form: a path that is a file threw std::filesystem_error, reported as an "internal error".
    std::error_code failed;
    fs::create_directories(c_.out, failed);
    TOPO_CHECK(!failed, "cannot create the run directory --out '{}': {}", c_.out, failed.message());
  }
  if (!root_) {
    // Rank 0 alone reads the run directory; the state comes from it below.
  } else if (c_.resume == "on" || (c_.resume == "auto" && fs::exists(ckpt_))) {
    TOPO_CHECK(fs::exists(ckpt_),
               "resume: no checkpoint at '{}' (run without --resume first, or with --resume auto: it starts fresh "
               "when there is none)",
               ckpt_);
    resumed_ = true;
    // The settings first (from the index alone): a changed one is named, not reported as a tensor that
    // does not fit the model it built.
    const nlohmann::json index = nn::read_checkpoint_index(ckpt_);
    const nlohmann::json& saved = index.contains("metadata") ? index.at("metadata") : index;
    TOPO_CHECK(saved.is_object() && saved.contains("config") && saved.contains("epochs_done"),
               "resume: '{}' was not written by topo-train (no config / epochs_done metadata)", ckpt_);
    check_same_config(saved.at("config"), c_, ckpt_);
    const nn::CheckpointInfo info = nn::load_checkpoint(ckpt_, *model_, optimizer_.get(), &dropout_gen_, average());
    const nlohmann::json& meta = info.metadata;
    restore_bookkeeping(meta);
    step_ = info.step;
    resume_note_ = fmt::format("{}resumed from {} at step {} (epoch {}, {} of its steps done)",
                               c_.resume == "auto" ? "resume auto: " : "", ckpt_, step_, start_epoch_ + 1,
                               resume_batches_);
    // Evaluations an interrupted run logged after its last checkpoint are redone: drop them.
    std::string kept;
    const std::vector<nlohmann::json> lines = read_json_lines(metrics_, /*drop_torn_tail=*/true);
    for (std::size_t k = 0; k < lines.size(); ++k) {
      std::int64_t step = 0;
      try {
        step = json_number<std::int64_t>(lines[k].at("step"));
      } catch (const nlohmann::json::exception& e) {
        // Every record this program writes is an object with an integer step: another is a damaged file, named
        // as such (nlohmann's exception alone was an "internal error" that named nothing).
        fail("resume: '{}' record {} is not a metrics line with an integer step: {} ({})", metrics_, k + 1,
             shown_json(lines[k], 80), e.what());
      }
      if (step <= step_) kept += lines[k].dump() + "\n";
    }
    write_file_atomically(metrics_, kept);
  } else {
    if (c_.resume == "auto") resume_note_ = fmt::format("resume auto: no checkpoint at {}, starting fresh", ckpt_);
    for (const std::string& stale : {ckpt_, best_, metrics_, result_file_}) fs::remove(stale);
  }
  if (distributed_) {
    // Every rank starts from rank 0's parameters, optimizer state and bookkeeping (fresh or resumed).
    nlohmann::json state = bookkeeping(start_epoch_, resume_batches_);
    state["step"] = step_;
    share_state_from_root(comm_, *model_, *optimizer_, state);
    restore_bookkeeping(state);
    step_ = json_number<std::int64_t>(state.at("step"));
  }
  r_.steps = step_;
  r_.epochs_done = start_epoch_;
}

bool TrainingRun::train() {
  // Rank 0 alone reports; the other ranks' progress is silent.
  progress_.emplace(root_ ? Progress::parse_mode(c_.progress, stderr) : Progress::Mode::None, total_steps_, epochs_,
                    c_.log_every);
  report_data_and_settings();  // first: what runs and where each setting came from
  if (!resume_note_.empty()) progress_->message(resume_note_);
  progress_->message(threads_line(threads_));
  progress_->message(kernel_isa_line());
  progress_->message(blas_line());
  progress_->message(gemm_backend_line());
  progress_->message(precision_.line);
  if (!width_lr_line_.empty()) progress_->message(width_lr_line_);
  if (!warmup_line_.empty()) progress_->message(warmup_line_);
  if (distributed_)
    progress_->message(fmt::format("data parallel: {} ranks ({}), each global batch of {} split in {} shards; {} "
                                   "gradient buckets of <= {:g} MiB reduced {}",
                                   comm_.size(), comm_.backend(), c_.batch, comm_.size(), reducer_->num_buckets(),
                                   c_.dist_bucket_mb, c_.dist_reduce == "overlap" ? "during backward" : "after backward"));
  if (epochs_ > c_.epochs)
    progress_->message(fmt::format("epochs raised from {} to {}: {} steps per epoch, min_steps {}", c_.epochs, epochs_,
                                   steps_per_epoch_, c_.min_steps));
  start_thread_tuner();
  t_start_ = Clock::now();
  // --profile: per-op-category kernel time of training steps (kernels/profile.hpp); evaluations are left out.
  if (c_.profile) {
    topo::profile::reset();
    topo::profile::enable(true);
  }
  progress_->start(step_);
  model_->train();
  // A signal during set-up (data, model): stop before the first step, leaving any checkpoint as it was. (Data
  // parallel ranks decide together, in the first step's collective.)
  if (!distributed_ && stop_signal_received() != 0) {
    progress_->finish();
    r_.epochs_done = start_epoch_;
    r_.steps = step_;
    r_.stop_signal = stop_signal_received();
    return false;
  }
  for (std::int64_t epoch = start_epoch_; epoch < epochs_; ++epoch) {
    train_epoch(epoch);
    if (stop_now_) {  // a stop signal: this step's state is the checkpoint, the command resumes it
      save_checkpoint(epoch, stopped_batches_);
      progress_->finish();
      r_.epochs_done = epoch;
      r_.steps = step_;
      r_.stop_signal = stopped_by_;
      r_.train_seconds = seconds_since(t_start_);
      r_.best_dev_metric = best_dev_;
      r_.best_step = best_step_;
      return false;
    }
    save_checkpoint(epoch + 1, 0);
    r_.epochs_done = epoch + 1;
    r_.steps = step_;
    if (c_.patience > 0 && evals_since_best_ >= c_.patience && step_ >= c_.min_steps && epoch + 1 < epochs_) {
      progress_->message(fmt::format("early stop after epoch {}: no better dev {} in {} evaluations", epoch + 1,
                                     metric_, evals_since_best_));
      r_.stopped_early = true;
      break;
    }
    if (c_.stop_after > 0 && epoch + 1 >= c_.stop_after && epoch + 1 < epochs_) {
      progress_->finish();
      r_.train_seconds = seconds_since(t_start_);
      r_.allreduce_seconds = reducer_ ? reducer_->stats().finish_seconds : 0.0;
      r_.best_dev_metric = best_dev_;
      r_.best_step = best_step_;
      return false;  // interrupted on purpose: resume continues from the checkpoint
    }
  }
  if (!epoch_seconds_.empty()) {
    std::vector<double> sorted = epoch_seconds_;
    std::sort(sorted.begin(), sorted.end());
    const nlohmann::json memory = memory_report();
    progress_->message(fmt::format("epochs: {:.3f} s median training time ({:.3f} s the first); peak RSS {}, "
                                   "allocator peak {}",
                                   sorted[sorted.size() / 2], epoch_seconds_.front(),
                                   format_bytes(memory.at("peak_rss_bytes").get<double>()),
                                   format_bytes(memory.at("allocator_peak_bytes").get<double>())));
  }
  progress_->finish();
  r_.train_seconds = seconds_since(t_start_);
  r_.allreduce_seconds = reducer_ ? reducer_->stats().finish_seconds : 0.0;
  if (c_.profile) {
    kernel_profile_ = kernel_profile();
    topo::profile::enable(false);
  }
  return true;
}

void TrainingRun::train_epoch(std::int64_t epoch) {
  const std::vector<std::vector<std::int64_t>> batches = task_->epoch_batches(c_.batch, seed_, epoch);
  TOPO_CHECK(static_cast<std::int64_t>(batches.size()) == steps_per_epoch_,
             "task '{}' cut epoch {} into {} batches, epoch 1 into {}", c_.task, epoch + 1, batches.size(),
             steps_per_epoch_);
  // A resumed mid-epoch checkpoint: its batches of this epoch are done (the order is the epoch's own).
  const std::size_t first = epoch == start_epoch_ ? static_cast<std::size_t>(resume_batches_) : 0;
  if (first == 0) last_eval_step_ = -1;
  // Several ranks draw different dropout masks, from a stream keyed by (seed, epoch, rank).
  if (distributed_ && first == 0) dropout_gen_.set_seed(rank_dropout_seed(c_.seed, epoch, comm_.rank()));
  epoch_seconds_now_ = 0.0;
  for (std::size_t b = first; b < batches.size(); ++b) {
    const Clock::time_point step_start = Clock::now();
    train_step(batches[b], epoch);
    epoch_seconds_now_ += seconds_since(step_start);
    if (c_.eval_every > 0 && step_ % c_.eval_every == 0) {
      evaluate_dev(epoch);
      last_eval_step_ = step_;
    }
    if (stop_now_) {
      stopped_batches_ = static_cast<std::int64_t>(b + 1);
      return;
    }
  }
  if (first < batches.size()) epoch_seconds_.push_back(epoch_seconds_now_);
  // Every epoch ends with an evaluation when eval_every is 0; the run always ends with one.
  if ((c_.eval_every == 0 || epoch + 1 == epochs_) && last_eval_step_ != step_) evaluate_dev(epoch);
}

void TrainingRun::train_step(const std::vector<std::int64_t>& global_batch, std::int64_t epoch) {
  // Data parallel: this rank's shard, whose mean loss counts by its share of the global batch.
  const std::vector<std::int64_t> indices =
      distributed_ ? shard_of(global_batch, comm_.rank(), comm_.size()) : global_batch;
  const double share = double(indices.size()) / double(global_batch.size());
  if (reducer_) reducer_->begin_step(share);
  float loss_value = 0.f;
  std::int64_t tokens = 0;
  if (!indices.empty()) {
    TaskBatch batch;
    {
      auto scope = profile_.time("data");
      batch = task_->batch(Split::Train, indices).to(device_);
    }
    tokens = batch.inputs.num_tokens();
    // A trial of the thread counts (thread_tuner.hpp): the batch runs at every count but the last first,
    // discarded, then as the step's own pass at the last, all timed.
    const bool trial = thread_tuner_ && thread_tuner_->trial_due();
    std::vector<double> trial_seconds;
    if (trial) {
      const std::vector<int> order = thread_tuner_->trial_order();
      for (std::size_t i = 0; i + 1 < order.size(); ++i) trial_seconds.push_back(discarded_pass(batch, order[i]));
      set_num_threads(order.back());
    } else if (thread_tuner_) {
      set_num_threads(thread_tuner_->next());
    }
    const Clock::time_point pass_start = Clock::now();
    nn::Var loss;
    {
      auto scope = profile_.time("forward");
      loss = task_->batch_loss(*model_, model_->forward(batch.inputs), batch);
      loss_value = loss.item();
    }
    if (!distributed_)
      TOPO_CHECK(std::isfinite(loss_value), "training diverged: loss {} at step {} (lower --lr or set --clip)",
                 loss_value, step_);
    {
      auto scope = profile_.time("backward");
      if (reducer_) {
        const nn::BackwardObserverScope watch(*reducer_);  // buckets start as their gradients become final
        loss.backward();
      } else {
        loss.backward();
      }
    }
    if (trial) {
      trial_seconds.push_back(seconds_since(pass_start));
      if (thread_tuner_->record_trial(trial_seconds)) report_thread_choice();
    } else if (thread_tuner_) {
      thread_tuner_->record_step();
    }
  }
  if (reducer_) {
    auto scope = profile_.time("allreduce");
    // A stop signal on any rank stops every rank after this same step (it rides in the step's own collective):
    // the ranks that got SIGTERM, and those that got SIGINT, counted.
    const int own = stop_signal_received();
    std::vector<double> sums = {share * loss_value, double(tokens), own == SIGTERM ? 1.0 : 0.0, own == SIGINT ? 1.0 : 0.0};
    reducer_->finish_step(sums);  // every rank: the global batch's gradient, mean loss and tokens
    loss_value = static_cast<float>(sums[0]);
    tokens = static_cast<std::int64_t>(sums[1]);
    stop_now_ = sums[2] > 0 || sums[3] > 0;
    if (stop_now_) stopped_by_ = sums[2] > 0 ? SIGTERM : SIGINT;
    TOPO_CHECK(std::isfinite(loss_value), "training diverged: loss {} at step {} (lower --lr or set --clip)",
               loss_value, step_);
  }
  {
    auto scope = profile_.time("optimizer");
    if (c_.clip > 0) nn::clip_grad_norm(params_, static_cast<float>(c_.clip));
    schedule_.apply(*optimizer_, step_);
    optimizer_->step();
    optimizer_->zero_grad();
    if (average_) average_->update();
  }
  ++step_;
  if (!distributed_) {
    stopped_by_ = stop_signal_received();
    stop_now_ = stopped_by_ != 0;
  }
  r_.losses.push_back(loss_value);
  window_sum_ += loss_value;
  ++window_steps_;
  tokens_seen_ += tokens;
  progress_->step(step_, epoch, loss_value, tokens);
}

void TrainingRun::evaluate_dev(std::int64_t epoch) {
  // Evaluations stay out of the kernel profile of training steps.
  const ProfileOff kernels_off;
  auto scope = profile_.time("eval");
  if (!root_) {  // rank 0 evaluates (every rank holds the same parameters) and sends the bookkeeping
    share_bookkeeping();
    window_sum_ = 0.0;
    window_steps_ = 0;
    return;
  }
  const nn::AveragesInScope averaged(average());  // the averaged weights, evaluated and kept as best.ckpt
  const Evaluation eval = task_->evaluate(*model_, Split::Dev, device_);
  const double dev = eval.metric;
  const bool improved = higher_better_ ? dev > best_dev_ : dev < best_dev_;
  if (improved) {
    best_dev_ = dev;
    best_dev_values_ = eval.values;
    best_step_ = step_;
    evals_since_best_ = 0;
    nn::save_checkpoint(best_, *model_, nullptr, nullptr, step_,
                        {{"config", c_.recorded_json()}, {"task", task_->metadata()}, {"dev", eval.values}});
  } else {
    ++evals_since_best_;
  }
  nlohmann::json line = {{"step", step_}, {"epoch", epoch + 1}, {"split", "dev"}};
  line.update(eval.values);
  line["best_" + metric_] = best_dev_;
  line["train_loss"] = window_steps_ > 0 ? window_sum_ / double(window_steps_) : 0.0;
  line["lr"] = optimizer_->lr();
  line["seconds"] = seconds_since(t_start_);
  line["epoch_train_seconds"] = epoch_seconds_now_;  // this epoch's training steps so far
  const nlohmann::json memory = memory_report();
  line.update(memory);
  append_json_line(metrics_, line);
  share_bookkeeping();
  window_sum_ = 0.0;
  window_steps_ = 0;
  progress_->message(fmt::format("step {}: dev {} {:.6f}{}; epoch {:.3f} s, peak RSS {}, allocator peak {}", step_,
                                 metric_, dev, improved ? " (best)" : "", epoch_seconds_now_,
                                 format_bytes(memory.at("peak_rss_bytes").get<double>()),
                                 format_bytes(memory.at("allocator_peak_bytes").get<double>())));
}

void TrainingRun::save_checkpoint(std::int64_t epochs_done, std::int64_t batches_done) {
  auto scope = profile_.time("checkpoint");
  if (distributed_) check_ranks_agree(comm_, *model_, step_);
  if (!root_) return;
  nlohmann::json meta = bookkeeping(epochs_done, batches_done);
  meta["config"] = c_.recorded_json();
  meta["ranks"] = comm_.size();  // for the record: a checkpoint resumes with any rank count
  nn::save_checkpoint(ckpt_, *model_, optimizer_.get(), &dropout_gen_, step_, meta, average());
}

void TrainingRun::test_best() {
  r_.best_dev_metric = best_dev_;
  r_.best_step = best_step_;
  r_.completed = true;
  if (!root_) return;  // rank 0 tests and writes result.json
  TOPO_CHECK(std::filesystem::exists(best_), "no best-on-dev parameters at '{}' (was the run directory changed?)",
             best_);
  nn::load_checkpoint(best_, *model_, nullptr, nullptr);
  r_.has_test = task_->size(Split::Test) > 0;
  if (r_.has_test) {
    auto scope = profile_.time("test");
    const Evaluation test = task_->evaluate(*model_, Split::Test, device_);
    r_.test_metric = test.metric;
    test_values_ = test.values;
  }
  outputs_ = task_->write_outputs(*model_, device_, c_.out);
  r_.baseline = task_->baseline(r_.has_test ? Split::Test : Split::Dev);
}

}  // namespace detail

Trainer::Trainer(TrainConfig config, dist::Communicator* comm) : config_(std::move(config)), comm_(comm) {
  config_.validate();
}

// The phases in order; the run's state lives in TrainingRun.
TrainResult Trainer::run() {
  std::unique_ptr<dist::Communicator> alone;
  if (!comm_) alone = dist::single_process();
  const StopSignalHandlers stop_signals;  // from here a stop signal ends the run at a step, resumably
  detail::TrainingRun run(config_, comm_ ? *comm_ : *alone);
  run.start_or_resume();
  if (run.train()) {
    run.test_best();
    run.write_result();
  }
  return run.result();
}

}  // namespace topo::apps
