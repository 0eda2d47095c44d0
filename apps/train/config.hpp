#pragma once
// TrainConfig: everything one training run depends on. Sources, later ones winning: the defaults below (and
// the chosen task's and model's option defaults), the model's recipe for the task (models/registry.hpp;
// topo-train's command line applies it), a JSON object (`--config FILE.json`, keys spelled as the fields:
// "train_size"), then command-line flags (dashes: `--train-size`). The run's own fields are declared once in a
// table (config.cpp) that drives JSON reading, flag registration, string parsing and to_json; a task's options
// (its data files, its sizes) are declared by the task (apps/tasks/<task>/registration.cpp) and a model's by the
// model, and join the same keys and flags. Unknown keys, another task's or model's option, wrong JSON types and
// inconsistent values are topo::Errors naming the field and the value.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/tasks/registry.hpp"
#include "models/option.hpp"

namespace topo::apps {

// The largest batch (sentences, or nodes) a run or an evaluation takes: past it a count is a typo, and near 2^63
// a batch crashed the length bucketing (config.cpp).
inline constexpr std::int64_t kMaxBatch = std::int64_t{1} << 24;

struct TrainConfig {
  // What is trained: a registered task (apps/tasks/registry.hpp) and a registered model (models/registry.hpp).
  // Set them by name (set("task", "classify")): choosing another one resets its options to their defaults.
  std::string task = "masked-sum";
  std::string model = "deepsets";
  // The chosen task's and model's own options: every option the owner declares, at its default until set.
  // Set and read them by name like every field: set("n", 20), option<std::int64_t>("n").
  nlohmann::json task_options;
  nlohmann::json model_options;
  // encoder
  std::int64_t layers = 2;
  std::int64_t hidden = 100;
  std::int64_t heads = 10;
  std::int64_t head_hidden = 100;  // hidden width of the output MLP (0: a single Linear)
  double dropout = 0.0;
  double word_dropout = 0.0;  // training: token ids -> <unk> with this probability (models::EmbeddingConfig)
  // optimisation
  std::int64_t epochs = 10;
  std::int64_t batch = 64;
  std::string optimizer = "adam";  // adam (L2 decay, as the Star authors) | adamw
  double lr = 1e-3;
  std::int64_t lr_base_width = 0;  // the hidden width lr was tuned at (muP's rule above it; 0: one lr)
  std::string schedule = "constant";  // constant | linear | cosine | inverse_sqrt (after warm-up)
  std::int64_t warmup = 0;            // warm-up steps
  double clip = 5.0;                  // max gradient norm (0: no clipping)
  double weight_decay = 0.0;
  std::string weight_decay_only;  // non-empty: only the weights whose names contain it decay
  std::int64_t min_steps = 0;         // train at least this many steps: epochs are raised to reach it, early stopping waits
  std::int64_t patience = 0;          // early stopping: stop after this many evaluations without a better dev
  double ema_decay = 0.0;             // > 0: dev, best.ckpt and test use a moving average of the weights (nn::WeightAverage)
  std::int64_t seed = 1;
  // run
  std::int64_t threads = 0;        // CPU threads (0: OpenMP's default)
  std::string device = "cpu";      // cpu | cuda | cuda:N
  std::string precision = "fp32";  // CPU GEMMs: fp32 | bf16 (bf16 inputs, fp32 accumulation; AVX512_BF16 only)
  std::int64_t eval_every = 0;     // dev evaluation every this many steps (0: at the end of each epoch)
  std::int64_t eval_batch = 0;     // sequences per evaluation batch (0: the task's default)
  std::int64_t log_every = 50;     // progress line every this many steps when not on a terminal
  std::string progress = "auto";   // auto (bar on a terminal, lines otherwise) | bar | lines | none
  std::string out = "runs/masked-sum";
  // Continue from OUT/checkpoint.ckpt: off | on (the checkpoint must be there) | auto (resume when it is there,
  // start fresh when not: a scheduler restarting a preempted job with one command line). JSON true/false and
  // --resume alone mean on/off.
  std::string resume = "off";
  bool profile = false;            // time the phases of a step; report them in result.json
  std::int64_t stop_after = 0;     // stop (as if interrupted) after this many epochs in total (0: never)
  // data parallel (`mpirun -np N topo-train`, apps/train/data_parallel.hpp): ignored by a single process
  std::string dist_reduce = "overlap";  // overlap: allreduce gradient buckets while backward runs | after-backward
  double dist_bucket_mb = 1.0;     // MiB of gradients per allreduce bucket
  double dist_timeout = 600.0;     // seconds a rank waits in a collective before it ends the job

