#include "apps/train/config.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <variant>

#include "kernels/device.hpp"
#include "kernels/error.hpp"
#include "models/registry.hpp"

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
      {"task", &TrainConfig::task, "task: masked-sum | mirrored-sum | classify | tag"},
      {"n", &TrainConfig::n, "sequence length (the longest when n_min > 0)"},
      {"n_min", &TrainConfig::n_min, "shortest length; 0: every sequence has length n"},
      {"k", &TrainConfig::k, "masked-sum: masked positions per sequence; mirrored-sum: mirrored pairs summed (K)"},
      {"d", &TrainConfig::d, "features per position (masked-sum: 1 mask + d-1 values)"},
      {"train_size", &TrainConfig::train_size, "training examples"},
      {"dev_size", &TrainConfig::dev_size, "development examples"},
      {"test_size", &TrainConfig::test_size, "test examples"},
      {"max_len", &TrainConfig::max_len,
       "masked-sum: longest sequence accepted (0: no limit); classify: truncate sentences to this many tokens (0: 256)"},
      {"format", &TrainConfig::format,
       "classify: sst | sst-stsa | mtl | tsv | jsonl; tag: conll | conllu | weibo | bmes (empty: from the file name)"},
      {"train", &TrainConfig::train, "classify: training file"},
      {"dev", &TrainConfig::dev, "classify: development file (optional with dev_split; mtl: last 200 training lines)"},
      {"test", &TrainConfig::test, "classify: test file (optional)"},
      {"dev_split", &TrainConfig::dev_split, "classify: dev = the last N training examples (0: use --dev)"},
      {"encoding", &TrainConfig::encoding, "classify: text encoding: utf8 (invalid bytes replaced, counted) | latin1"},
      {"lowercase", &TrainConfig::lowercase, "classify: lowercase tokens"},
      {"label_field", &TrainConfig::label_field, "classify: label key (jsonl) / header column (tsv)"},
      {"text_field", &TrainConfig::text_field,
       "classify: text key (jsonl) / header column (tsv; ChnSentiCorp's header says text_a)"},
      {"tokenize", &TrainConfig::tokenize,
       "classify: tokens are whitespace-separated words | char (Unicode characters, e.g. Chinese text)"},
      {"skip_bad", &TrainConfig::skip_bad, "classify: skip malformed lines (counted) instead of failing"},
      {"subtrees", &TrainConfig::subtrees, "classify, sst: train on every labelled subtree"},
      {"binary", &TrainConfig::binary, "classify, sst: SST-2 (drop neutral, merge the polarities)"},
      {"min_freq", &TrainConfig::min_freq, "classify: vocabulary minimum training frequency"},
      {"vectors", &TrainConfig::vectors,
       "classify: word vectors (GloVe / word2vec text, plain or .gz) for the embedding; another width than "
       "--hidden is projected"},
      {"freeze_vectors", &TrainConfig::freeze_vectors, "classify: keep the loaded word vectors fixed"},
      {"vectors_lowercase", &TrainConfig::vectors_lowercase,
       "classify: a token absent from the vectors takes its lowercased form's vector"},
      {"vectors_bad_lines", &TrainConfig::vectors_bad_lines,
       "classify: malformed vector lines: skip (reported with path:line) | reject (stop there)"},
      {"tag_scheme", &TrainConfig::tag_scheme,
       "tag: the scheme the model predicts: file (the training file's) | iob1 | iob2 | bioes | bmes"},
      {"xpos", &TrainConfig::xpos, "tag, conllu: tag with XPOS instead of UPOS"},
      {"case_feature", &TrainConfig::case_feature,
       "tag: add a capitalisation embedding (lower, Upper, ALLCAPS, mixed, digits) to each token"},
      {"crf", &TrainConfig::crf,
       "tag: a linear-chain CRF on the per-token scores (NLL training, Viterbi decoding, the scheme's constraints)"},
      {"model", &TrainConfig::model, "encoder: a registered model (their own options follow)"},
      {"layers", &TrainConfig::layers, "encoder layers"},
      {"hidden", &TrainConfig::hidden, "hidden size"},
      {"heads", &TrainConfig::heads, "attention heads (must divide hidden)"},
      {"head_hidden", &TrainConfig::head_hidden, "hidden width of the output MLP (0: one Linear)"},
      {"dropout", &TrainConfig::dropout, "dropout probability"},
      {"epochs", &TrainConfig::epochs, "training epochs"},
      {"batch", &TrainConfig::batch, "sequences per batch"},
      {"optimizer", &TrainConfig::optimizer, "adam | adamw"},
      {"lr", &TrainConfig::lr, "learning rate"},
      {"schedule", &TrainConfig::schedule, "lr schedule after warm-up: constant | linear | cosine | inverse_sqrt"},
      {"warmup", &TrainConfig::warmup, "warm-up steps"},
      {"clip", &TrainConfig::clip, "max gradient norm (0: no clipping)"},
      {"weight_decay", &TrainConfig::weight_decay, "weight decay (not on biases and norms)"},
      {"min_steps", &TrainConfig::min_steps,
       "train at least N optimizer steps: epochs are raised to reach N and early stopping waits for it (small data)"},
      {"patience", &TrainConfig::patience, "early stopping: evaluations without a better dev (0: never stop)"},
      {"seed", &TrainConfig::seed, "seed of data, initialisation, shuffling and dropout"},
      {"threads", &TrainConfig::threads, "CPU threads (0: default)"},
      {"device", &TrainConfig::device, "cpu | cuda | cuda:N"},
      {"precision", &TrainConfig::precision,
       "GEMMs: fp32 | bf16 (inputs rounded to bf16, fp32 accumulation, weights, optimizer, norms; CPUs with "
       "AVX512_BF16 only, fp32 elsewhere, said in the log)"},
      {"eval_every", &TrainConfig::eval_every, "evaluate on dev every N steps (0: every epoch)"},
      {"eval_batch", &TrainConfig::eval_batch, "evaluation batch (0: masked-sum max(batch, 256), classify 128)"},
      {"log_every", &TrainConfig::log_every, "progress line every N steps when not on a terminal"},
      {"progress", &TrainConfig::progress, "auto | bar | lines | none"},
      {"out", &TrainConfig::out, "output directory (checkpoints, metrics.jsonl, result.json)"},
      {"resume", &TrainConfig::resume, "continue from OUT/checkpoint.ckpt"},
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

