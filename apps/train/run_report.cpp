// What a topo-train run reports: the log's data and settings lines, the kernel profile, result.json (written
// once, atomically) and the one-line summary.
#include <algorithm>
#include <filesystem>
#include <map>

#include "apps/tasks/registry.hpp"
#include "apps/train/training_run.hpp"
#include "kernels/atomic_file.hpp"
#include "kernels/dense/gemm_backend.hpp"
#include "kernels/memory.hpp"
#include "kernels/storage.hpp"
#include "kernels/profile.hpp"

namespace topo::apps {
namespace detail {

std::string model_options_text(const TrainConfig& c) {
  std::string text;
  const nlohmann::json& options = c.options_of_model();
  for (const auto& [name, value] : options.items())
    text += fmt::format("{}{}={}", text.empty() ? "" : " ", name, value.is_string() ? value.get<std::string>() : value.dump());
  return text;
}

// Where each setting that is not a default came from (the log's first lines), then the data quirks the
// reader counted.
void TrainingRun::report_data_and_settings() {
  progress_->message(fmt::format("task {} ({}), model {}{}", c_.task, find_task(c_.task).summary, c_.model,
                                 c_.model_options.empty() ? "" : " (" + model_options_text(c_) + ")"));
  std::map<std::string, std::string> by_source;  // source -> "key=value ..."
  const nlohmann::json values = c_.to_json();
  for (const auto& [name, source] : c_.sources)
    if (values.contains(name))
      by_source[source] += fmt::format("{}{}={}", by_source[source].empty() ? "" : " ", name, values.at(name).dump());
  for (const auto& [source, settings] : by_source) progress_->message(fmt::format("settings from {}: {}", source, settings));
  const nlohmann::json meta = task_->metadata();
  if (meta.contains("data"))
    for (const auto& [split, stats] : meta.at("data").items())
      if (stats.value("invalid_utf8_lines", 0) > 0 || stats.value("skipped_bad", 0) > 0 || stats.value("truncated", 0) > 0)
        progress_->message(fmt::format("{} data: {} invalid UTF-8 lines (decoded with U+FFFD{}), {} malformed lines "
                                       "skipped, {} examples truncated to {} tokens",
                                       split, stats.value("invalid_utf8_lines", 0),
                                       stats.value("first_invalid_utf8", "").empty()
                                           ? ""
                                           : "; the first at " + stats.value("first_invalid_utf8", ""),
                                       stats.value("skipped_bad", 0),
                                       stats.value("truncated", 0), meta.value("max_length", 0)));
  if (meta.contains("data"))
    for (const auto& [split, stats] : meta.at("data").items())
      if (const std::int64_t cut = stats.value("char_truncated_words", std::int64_t{0}); cut > 0)
        progress_->message(fmt::format("{0} data: {1} words longer than {2} characters, the character CNN reads "
                                       "their first {2}", split, cut, stats.value("char_word_limit", std::int64_t{0})));
  // Pre-trained vectors (words; the tagger's bigram pairs): the coverage line (also result.json's "vectors" /
  // "bigram_vectors") and the malformed lines skipped.
  for (const char* key : {"vectors", "bigram_vectors"}) {
    const nlohmann::json v = meta.value(key, nlohmann::json());
    if (!v.is_object()) continue;
    const nlohmann::json& cov = v.at("train_coverage");
    progress_->message(fmt::format(
        "{} {} ({}-d{}): {} of {} vocabulary types ({:.1f}%, {} lowercased) and {} of {} training tokens "
        "({:.1f}%) found; {} malformed lines skipped; loaded in {:.0f} ms",
        std::string(key) == "vectors" ? "vectors" : "bigram vectors", v.at("file").get<std::string>(),
        v.at("dim").get<std::int64_t>(), v.value("uncased", false) ? ", uncased: looked up lowercased" : "",
        cov.at("types_found").get<std::int64_t>(), cov.at("types").get<std::int64_t>(),
        cov.at("types_pct").get<double>(), v.at("found_lowercase").get<std::int64_t>(),
        cov.at("tokens_found").get<std::int64_t>(), cov.at("tokens").get<std::int64_t>(),
        cov.at("tokens_pct").get<double>(), v.at("bad_lines").get<std::int64_t>(),
        1e3 * v.at("load_seconds").get<double>()));
    if (const std::int64_t repeats = v.value("duplicates", std::int64_t{0}); repeats > 0)
      progress_->message(fmt::format("  {} lines repeat a word given earlier in the file: its first vector is kept",
                                     repeats));
    for (const nlohmann::json& bad : v.at("bad_line_examples")) progress_->message("  skipped " + bad.get<std::string>());
  }
}

nlohmann::json TrainingRun::kernel_profile() const {
  nlohmann::json out;
  const topo::profile::Table table = topo::profile::snapshot();
  for (int p = 0; p < static_cast<int>(topo::profile::Phase::Count); ++p)
    for (int k = 0; k < static_cast<int>(topo::profile::Category::Count); ++k) {
      const topo::profile::Entry& e = table[static_cast<std::size_t>(p)][static_cast<std::size_t>(k)];
      if (e.calls == 0) continue;
      out[topo::profile::phase_name(static_cast<topo::profile::Phase>(p))]
         [topo::profile::category_name(static_cast<topo::profile::Category>(k))] = {{"seconds", e.seconds},
                                                                                    {"calls", e.calls}};
    }
  return out;
}

nlohmann::json TrainingRun::memory_report() const {
  return {{"peak_rss_bytes", peak_rss_bytes()}, {"allocator_peak_bytes", host_memory::stats().peak_bytes_in_use}};
}

namespace {

// The training seconds per epoch: the first (it faults its pages in and fills the allocator's cache) apart from
// the median and the mean of all.
nlohmann::json epoch_seconds_summary(std::vector<double> seconds) {
  if (seconds.empty()) return nullptr;
  const double first = seconds.front();
  double sum = 0;
  for (const double s : seconds) sum += s;
  std::sort(seconds.begin(), seconds.end());
  return {{"epochs", seconds.size()},
          {"first", first},
          {"median", seconds[seconds.size() / 2]},
          {"mean", sum / double(seconds.size())},
          {"min", seconds.front()}};
}

}  // namespace

void TrainingRun::write_result() {
  if (!root_) return;
  const TrainConfig& c = c_;
  TrainResult& r = r_;
  const std::string& metric = metric_;
  const nlohmann::json meta = task_->metadata();  // built once: it holds the vocabularies
  // The chosen model's own options sit beside its name (star: variant, residual).
  nlohmann::json result = {{"task", c.task}, {"model", c.model}, {"metric", metric}};
  result.update(c.options_of_model());
  // Test figures as test_<name>; the best dev evaluation's as dev_<name>.
  if (r.has_test) {
    for (const auto& [key, value] : test_values_.items()) result["test_" + key] = value;
    if (test_values_.contains("ms_per_batch")) result["ms_per_test_batch"] = test_values_.at("ms_per_batch");
  } else {
    result["test_" + metric] = nullptr;
    result["test_note"] = "the task has no test split: evaluate a checkpoint with topo-eval";
  }
  for (const auto& [key, value] : best_dev_values_.items()) result["dev_" + key] = value;
  // The protocol's names (issue #13): the dev-selected checkpoint (best.ckpt) scored on dev and, when a test
  // file is given, once on test; topo-eval on the same file gives the same number.
  if (metric_ == "acc") {
    result["dev_accuracy"] = r_.best_dev_metric;
    if (r_.has_test) result["test_accuracy"] = r_.test_metric;
  }
  result.update(r.baseline);
  result["baseline_split"] = r.has_test ? "test" : "dev";
  if (!higher_better_ && r.has_test && r.baseline.contains("baseline_" + metric))
    result[metric + "_over_baseline"] = r.test_metric / r.baseline.at("baseline_" + metric).get<double>();
  const nlohmann::json more = {{"best_dev_" + metric, r.best_dev_metric},
                               {"best_step", r.best_step},
                               {"epochs", epochs_},
                               {"epochs_done", r.epochs_done},
                               {"stopped_early", r.stopped_early},
                               {"steps", r.steps},
                               // the schedule's warm-up as run: a recipe's shrinks to fit a short run (trainer.cpp)
                               {"warmup_steps", schedule_.warmup_steps},
                               {"train_seconds", r.train_seconds},
                               {"epoch_train_seconds", epoch_seconds_summary(epoch_seconds_)},
                               {"memory", memory_report()},
                               {"tokens_per_second", r.train_seconds > 0 ? double(tokens_seen_) / r.train_seconds : 0.0},
                               {"resumed", resumed_},
                               {"params", r.params},
                               {"device", device_.str()},
                               {"threads", threads_.threads},
                               {"threads_source", threads_.source},
                               {"thread_trials", thread_tuner_ ? thread_tuner_->report() : nlohmann::json()},
                               {"omp_wait_policy", wait_policy()},
                               {"blas_core", blas_core()},
                               {"kernel_isa", kernel_isa()},
                               {"precision", precision_name(precision_.used)},
                               // the library that ran the GEMMs at that precision (gemm_backend.hpp)
                               {"gemm_backend",
                                device_.is_cuda() ? "cublas" : gemm_backend_name(gemm_backend(precision_.used))},
                               {"ranks", comm_.size()},
                               {"data", meta.value("data", nlohmann::json::object())},
                               {"vectors", meta.value("vectors", nlohmann::json())},
                               {"config", c.to_json()},
                               {"config_sources", c.sources}};
  result.update(more);
  if (const nlohmann::json b = meta.value("bigram_vectors", nlohmann::json()); b.is_object())
    result["bigram_vectors"] = b;  // the tagger's pair vectors, reported as "vectors" is
  if (!outputs_.empty()) result["outputs"] = outputs_;
  if (distributed_)
    result["data_parallel"] = {{"backend", comm_.backend()},
                               {"reduce", c.dist_reduce},
                               {"buckets", reducer_->num_buckets()},
                               {"bucket_mb", c.dist_bucket_mb},
                               // rank 0's time in finish_step: communication backward did not hide
                               {"allreduce_seconds", r.allreduce_seconds},
                               {"allreduce_ms_per_step", r.allreduce_seconds * 1e3 / double(std::max<std::int64_t>(
                                                                                 1, reducer_->stats().steps))},
                               // share of the buckets whose allreduce started before backward ended
                               {"started_in_backward", double(reducer_->stats().buckets_started_in_backward) /
                                                           double(std::max<std::int64_t>(1, reducer_->stats().buckets))},
                               // after-backward: of which waiting at a barrier for the slowest rank
                               {"peer_wait_ms_per_step", reducer_->stats().peer_wait_seconds * 1e3 /
                                                             double(std::max<std::int64_t>(1, reducer_->stats().steps))}};
  if (c.profile) {
    result["profile_seconds"] = profile_.seconds;
    result["kernel_profile"] = kernel_profile_;
  }
  r.result = result;
  write_file_atomically(result_file_, result.dump(2) + "\n");
}

}  // namespace detail

std::string summary_line(const TrainConfig& c, const TrainResult& r) {
  std::string test = "no test split";
  if (r.has_test) {
    test = fmt::format("test {} {:.6f}", r.metric, r.test_metric);
    for (const auto& [key, value] : r.baseline.items())
      if (value.is_number()) test += fmt::format(", {} {:.6f}", key, value.get<double>());
  }
  const std::string options = detail::model_options_text(c);
  return fmt::format("{} {}{}: {}; best dev {} {:.6f} at step {}{}; {} params, {:.2f} s -> {}", c.task, c.model,
                     options.empty() ? "" : " (" + options + ")", test, r.metric, r.best_dev_metric, r.best_step,
                     r.stopped_early ? " (stopped early)" : "", r.params, r.train_seconds, Trainer::result_path(c.out));
}

}  // namespace topo::apps
