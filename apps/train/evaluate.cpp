#include "apps/train/evaluate.hpp"

#include <filesystem>

#include <CLI/CLI.hpp>

#include "apps/tasks/classify.hpp"
#include "apps/train/cli.hpp"
#include "apps/train/config.hpp"
#include "apps/train/model_factory.hpp"
#include "kernels/atomic_file.hpp"
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

nlohmann::json evaluate_checkpoint(const EvalOptions& options) {
  TOPO_CHECK(options.batch >= 1, "--batch {} must be >= 1", options.batch);
  TOPO_CHECK(options.threads >= 0, "--threads {} must be >= 0", options.threads);
  const ThreadCount threads = configure_threads(static_cast<int>(options.threads));
  const Device device = Device::parse(options.device);
  require_available(device);
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
  TOPO_CHECK(config.task == "classify", "checkpoint '{}' is a '{}' model; topo-eval scores text classifiers", path,
             config.task);

  ClassifyOptions task_options;
  task_options.format = options.format.empty() ? config.format : options.format;
  task_options.test = options.test;
  task_options.eval_batch = options.batch;
  task_options.read.skip_bad = options.skip_bad;
  const auto task = TextClassification::for_evaluation(meta.at("task"), task_options, "checkpoint '" + path + "'");
  const auto model = make_task_model(config, *task);
  model->to(device);
  nn::load_checkpoint(path, *model, nullptr, nullptr);
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
  if (!options.json.empty()) write_file_atomically(options.json, result.dump(2) + "\n");
  return result;
}

std::optional<EvalOptions> parse_eval_args(int argc, const char* const* argv, std::ostream& out) {
  CLI::App app{"topo-eval: score a saved text classifier (topo-train --task classify) on a file", "topo-eval"};
  EvalOptions o;
  app.add_option("--checkpoint", o.checkpoint, "run directory (uses its best.ckpt) or checkpoint file")->required();
  app.add_option("--test", o.test, "file to score")->required();
  app.add_option("--format", o.format, "sst | sst-stsa | mtl | tsv | jsonl (default: the training format)");
  app.add_option("--json", o.json, "write the result here (atomically)");
  app.add_option("--batch", o.batch, "sentences per batch (timing is per batch)");
  app.add_option("--threads", o.threads, "CPU threads (0: default)");
  app.add_option("--device", o.device, "cpu | cuda | cuda:N");
  app.add_option("--attention", o.attention, "models with an attention option: graph | dense | padded (default: as trained)");
  app.add_flag("--skip-bad", o.skip_bad, "skip malformed lines (counted) instead of failing");
  if (!parse_command_line(app, argc, argv, out)) return std::nullopt;
  return o;
}

}  // namespace topo::apps