std::string shown(const nlohmann::json& value) { return value.dump(); }

// The table's field named `name`, or null when it is a model option (or unknown).
const Field* find_field(const std::string& name) {
  for (const Field& f : table())
    if (name == f.name) return &f;
  return nullptr;
}

const models::ModelOption* find_model_option(const std::string& name) {
  for (const models::ModelOption& o : models::all_model_options())
    if (o.name == name) return &o;
  return nullptr;
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

// A model option's kind is its default's type.
const char* kind_of(const nlohmann::json& default_value) {
  if (default_value.is_boolean()) return "bool";
  if (default_value.is_number_integer()) return "int";
  if (default_value.is_number()) return "float";
  return "string";
}

// Sets a model option from a JSON value of the option's kind.
void set_model_option(TrainConfig& config, const models::ModelOption& option, const nlohmann::json& value) {
  const std::string kind = kind_of(option.default_value);
  const bool fits = kind == "bool"    ? value.is_boolean()
                    : kind == "int"   ? value.is_number_integer()
                    : kind == "float" ? value.is_number()
                                      : value.is_string();
  TOPO_CHECK(fits, "config field '{}': expected {}, got {}", option.name,
             kind == "bool" ? "true or false" : kind == "int" ? "an integer" : kind == "float" ? "a number" : "a string",
             shown(value));
  config.model_options[option.name] = kind == "float" ? nlohmann::json(value.get<double>()) : value;
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
  return text;
}

// A model option's value as validation errors show it: strings quoted, the rest as JSON.
std::string shown_option(const nlohmann::json& value) {
  return value.is_string() ? fmt::format("'{}'", value.get<std::string>()) : value.dump();
}

// Registered models that read token ids (or, with false, features): "star, transformer".
std::string models_reading(bool token_ids) {
  std::string names;
  for (const models::ModelRegistration& m : models::registered_models())
    if (token_ids ? m.reads_token_ids : m.reads_features) names += (names.empty() ? "" : ", ") + m.name;
  return names;
}

// Every option holds one of its choices, and only the chosen model's options leave their defaults.
void validate_model_options(const TrainConfig& config, const models::ModelRegistration& chosen) {
  for (const models::ModelOption& shared : models::all_model_options()) {
    const nlohmann::json& value = config.model_options.at(shared.name);
    // Models sharing a key (Star's and BiG's variant) share its default, not its choices: the chosen model's
    // declaration says what it accepts.
    const auto own = std::find_if(chosen.options.begin(), chosen.options.end(),
                                  [&](const models::ModelOption& c) { return c.name == shared.name; });
    const bool declared = own != chosen.options.end();
    const models::ModelOption& o = declared ? *own : shared;
    if (!o.choices.empty() &&
        (!value.is_string() || std::find(o.choices.begin(), o.choices.end(), value.get<std::string>()) == o.choices.end()))
      fail("invalid config field '{}' = {}: expected one of {}", o.name, shown_option(value), fmt::join(o.choices, ", "));
    if (!declared && value != o.default_value)
      fail("invalid config field '{}' = {}: applies only to --model {}", o.name, shown_option(value),
           models::models_declaring(o.name));
  }
}

}  // namespace

