#include "apps/train/config.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <variant>

#include "kernels/device.hpp"
#include "kernels/error.hpp"
#include "kernels/threads.hpp"
#include "apps/tasks/registry.hpp"
#include "apps/text/decode.hpp"
#include "models/encoder_config.hpp"
#include "models/registry.hpp"
#include "nn/json_input.hpp"
#include "nn/json_number.hpp"

namespace topo::apps {
namespace {

using Member = std::variant<std::int64_t TrainConfig::*, double TrainConfig::*, std::string TrainConfig::*,
                            bool TrainConfig::*>;
struct Field {
  const char* name;
  Member member;
  const char* help;
};

// The one declaration of every field (JSON key = name; flag = --name with '_' -> '-').
const std::vector<Field>& table() {
  static const std::vector<Field> fields = {
      {"task", &TrainConfig::task, "task"},
      {"model", &TrainConfig::model, "model"},
      {"layers", &TrainConfig::layers, "encoder layers"},
      {"hidden", &TrainConfig::hidden, "hidden size"},
      {"heads", &TrainConfig::heads, "attention heads (must divide hidden)"},
      {"head_hidden", &TrainConfig::head_hidden, "hidden width of the output MLP (0: one Linear)"},
      {"dropout", &TrainConfig::dropout, "dropout probability"},
      {"word_dropout", &TrainConfig::word_dropout,
       "training: each token id becomes <unk> with this probability (word dropout; the case, character and suffix "
       "features still see the word; text tasks)"},
      {"epochs", &TrainConfig::epochs, "training epochs"},
      {"batch", &TrainConfig::batch, "sequences per batch"},
      {"optimizer", &TrainConfig::optimizer, "adam | adamw"},
      {"lr", &TrainConfig::lr, "learning rate"},
      {"lr_base_width", &TrainConfig::lr_base_width,
       "the hidden width lr was tuned at: wider, each Linear whose fan-in grows with hidden learns at lr x base "
       "fan-in / fan-in (muP's Adam rule; 0: one lr for all)"},
      {"schedule", &TrainConfig::schedule, "lr schedule after warm-up: constant | linear | cosine | inverse_sqrt"},
      {"warmup", &TrainConfig::warmup, "warm-up steps"},
      {"clip", &TrainConfig::clip, "max gradient norm (0: no clipping)"},
      {"weight_decay", &TrainConfig::weight_decay, "weight decay (not on biases and norms)"},
      {"weight_decay_only", &TrainConfig::weight_decay_only,
       "decay only the weights whose names contain this (e.g. conv1. : a GCN's first layer, as Kipf's); empty: all"},
      {"min_steps", &TrainConfig::min_steps,
       "train at least N optimizer steps: epochs are raised to reach N and early stopping waits for it (small data)"},
      {"patience", &TrainConfig::patience, "early stopping: evaluations without a better dev (0: never stop)"},
      {"ema_decay", &TrainConfig::ema_decay,
       "keep an exponential moving average of the weights with this decay per step (e.g. 0.999); dev evaluations, "
       "best.ckpt and the test use the averages (0: off)"},
      {"seed", &TrainConfig::seed, "seed of data, initialisation, shuffling and dropout"},
      {"threads", &TrainConfig::threads, "CPU threads (0: the cores this process may use, or one thread where the first steps ran faster on one)"},
      {"device", &TrainConfig::device, "cpu | cuda | cuda:N"},
      {"precision", &TrainConfig::precision,
       "GEMMs: fp32 | bf16 (inputs rounded to bf16, fp32 accumulation, weights, optimizer, norms; CPUs with "
       "AVX512_BF16 only, fp32 elsewhere, said in the log)"},
      {"eval_every", &TrainConfig::eval_every, "evaluate on dev every N steps (0: every epoch)"},
      {"eval_batch", &TrainConfig::eval_batch, "evaluation batch (0: the task's default: the probes max(batch, 256), text 128)"},
      {"log_every", &TrainConfig::log_every, "progress line every N steps when not on a terminal"},
      {"progress", &TrainConfig::progress, "auto | bar | lines | none"},
      {"out", &TrainConfig::out, "output directory (checkpoints, metrics.jsonl, result.json)"},
      {"resume", &TrainConfig::resume,
       "continue from OUT/checkpoint.ckpt: on (--resume alone; the checkpoint must exist) | auto (resume when it "
       "exists, start fresh otherwise; the log says which) | off"},
      {"profile", &TrainConfig::profile, "time the phases of training"},
      {"stop_after", &TrainConfig::stop_after, "stop as if interrupted after N epochs in total (0: never)"},
      {"dist_reduce", &TrainConfig::dist_reduce,
       "under mpirun: overlap (allreduce gradient buckets while backward runs) | after-backward"},
      {"dist_bucket_mb", &TrainConfig::dist_bucket_mb, "under mpirun: MiB of gradients per allreduce bucket"},
      {"dist_timeout", &TrainConfig::dist_timeout,
       "under mpirun: seconds a rank waits for the others in a collective before the job stops with an error"},
  };
  return fields;
}

// The table's field named `name`, or null when it is an option (or unknown).
const Field* find_field(const std::string& name) {
  for (const Field& f : table())
    if (name == f.name) return &f;
  return nullptr;
}

// The chosen task's or model's declaration of option `name`; null when neither declares it.
const models::Option* find_option(const std::vector<models::Option>& declared, const std::string& name) {
  for (const models::Option& o : declared)
    if (o.name == name) return &o;
  return nullptr;
}
const models::Option* chosen_option(const TrainConfig& config, const std::string& name) {
  if (const models::Option* o = find_option(find_task(config.task).options, name)) return o;
  return find_option(models::find_model(config.model).options, name);
}

// Who declares `name` when the chosen task and model do not: "--task classify, tag", "--model star"; empty
// when nobody does.
std::string other_owners(const std::string& name) {
  std::string owners;
  if (const std::string tasks = tasks_declaring(name); !tasks.empty()) owners = "--task " + tasks;
  if (const std::string models = models::models_declaring(name); !models.empty())
    owners += (owners.empty() ? "" : " or ") + ("--model " + models);
  return owners;
}

[[noreturn]] void fail_unknown_field(const std::string& name) {
  std::string known;
  for (const ConfigField& f : config_fields()) known += (known.empty() ? "" : ", ") + f.name;
  fail("unknown config field '{}' (known fields: {})", name, known);
}

const char* kind_of(const Member& m) {
  switch (m.index()) {
    case 0: return "int";
    case 1: return "float";
    case 2: return "string";
    default: return "bool";
  }
}

bool one_of(const std::string& value, std::initializer_list<const char*> options) {
  for (const char* o : options)
    if (value == o) return true;
  return false;
}

// Command-line text as the JSON value of a field of `kind`, which set_config_field then checks and sets.
nlohmann::json parse_field_text(const std::string& name, const std::string& kind, const std::string& text) {
  if (kind == "int") {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    TOPO_CHECK(ec == std::errc() && end == text.data() + text.size() && !text.empty(),
               "config field '{}': expected an integer, got '{}'", name, text);
    return v;
  }
  if (kind == "float") {
    char* end = nullptr;
    const double v = text.empty() ? 0.0 : std::strtod(text.c_str(), &end);
    TOPO_CHECK(!text.empty() && end == text.c_str() + text.size(), "config field '{}': expected a number, got '{}'",
               name, text);
    return v;
  }
  if (kind == "bool") {
    TOPO_CHECK(one_of(text, {"true", "false", "1", "0"}), "config field '{}': expected true or false, got '{}'", name,
               text);
    return text == "true" || text == "1";
  }
  // Configs, checkpoints and results store the value as JSON, which holds only UTF-8: refuse it here, by name,
  // rather than when the run first writes its config.
  bool invalid = false;
  (void)topo::text::decode_line(text, topo::text::TextEncoding::Utf8, &invalid);
  TOPO_CHECK(!invalid, "config field '{}': the value is not valid UTF-8", name);
  return text;
}

// Whether model `m` reads what a task gives.
bool reads(const models::ModelRegistration& m, TaskInput input) {
  return input == TaskInput::TokenIds ? m.reads_token_ids : input == TaskInput::Features ? m.reads_features : m.reads_graph;
}

// Registered models that read what `input` is: "star, transformer".
std::string models_reading(TaskInput input) {
  std::string names;
  for (const models::ModelRegistration& m : models::registered_models())
    if (reads(m, input)) names += (names.empty() ? "" : ", ") + m.name;
  return names;
}

// Every option of `owners` (tasks or models), one field per name: its group lists the owners declaring it, and
// its help each distinct text once with the owners it belongs to ("task classify, tag: ...; task masked-sum: ...").
template <class Owners>
std::vector<ConfigField> option_fields(const Owners& owners, const std::string& kind_of_owner) {
  struct Texts {
    ConfigField field;
    std::vector<std::pair<std::string, std::string>> helps;  // help -> owners, in registration order
  };
  std::vector<Texts> out;
  for (const auto& owner : owners)
    for (const models::Option& o : owner.options) {
      const std::string help = fmt::format("{} (default {})", o.help, models::shown_value(o.default_value));
      auto same = std::find_if(out.begin(), out.end(), [&](const Texts& t) { return t.field.name == o.name; });
      if (same == out.end()) {
        out.push_back({{o.name, models::value_kind(o.default_value), "", kind_of_owner + " " + owner.name}, {}});
        same = out.end() - 1;
      } else {
        same->field.group += ", " + owner.name;
      }
      auto text = std::find_if(same->helps.begin(), same->helps.end(), [&](const auto& h) { return h.first == help; });
      if (text == same->helps.end()) same->helps.emplace_back(help, owner.name);
      else text->second += ", " + owner.name;
    }
  std::vector<ConfigField> fields;
  for (Texts& t : out) {
    for (const auto& [help, names] : t.helps)
      t.field.help += (t.field.help.empty() ? "" : "; ") + (t.helps.size() == 1 ? help : kind_of_owner + " " + names + ": " + help);
    fields.push_back(t.field);
  }
  return fields;
}

// `options` holds exactly the owner's declared options, each of its type and one of its choices.
void check_owned_options(const nlohmann::json& options, const std::vector<models::Option>& declared,
                         const std::string& kind, const std::string& owner) {
  for (const models::Option& o : declared) {
    TOPO_CHECK(options.contains(o.name), "{} '{}': option '{}' is not set", kind, owner, o.name);
    (void)models::checked_option_value(o, options.at(o.name));
  }
  TOPO_CHECK(options.size() == declared.size(),
             "the {} options {} are not {} '{}''s (choose one with set(\"{}\", ...), which resets them)", kind,
             options.dump(), kind, owner, kind);
}

}  // namespace

std::vector<ConfigField> config_fields() {
  // Built on every call: register_task may add a task's options after the first.
  std::vector<ConfigField> out;
  for (const Field& f : table()) {
    const std::string name = f.name;
    if (name == "task")
      out.push_back({f.name, kind_of(f.member), fmt::format("task: {} (its options follow)", registered_task_names()),
                     "task and model"});
    else if (name == "model")
      out.push_back({f.name, kind_of(f.member), fmt::format("model: {} (their options follow)",
                                                            models::registered_model_names()),
                     "task and model"});
    else
      out.push_back({f.name, kind_of(f.member), f.help, "training run"});
  }
  std::vector<ConfigField> options = option_fields(registered_tasks(), "task");
  for (const ConfigField& f : option_fields(models::registered_models(), "model")) {
    const auto same = std::find_if(options.begin(), options.end(), [&](const ConfigField& o) { return o.name == f.name; });
    if (same == options.end()) {
      options.push_back(f);
    } else {  // a task's and a model's option of one name: one flag
      same->group += "; " + f.group;
      same->help += "; " + f.help;
    }
  }
  // The options grouped by owner, in the order the owners are registered.
  std::stable_sort(options.begin(), options.end(), [](const ConfigField& a, const ConfigField& b) {
    return a.group.starts_with("task") && b.group.starts_with("model");
  });
  out.insert(out.end(), options.begin(), options.end());
  return out;
}

TaskSettings task_settings(const TrainConfig& config) {
  // A negative seed is an error validate() reports; the task's own checks run first and see 0.
  return {config.task_options, config.batch, config.eval_batch,
          static_cast<std::uint64_t>(std::max<std::int64_t>(config.seed, 0))};
}

TrainConfig::TrainConfig()
    : task_options(models::option_defaults(find_task(task).options)),
      model_options(models::option_defaults(models::find_model(model).options)) {}

TrainConfig& TrainConfig::set(const std::string& name, const nlohmann::json& value) {
  set_config_field(*this, name, value);
  return *this;
}

void set_config_field(TrainConfig& config, const std::string& name, const nlohmann::json& value) {
  // Choosing a task or model decides which options exist; another choice starts from its defaults.
  if (name == "task" || name == "model") {
    TOPO_CHECK(value.is_string(), "config field '{}': expected a string, got {}", name, value.dump());
    const std::string chosen = value.get<std::string>();
    if (chosen == (name == "task" ? config.task : config.model)) return;
    // The registries' lookups name the known ones; as a config error the field is named too.
    std::vector<models::Option> declared;
    try {
      declared = name == "task" ? find_task(chosen).options : models::find_model(chosen).options;
    } catch (const Error& e) {
      models::fail_invalid_field(name, value, e.what());
    }
    (name == "task" ? config.task : config.model) = chosen;
    (name == "task" ? config.task_options : config.model_options) = models::option_defaults(declared);
    return;
  }
  if (const models::Option* option = chosen_option(config, name)) {
    nlohmann::json& options = config.task_options.contains(name) ? config.task_options : config.model_options;
    options[name] = models::checked_option_value(*option, value);
    return;
  }
  if (name == "resume") {  // on | off | auto; booleans too (configs and checkpoints written when it was a flag)
    std::string v;
    if (value.is_boolean()) v = value.get<bool>() ? "on" : "off";
    else if (value.is_string()) v = value.get<std::string>();
    if (v == "true") v = "on";
    if (v == "false") v = "off";
    if (v != "on" && v != "off" && v != "auto")
      fail("invalid config field 'resume' = {}: expected on, off or auto (or true / false)", value.dump());
    config.resume = v;
    return;
  }
  const Field* found = find_field(name);
  if (found == nullptr) {
    if (const std::string owners = other_owners(name); !owners.empty())
      fail("config field '{}' applies only to {} (this run: --task {} --model {})", name, owners, config.task,
           config.model);
    fail_unknown_field(name);
  }
  std::visit(
      [&](auto member) {
        using T = std::remove_reference_t<decltype(config.*member)>;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          TOPO_CHECK(is_int64(value), "config field '{}': expected an integer, got {}", name, value.dump());
          config.*member = value.get<std::int64_t>();
        } else if constexpr (std::is_same_v<T, double>) {
          TOPO_CHECK(value.is_number(), "config field '{}': expected a number, got {}", name, value.dump());
          config.*member = value.get<double>();
        } else if constexpr (std::is_same_v<T, std::string>) {
          TOPO_CHECK(value.is_string(), "config field '{}': expected a string, got {}", name, value.dump());
          config.*member = value.get<std::string>();
        } else {
          TOPO_CHECK(value.is_boolean(), "config field '{}': expected true or false, got {}", name, value.dump());
          config.*member = value.get<bool>();
        }
      },
      found->member);
}