  TrainConfig();  // the default task and model, their options at their defaults

  // Where each value that is not a default came from: field -> "recipe star/classify", "config FILE" or
  // "flag". Filled by parse_train_args; not a setting (to_json leaves it out, resume does not compare it).
  std::map<std::string, std::string> sources;

  // Sets a field or an option of the chosen task or model by name (set_config_field); returns *this to chain.
  TrainConfig& set(const std::string& name, const nlohmann::json& value);
  // An option of the chosen task or model, typed; a topo::Error naming it when neither declares it.
  template <class T>
  T option(const std::string& name) const {
    const nlohmann::json& options = task_options.contains(name) ? task_options : model_options;
    return models::option_value<T>(options, name, task_options.contains(name) ? "task " + task : "model " + model);
  }
  // Throws topo::Error naming the first inconsistent field and its value: the general fields here, the task's
  // options by the task (its registration's validate), the model's by their choices, and the pair (the model
  // must read what the task gives). Trainer::run calls it once.
  void validate() const;
  // Every field and the chosen task's and model's options, flat: {"task": ..., "n": ..., "variant": ..., ...}.
  nlohmann::json to_json() const;
  // to_json() as a checkpoint keeps it: the model's options in their recorded form (ModelRegistration::
  // recorded_options: the graph model's topology file inlined, so topo-eval needs no file and a resume sees
  // an edited one).
  // lr_base_width is recorded as it takes effect: 0 where it scales no weight (hidden at or below it), so a run at
  // the recipe's own width records what a run from before the field recorded (its default) and resumes from it.
  nlohmann::json recorded_json() const;
  // Whether lr_base_width scales any weight's lr (apps/train/model_factory.hpp: width_lr_scales).
  bool scales_lr_by_width() const { return lr_base_width > 0 && lr_base_width < hidden; }
  // The chosen model's options only: {"variant": "full", "residual": false} for star.
  const nlohmann::json& options_of_model() const { return model_options; }
  // Fields whose change does not change the computation (where the run writes, how it reports, ...):
  // a resumed run may differ from the checkpoint in these only.
  static const std::vector<std::string>& runtime_fields();
};

// What the chosen task is built and checked from: its options and the run's batch sizes and seed.
TaskSettings task_settings(const TrainConfig& config);

// Every field and every registered task's and model's option (each name once), with its help text and the
// --help group it belongs to ("run", "task classify, tag", "model star"): the flags of topo-train.
struct ConfigField {
  std::string name;
  std::string kind;  // "int", "float", "string", "bool"
  std::string help;
  std::string group;
};
std::vector<ConfigField> config_fields();

// Sets one field from JSON (type-checked) or from a command-line string (parsed per the field's kind).
void set_config_field(TrainConfig& config, const std::string& name, const nlohmann::json& value);
void set_config_field_from_string(TrainConfig& config, const std::string& name, const std::string& text);
// Applies every key of a JSON object over `config`: task and model first (they decide which options exist),
// then the rest. Unknown keys and another task's or model's options are errors; with skip_foreign (a
// checkpoint's saved config, written when every option was saved) another owner's options are skipped.
void apply_config_json(TrainConfig& config, const nlohmann::json& object, const std::string& source = "config",
                       bool skip_foreign = false);
// Reads FILE.json (missing file / malformed JSON are errors naming the file); apply_config_json applies it.
nlohmann::json read_config_file(const std::string& path);

}  // namespace topo::apps