const std::vector<ConfigField>& config_fields() {
  static const std::vector<ConfigField> fields = [] {
    std::vector<ConfigField> out;
    for (const Field& f : table()) {
      if (std::string(f.name) != "model") {
        out.push_back({f.name, kind_of(f.member), f.help});
        continue;
      }
      // The model field lists the registered models; their own options follow it.
      out.push_back({f.name, kind_of(f.member), fmt::format("encoder: {}", models::registered_model_names())});
      for (const models::ModelOption& o : models::all_model_options())
        out.push_back({o.name, kind_of(o.default_value),
                       fmt::format("{} (--model {}; default {})", o.help, models::models_declaring(o.name),
                                   o.default_value.dump())});
    }
    return out;
  }();
  return fields;
}

void set_config_field(TrainConfig& config, const std::string& name, const nlohmann::json& value) {
  if (const models::ModelOption* option = find_model_option(name)) return set_model_option(config, *option, value);
  const Field* found = find_field(name);
  if (found == nullptr) fail_unknown_field(name);
  const Field& field = *found;
  std::visit(
      [&](auto member) {
        using T = std::remove_reference_t<decltype(config.*member)>;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          TOPO_CHECK(value.is_number_integer(), "config field '{}': expected an integer, got {}", name, shown(value));
          config.*member = value.get<std::int64_t>();
        } else if constexpr (std::is_same_v<T, double>) {
          TOPO_CHECK(value.is_number(), "config field '{}': expected a number, got {}", name, shown(value));
          config.*member = value.get<double>();
        } else if constexpr (std::is_same_v<T, std::string>) {
          TOPO_CHECK(value.is_string(), "config field '{}': expected a string, got {}", name, shown(value));
          config.*member = value.get<std::string>();
        } else {
          TOPO_CHECK(value.is_boolean(), "config field '{}': expected true or false, got {}", name, shown(value));
          config.*member = value.get<bool>();
        }
      },
      field.member);
}

void set_config_field_from_string(TrainConfig& config, const std::string& name, const std::string& text) {
  const models::ModelOption* option = find_model_option(name);
  const Field* field = option != nullptr ? nullptr : find_field(name);
  if (option == nullptr && field == nullptr) fail_unknown_field(name);
  const std::string kind = option != nullptr ? kind_of(option->default_value) : kind_of(field->member);
  set_config_field(config, name, parse_field_text(name, kind, text));
}

void apply_config_json(TrainConfig& config, const nlohmann::json& object, const std::string& source) {
  TOPO_CHECK(object.is_object(), "{}: expected a JSON object of config fields, got {}", source,
             std::string(object.type_name()));
  for (const auto& [key, value] : object.items()) {
    try {
      set_config_field(config, key, value);
    } catch (const Error& e) {
      fail("{}: {}", source, e.what());
    }
  }
}

nlohmann::json read_config_file(const std::string& path) {
  std::ifstream in(path);
  TOPO_CHECK(in.good(), "config file '{}' cannot be opened", path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json object;
  try {
    object = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    fail("config file '{}' is not valid JSON: {}", path, e.what());
  }
  return object;
}

nlohmann::json TrainConfig::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const Field& f : table()) std::visit([&](auto member) { out[f.name] = this->*member; }, f.member);
  for (const auto& [name, value] : model_options.items()) out[name] = value;
  return out;
}