void set_config_field_from_string(TrainConfig& config, const std::string& name, const std::string& text) {
  std::string kind;
  if (const models::Option* option = chosen_option(config, name)) {
    kind = models::value_kind(option->default_value);
  } else if (const Field* field = find_field(name)) {
    kind = kind_of(field->member);
  } else {
    // Another task's or model's option: set_config_field names its owners.
    for (const ConfigField& f : config_fields())
      if (f.name == name) kind = f.kind;
    if (kind.empty()) fail_unknown_field(name);
  }
  set_config_field(config, name, parse_field_text(name, kind, text));
}

void apply_config_json(TrainConfig& config, const nlohmann::json& object, const std::string& source,
                       bool skip_foreign) {
  TOPO_CHECK(object.is_object(), "{}: expected a JSON object of config fields, got {}", source,
             std::string(object.type_name()));
  auto apply = [&](const std::string& key, const nlohmann::json& value) {
    try {
      if (skip_foreign && key != "task" && key != "model" && chosen_option(config, key) == nullptr &&
          find_field(key) == nullptr && !other_owners(key).empty())
        return;
      set_config_field(config, key, value);
    } catch (const Error& e) {
      fail("{}: {}", source, e.what());
    }
  };
  for (const char* first : {"task", "model"})
    if (object.contains(first)) apply(first, object.at(first));
  for (const auto& [key, value] : object.items())
    if (key != "task" && key != "model") apply(key, value);
}

