#include "apps/train/evaluate.hpp"

#include <filesystem>

#include <CLI/CLI.hpp>

#include "apps/tasks/registry.hpp"
#include "apps/train/cli.hpp"
#include "apps/train/config.hpp"
#include "apps/train/model_factory.hpp"
#include "kernels/atomic_file.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/dense/gemm_backend.hpp"
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

}  // namespace

nlohmann::json evaluate_checkpoint(const EvalOptions& options) {
  TOPO_CHECK(options.batch >= 1, "--batch {} must be >= 1", options.batch);
  const ThreadCount threads = configure_threads(options.threads);
  const Device device = Device::parse(options.device);
  require_available(device);
  const GemmPrecisionGuard restore_precision(gemm_precision());  // evaluate_checkpoint is a library call too
  const PrecisionChoice precision = configure_gemm_precision(options.precision, device.is_cuda());
  const std::string path = resolve_checkpoint(options.checkpoint);
  const nlohmann::json meta = nn::read_checkpoint_index(path).value("metadata", nlohmann::json());
  TOPO_CHECK(meta.is_object() && meta.contains("config") && meta.contains("task"),
             "checkpoint '{}' was not written by topo-train's best-on-dev save (no config / task metadata)", path);
  TrainConfig config;
  // Checkpoints saved before options were scoped to their owners hold every task's and model's options.
  apply_config_json(config, meta.at("config"), "checkpoint '" + path + "' config", /*skip_foreign=*/true);
  if (!options.attention.empty()) set_config_field(config, "attention", options.attention);  // names a model without it
  const TaskRegistration& task = find_task(config.task);
  TOPO_CHECK(task.evaluate_file, "checkpoint '{}' is a '{}' model; topo-eval scores the tasks that read files: {}",
             path, config.task, [] {
               std::string names;
               for (const TaskRegistration& t : registered_tasks())
                 if (t.evaluate_file) names += (names.empty() ? "" : ", ") + t.name;
               return names;
             }());
  FileEvaluation request;
  request.checkpoint = path;
  request.config = config.to_json();
  request.metadata = meta.at("task");
  request.test = options.test;
  request.format = options.format;
  request.batch = options.batch;
  request.skip_bad = options.skip_bad;
  request.predictions = options.predictions;
  request.device = device;
  request.load_model = [&](const Task& t) { return load_model(config, t, path, device); };
  nlohmann::json result = task.evaluate_file(request);
  result.update({{"checkpoint", path},
                 {"task", config.task},
                 {"test", options.test},
                 {"model", config.model},
                 {"device", device.str()},
                 {"threads", threads.threads},
                 {"threads_source", threads.source},
                 {"config", meta.at("config")}});
  result.update(config.options_of_model());  // the model's own options beside its name (attention: graph)
  result["precision"] = precision_name(precision.used);
  result["precision_note"] = precision.line;
  result["gemm_backend"] = device.is_cuda() ? "cublas" : gemm_backend_name(gemm_backend(precision.used));
  // Paths are bytes, JSON is UTF-8: a path that is not UTF-8 is written with U+FFFD rather than lost to a throw.
  if (!options.json.empty())
    write_file_atomically(options.json, result.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return result;
}

std::optional<EvalOptions> parse_eval_args(int argc, const char* const* argv, std::ostream& out) {
  CLI::App app{"topo-eval: score a saved model on a file (topo-train --task classify | tag | nli: the tasks that "
               "read files)",
               "topo-eval"};
  EvalOptions o;
  app.add_option("--checkpoint", o.checkpoint, "run directory (uses its best.ckpt) or checkpoint file")->required();
  app.add_option("--test", o.test, "file to score")->required();
  app.add_option("--format", o.format,
                 "classifiers: sst | sst-stsa | mtl | tsv | jsonl; taggers: conll | conllu | weibo | bmes; nli: snli "
                 "(default: the training format)");
  app.add_option("--json", o.json, "write the result here (atomically)");
  // Ranges checked at parsing: CLI11 clamps 10^20 to 2^63 - 1, and its check names the value as typed.
  app.add_option("--batch", o.batch, "sentences per batch (timing is per batch)")
      ->check(CLI::Range(std::int64_t{1}, kMaxBatch));
  app.add_option("--threads", o.threads, "CPU threads (0: default)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{kMaxThreads}));
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
