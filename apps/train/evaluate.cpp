#include "apps/train/evaluate.hpp"

#include <filesystem>

#include <CLI/CLI.hpp>

#include "apps/tasks/classify.hpp"
#include "apps/tasks/tag.hpp"
#include "apps/train/cli.hpp"
#include "apps/train/config.hpp"
#include "apps/train/model_factory.hpp"
#include "kernels/atomic_file.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/error.hpp"
#include "kernels/device.hpp"
#include "kernels/threads.hpp"
#include "nn/checkpoint.hpp"

namespace topo::apps {

std::string resolve_checkpoint(const std::string& path) {
  namespace fs = std::filesystem;
  TOPO_CHECK(fs::exists(path), "checkpoint '{}' does not exist", path);
  if (!fs::is_directory(path)) return path;
  const std::string best = (fs::path(path) / "best.ckpt").string();
  TOPO_CHECK(fs::exists(best), "run directory '{}' has no best.ckpt (did its training finish an evaluation?)", path);
  return best;
}

namespace {

// The checkpoint's model for `task`: built from its config, moved to `device`, its parameters loaded.
std::shared_ptr<models::SequenceModel> load_model(const TrainConfig& config, const Task& task, const std::string& path,
                                                  Device device) {
  const auto model = make_task_model(config, task);
  model->to(device);
  nn::load_checkpoint(path, *model, nullptr, nullptr);
  return model;
}

// topo-eval on a tagging checkpoint: the file read as training read its files, scored with the task's metric;
// the conlleval-style table in "table", predictions written with options.predictions.
nlohmann::json evaluate_tagger(const EvalOptions& options, const TrainConfig& config, const nlohmann::json& meta,
                               const std::string& path, Device device, const ThreadCount& threads) {
  TagOptions task_options;
  task_options.format = options.format;
  task_options.test = options.test;
  task_options.eval_batch = options.batch;
  task_options.read.skip_bad = options.skip_bad;
  const auto task = SequenceTagging::for_evaluation(meta.at("task"), task_options, "checkpoint '" + path + "'");
  const auto model = load_model(config, *task, path, device);
  const SequenceTagging::Predictions p = task->predict(*model, Split::Test, device);
  const text::TagScorer scorer = task->score(Split::Test, p.tags);
  if (!options.predictions.empty()) {
    std::vector<std::vector<std::string>> tags = p.tags;
    const text::TaggedDataset& d = task->data(Split::Test);
    std::vector<std::vector<std::string>> gold;
    for (const auto& s : d.sentences) gold.push_back(s.tags);
    const text::TagScheme file_scheme = text::detect_tag_scheme(gold);
    for (auto& t : tags) t = text::convert_tags(t, task->scheme(), file_scheme);
    text::write_tagged_predictions(options.predictions, d, tags);
  }
  nlohmann::json result = {{"checkpoint", path},
                           {"task", "tag"},
                           {"test", options.test},
                           {"format", text::tag_format_name(task->data(Split::Test).format)},
                           {"model", config.model},
                           {"metric", task->metric()},
                           {"scheme", text::tag_scheme_name(task->scheme())},
                           {"loss", p.loss},
                           {"ms_per_batch", 1e3 * p.forward_seconds / double(std::max<std::int64_t>(p.batches, 1))},
                           {"batch", options.batch},
                           {"sentences", static_cast<std::int64_t>(p.tags.size())},
                           {"scores", scorer.to_json()},
                           {"table", scorer.table()},
                           {"device", device.str()},
                           {"threads", threads.threads},
                           {"threads_source", threads.source},
                           {"config", meta.at("config")}};
  result.update(task->baseline(Split::Test));
  result[task->metric()] = task->metric() == "f1" ? scorer.overall().f1() : scorer.accuracy();
  result["acc"] = scorer.accuracy();
  if (!options.predictions.empty()) result["predictions"] = options.predictions;
  return result;  // the caller adds the precision and writes options.json
}

nlohmann::json evaluate_classifier(const EvalOptions& options, const TrainConfig& config, const nlohmann::json& meta,
                                   const std::string& path, Device device, const ThreadCount& threads) {
  ClassifyOptions task_options;
  task_options.format = options.format.empty() ? config.format : options.format;
  task_options.test = options.test;
  task_options.eval_batch = options.batch;
  task_options.read.skip_bad = options.skip_bad;
  const auto task = TextClassification::for_evaluation(meta.at("task"), task_options, "checkpoint '" + path + "'");
  const auto model = load_model(config, *task, path, device);
  const Evaluation e = task->evaluate(*model, Split::Test, device);
  const nlohmann::json baseline = task->baseline(Split::Test);
  nlohmann::json result = {{"checkpoint", path},
                           {"test", options.test},
                           {"format", task_options.format},
                           {"model", config.model},
                           {"majority_acc", baseline.at("majority_acc")},
                           {"data", read_stats_json(task->read_stats(Split::Test))},
                           {"device", device.str()},
                           {"threads", threads.threads},
                           {"threads_source", threads.source},
                           {"config", meta.at("config")}};
  result.update(config.options_of_model());  // the model's own options beside its name (attention: graph)
  result.update(e.values);
  return result;  // the caller adds the precision and writes options.json
}

}  // namespace

nlohmann::json evaluate_checkpoint(const EvalOptions& options) {
  TOPO_CHECK(options.batch >= 1, "--batch {} must be >= 1", options.batch);
  TOPO_CHECK(options.threads >= 0, "--threads {} must be >= 0", options.threads);
  const ThreadCount threads = configure_threads(static_cast<int>(options.threads));
  const Device device = Device::parse(options.device);
  require_available(device);
  const GemmPrecisionGuard restore_precision(gemm_precision());  // evaluate_checkpoint is a library call too
  const PrecisionChoice precision = configure_gemm_precision(options.precision, device.is_cuda());
  const std::string path = resolve_checkpoint(options.checkpoint);
  const nlohmann::json meta = nn::read_checkpoint_index(path).value("metadata", nlohmann::json());
  TOPO_CHECK(meta.is_object() && meta.contains("config") && meta.contains("task"),
             "checkpoint '{}' was not written by topo-train's best-on-dev save (no config / task metadata)", path);
  TrainConfig config;
  apply_config_json(config, meta.at("config"), "checkpoint '" + path + "' config");
  if (!options.attention.empty()) {
    set_config_field(config, "attention", options.attention);
    config.validate();  // names the field when the model has no such switch
  }
  TOPO_CHECK(config.task == "classify" || config.task == "tag",
             "checkpoint '{}' is a '{}' model; topo-eval scores text classifiers and taggers", path, config.task);
  nlohmann::json result = config.task == "tag" ? evaluate_tagger(options, config, meta, path, device, threads)
                                               : evaluate_classifier(options, config, meta, path, device, threads);
  result["precision"] = precision_name(precision.used);
  result["precision_note"] = precision.line;
  if (!options.json.empty()) write_file_atomically(options.json, result.dump(2) + "\n");
  return result;
}

std::optional<EvalOptions> parse_eval_args(int argc, const char* const* argv, std::ostream& out) {
  CLI::App app{"topo-eval: score a saved text classifier or tagger (topo-train --task classify | tag) on a file", "topo-eval"};
  EvalOptions o;
  app.add_option("--checkpoint", o.checkpoint, "run directory (uses its best.ckpt) or checkpoint file")->required();
  app.add_option("--test", o.test, "file to score")->required();
  app.add_option("--format", o.format, "sst | sst-stsa | mtl | tsv | jsonl; taggers: conll | conllu | weibo | bmes (default: the training format)");
  app.add_option("--json", o.json, "write the result here (atomically)");
  app.add_option("--batch", o.batch, "sentences per batch (timing is per batch)");
  app.add_option("--threads", o.threads, "CPU threads (0: default)");
  app.add_option("--device", o.device, "cpu | cuda | cuda:N");
  app.add_option("--precision", o.precision,
                 "GEMMs: fp32 | bf16 (bf16 inputs, fp32 accumulation; AVX512_BF16 CPUs only, fp32 elsewhere)");
  app.add_option("--attention", o.attention,
                 "models with an attention option: graph | dense | padded (transformer), graph | band (multiscale) "
                 "(default: as trained)");
  app.add_option("--predictions", o.predictions,
                 "taggers: write the file's lines plus a predicted column here (atomically)");
  app.add_flag("--skip-bad", o.skip_bad, "skip malformed lines (counted) instead of failing");
  if (!parse_command_line(app, argc, argv, out)) return std::nullopt;
  return o;
}

}  // namespace topo::apps