nlohmann::json read_config_file(const std::string& path) { return read_json_file(path, "config file"); }

nlohmann::json TrainConfig::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const Field& f : table()) std::visit([&](auto member) { out[f.name] = this->*member; }, f.member);
  for (const auto& [name, value] : task_options.items()) out[name] = value;
  for (const auto& [name, value] : model_options.items()) out[name] = value;
  return out;
}

nlohmann::json TrainConfig::recorded_json() const {
  nlohmann::json out = to_json();
  if (!scales_lr_by_width()) out["lr_base_width"] = 0;
  const models::ModelRegistration& chosen = models::find_model(model);
  if (chosen.recorded_options) {
    const nlohmann::json recorded = chosen.recorded_options(model_options);  // outlives the loop over its items
    for (const auto& [name, value] : recorded.items()) out[name] = value;
  }
  return out;
}

const std::vector<std::string>& TrainConfig::runtime_fields() {
  static const std::vector<std::string> fields = {"threads",      "device",         "log_every",   "progress",
                                                  "out",          "resume",         "profile",     "stop_after",
                                                  "dist_reduce",  "dist_bucket_mb", "dist_timeout"};
  return fields;
}

void TrainConfig::validate() const {
  auto bad = [](const char* field, const auto& value, const std::string& why) {
    fail("invalid config field '{}' = {}: {}", field, value, why);
  };
  // The task's options, by the task: their types and choices, then how they fit together.
  const TaskRegistration& chosen_task = find_task(task);
  const TaskSettings settings = task_settings(*this);
  check_owned_options(task_options, chosen_task.options, "task", task);
  if (chosen_task.validate) chosen_task.validate(settings);
  // The model's options by their choices; the model must read what the task gives.
  const models::ModelRegistration& chosen = models::find_model(model);
  check_owned_options(model_options, chosen.options, "model", model);
  if (chosen.validate) {
    models::EncoderSpec sizes;  // the run's sizes and the model's options: the task's data is not read yet
    sizes.hidden = hidden;
    sizes.heads = heads;
    sizes.layers = layers;
    sizes.options = model_options;
    chosen.validate(sizes);
  }
  if (!reads(chosen, chosen_task.input))
    bad("model", "'" + model + "'",
        fmt::format("{} needs a model that reads {}: {}", task, task_input_name(chosen_task.input),
                    models_reading(chosen_task.input)));
  // Counts past these are typos, and near 2^63 they wrapped in the step arithmetic: a batch of 2^63 - 1 crashed
  // the length bucketing (SIGSEGV), epochs of 2^63 - 1 planned -4 steps, min_steps of 2^63 - 1 was ignored.
  constexpr std::int64_t kMaxEpochs = 1'000'000, kMaxSteps = 1'000'000'000'000;
  if (patience < 0) bad("patience", patience, "must be >= 0 (0: never stop early)");
  if (min_steps < 0 || min_steps > kMaxSteps) bad("min_steps", min_steps, fmt::format("must be in [0, {}]", kMaxSteps));
  if (eval_batch < 0) bad("eval_batch", eval_batch, "must be >= 0 (0: the task's default)");
  // Upper bounds far past any model that trains here (models::kMaxLayers / kMaxHeads: encoder_config.hpp).
  constexpr std::int64_t kMaxWidth = 65536;
  using models::kMaxHeads, models::kMaxLayers;
  if (layers < 1 || layers > kMaxLayers) bad("layers", layers, fmt::format("must be in [1, {}]", kMaxLayers));
  if (hidden < 1 || hidden > kMaxWidth) bad("hidden", hidden, fmt::format("must be in [1, {}]", kMaxWidth));
  if (heads < 1 || heads > kMaxHeads) bad("heads", heads, fmt::format("must be in [1, {}]", kMaxHeads));
  // Only attention splits hidden into heads; the other encoders ignore the field.
  if (chosen.heads_divide_hidden && hidden % heads != 0)
    bad("heads", heads, fmt::format("must divide hidden = {}", hidden));
  if (head_hidden < 0 || head_hidden > kMaxWidth)
    bad("head_hidden", head_hidden, fmt::format("must be in [0, {}] (0: one Linear)", kMaxWidth));
  if (!(dropout >= 0.0 && dropout < 1.0)) bad("dropout", dropout, "must be in [0, 1)");
  if (!(word_dropout >= 0.0 && word_dropout < 1.0)) bad("word_dropout", word_dropout, "must be in [0, 1)");
  if (!(ema_decay >= 0.0 && ema_decay < 1.0)) bad("ema_decay", ema_decay, "must be in [0, 1)");
  if (epochs < 1 || epochs > kMaxEpochs) bad("epochs", epochs, fmt::format("must be in [1, {}]", kMaxEpochs));
  if (batch < 1 || batch > kMaxBatch) bad("batch", batch, fmt::format("must be in [1, {}]", kMaxBatch));
  if (!one_of(optimizer, {"adam", "adamw"})) bad("optimizer", "'" + optimizer + "'", "expected adam or adamw");
  // The optimizers step in float: 1e308 is a finite double and an infinite float.
  if (!(lr > 0.0 && lr <= std::numeric_limits<float>::max())) bad("lr", lr, "must be a positive number (a float's)");
  if (!one_of(schedule, {"constant", "linear", "cosine", "inverse_sqrt"}))
    bad("schedule", "'" + schedule + "'", "expected constant, linear, cosine or inverse_sqrt");
  if (warmup < 0) bad("warmup", warmup, "must be >= 0");
  if (lr_base_width < 0) bad("lr_base_width", lr_base_width, "must be >= 0 (0: one lr for every weight)");
  if (!(clip >= 0.0 && std::isfinite(clip))) bad("clip", clip, "must be >= 0 (0: no clipping)");
  if (!(weight_decay >= 0.0 && std::isfinite(weight_decay))) bad("weight_decay", weight_decay, "must be >= 0");
  if (seed < 0) bad("seed", seed, "must be >= 0");
  if (threads < 0 || threads > kMaxThreads)
    bad("threads", threads, fmt::format("must be in [0, {}] (0: default)", kMaxThreads));
  try {
    (void)Device::parse(device);
  } catch (const Error&) {
    bad("device", "'" + device + "'", "expected cpu, cuda or cuda:N");
  }
  if (!one_of(precision, {"fp32", "bf16"})) bad("precision", "'" + precision + "'", "expected fp32 or bf16");
  if (eval_every < 0) bad("eval_every", eval_every, "must be >= 0 (0: every epoch)");
  if (log_every < 1) bad("log_every", log_every, "must be >= 1");
  if (!one_of(progress, {"auto", "bar", "lines", "none"}))
    bad("progress", "'" + progress + "'", "expected auto, bar, lines or none");
  if (out.empty()) bad("out", "''", "must name a directory");
  if (stop_after < 0) bad("stop_after", stop_after, "must be >= 0 (0: never)");
  if (!one_of(resume, {"on", "off", "auto"})) bad("resume", "'" + resume + "'", "expected on, off or auto");
  if (!one_of(dist_reduce, {"overlap", "after-backward"}))
    bad("dist_reduce", "'" + dist_reduce + "'", "expected overlap or after-backward");
  if (!(dist_bucket_mb > 0)) bad("dist_bucket_mb", dist_bucket_mb, "must be > 0");
  if (!(dist_timeout > 0)) bad("dist_timeout", dist_timeout, "must be > 0 seconds");
}

}  // namespace topo::apps