nlohmann::json TrainConfig::options_of_model() const {
  nlohmann::json out = nlohmann::json::object();
  for (const models::ModelOption& o : models::find_model(model).options) out[o.name] = model_options.at(o.name);
  return out;
}

nlohmann::json TrainConfig::default_model_options() {
  nlohmann::json out = nlohmann::json::object();
  for (const models::ModelOption& o : models::all_model_options()) out[o.name] = o.default_value;
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
  if (!one_of(task, {"masked-sum", "mirrored-sum", "classify", "tag"}))
    bad("task", "'" + task + "'", "expected masked-sum, mirrored-sum, classify or tag");
  const models::ModelRegistration* chosen = nullptr;
  for (const models::ModelRegistration& m : models::registered_models())
    if (m.name == model) chosen = &m;
  if (chosen == nullptr) bad("model", "'" + model + "'", "expected one of " + models::registered_model_names());
  validate_model_options(*this, *chosen);
  // The text tasks' shared inputs: decoding, vocabulary, a model that reads token ids, word vectors.
  const auto check_text_inputs = [&] {
    if (!one_of(encoding, {"utf8", "latin1"})) bad("encoding", "'" + encoding + "'", "expected utf8 or latin1");
    if (min_freq < 1) bad("min_freq", min_freq, "must be >= 1");
    if (!chosen->reads_token_ids)
      bad("model", "'" + model + "'", task + " needs a model that reads token ids: " + models_reading(true));
    if (freeze_vectors && vectors.empty()) bad("freeze_vectors", "true", "needs --vectors");
    if (vectors_lowercase && vectors.empty()) bad("vectors_lowercase", "true", "needs --vectors");
    if (!one_of(vectors_bad_lines, {"skip", "reject"}))
      bad("vectors_bad_lines", "'" + vectors_bad_lines + "'", "expected skip or reject");
  };
  if (task == "mirrored-sum") {
    if (n < 1) bad("n", n, "must be >= 1");
    if (n_min != 0) bad("n_min", n_min, "mirrored-sum has fixed-length sequences (0)");
    if (d < 1) bad("d", d, "must be >= 1");
    if (k < 1 || k > n) bad("k", k, fmt::format("must be in [1, n = {}]", n));
    if (train_size < 1) bad("train_size", train_size, "must be >= 1");
    if (dev_size < 1) bad("dev_size", dev_size, "must be >= 1");
    if (test_size < 1) bad("test_size", test_size, "must be >= 1");
    if (max_len > 0 && n > max_len) bad("n", n, fmt::format("exceeds max_len = {}", max_len));
    if (!chosen->reads_features)
      bad("model", "'" + model + "'", "mirrored-sum needs a model that reads features: " + models_reading(false));
  } else if (task == "masked-sum") {
    if (n < 1) bad("n", n, "must be >= 1");
    if (n_min < 0 || n_min > n) bad("n_min", n_min, fmt::format("must be in [0, n = {}]", n));
    if (d < 2) bad("d", d, "must be >= 2 (one mask feature plus values)");
    const std::int64_t shortest = n_min > 0 ? n_min : n;
    if (k < 1) bad("k", k, "must be >= 1");
    if (k > shortest) bad("k", k, fmt::format("must be <= the shortest sequence length {}", shortest));
    if (train_size < 1) bad("train_size", train_size, "must be >= 1");
    if (dev_size < 1) bad("dev_size", dev_size, "must be >= 1");
    if (test_size < 1) bad("test_size", test_size, "must be >= 1");
    if (max_len > 0 && n > max_len) bad("n", n, fmt::format("exceeds max_len = {}", max_len));
    if (!chosen->reads_features)
      bad("model", "'" + model + "'", "masked-sum needs a model that reads features: " + models_reading(false));
  } else if (task == "tag") {
    if (!format.empty() && !one_of(format, {"conll", "conllu", "weibo", "bmes"}))
      bad("format", "'" + format + "'", "expected conll, conllu, weibo or bmes (empty: from the file name)");
    if (train.empty()) bad("train", "''", "tag needs a training file");
    if (dev.empty()) bad("dev", "''", "tag needs a dev file (the checkpoint is selected on it)");
    if (dev_split != 0) bad("dev_split", dev_split, "tag takes a dev file, not a split");
    if (!one_of(tag_scheme, {"file", "iob1", "iob2", "bio", "bioes", "bmes"}))
      bad("tag_scheme", "'" + tag_scheme + "'", "expected file, iob1, iob2 (bio), bioes or bmes");
    if (xpos && !format.empty() && format != "conllu") bad("xpos", "true", "applies only to --format conllu");
    check_text_inputs();
  } else {
    if (!one_of(format, {"sst", "sst-stsa", "mtl", "tsv", "jsonl"}))
      bad("format", "'" + format + "'", "expected sst, sst-stsa, mtl, tsv or jsonl");
    if (train.empty()) bad("train", "''", "classify needs a training file");
    if (dev_split < 0) bad("dev_split", dev_split, "must be >= 0");
    if (dev.empty() && dev_split == 0 && format != "mtl")
      bad("dev", "''", "classify needs a dev file, or dev_split > 0 to hold out the last training examples");
    if (!dev.empty() && dev_split > 0) bad("dev_split", dev_split, "give either dev or dev_split, not both");
    if (!one_of(tokenize, {"whitespace", "char"})) bad("tokenize", "'" + tokenize + "'", "expected whitespace or char");
    if ((subtrees || binary) && format != "sst" && format != "sst-stsa")
      bad(subtrees ? "subtrees" : "binary", "true", "applies only to the sst formats");
    if (subtrees && format != "sst") bad("subtrees", "true", "needs trees (--format sst)");
    check_text_inputs();
  }
  if (max_len < 0) bad("max_len", max_len, "must be >= 0");
  if (patience < 0) bad("patience", patience, "must be >= 0 (0: never stop early)");
  if (min_steps < 0) bad("min_steps", min_steps, "must be >= 0");
  if (eval_batch < 0) bad("eval_batch", eval_batch, "must be >= 0 (0: the task's default)");
  if (layers < 1) bad("layers", layers, "must be >= 1");
  if (hidden < 1) bad("hidden", hidden, "must be >= 1");
  if (heads < 1) bad("heads", heads, "must be >= 1");
  // Only attention splits hidden into heads; the other encoders ignore the field.
  if (chosen->heads_divide_hidden && hidden % heads != 0)
    bad("heads", heads, fmt::format("must divide hidden = {}", hidden));
  if (head_hidden < 0) bad("head_hidden", head_hidden, "must be >= 0 (0: one Linear)");
  if (!(dropout >= 0.0 && dropout < 1.0)) bad("dropout", dropout, "must be in [0, 1)");
  if (epochs < 1) bad("epochs", epochs, "must be >= 1");
  if (batch < 1) bad("batch", batch, "must be >= 1");
  if (!one_of(optimizer, {"adam", "adamw"})) bad("optimizer", "'" + optimizer + "'", "expected adam or adamw");
  if (!(lr > 0.0 && std::isfinite(lr))) bad("lr", lr, "must be a positive number");
  if (!one_of(schedule, {"constant", "linear", "cosine", "inverse_sqrt"}))
    bad("schedule", "'" + schedule + "'", "expected constant, linear, cosine or inverse_sqrt");
  if (warmup < 0) bad("warmup", warmup, "must be >= 0");
  if (!(clip >= 0.0 && std::isfinite(clip))) bad("clip", clip, "must be >= 0 (0: no clipping)");
  if (!(weight_decay >= 0.0 && std::isfinite(weight_decay))) bad("weight_decay", weight_decay, "must be >= 0");
  if (seed < 0) bad("seed", seed, "must be >= 0");
  if (threads < 0) bad("threads", threads, "must be >= 0 (0: default)");
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
  if (!one_of(dist_reduce, {"overlap", "after-backward"}))
    bad("dist_reduce", "'" + dist_reduce + "'", "expected overlap or after-backward");
  if (!(dist_bucket_mb > 0)) bad("dist_bucket_mb", dist_bucket_mb, "must be > 0");
  if (!(dist_timeout > 0)) bad("dist_timeout", dist_timeout, "must be > 0 seconds");
}

}  // namespace topo::apps
