#pragma once
// The models a program can build by name. Each model registers itself from its own folder
// (<folder>/registration.cpp): its name, the inputs it reads, its own config keys, a factory, and its working
// recipe per task. topo-train turns `--model NAME` into an encoder through this table only, so adding a model
// changes no file in apps/ (models/README.md walks through one).
//
// Why an explicit list (registry.cpp, one line per model) and not self-registering static objects: the models
// are a static library, and the linker drops an object file nothing references, so a registration object
// would silently vanish from every program (topo-train, topo-eval, the tests, the benchmarks) unless each
// linked the library whole-archive. A function the list calls is always linked, and the list fixes the order
// --help shows.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/error.hpp"
#include "kernels/tensor.hpp"
#include "models/model.hpp"
#include "models/option.hpp"
#include "nn/ops.hpp"

namespace topo::models {

// A setting only some models read (Star's variant, the Transformer's attention path): see models/option.hpp.
// Each model declares its own, with its own default; two models may share a name (its type must agree).
using ModelOption = Option;

// Everything an encoder is built from: the run's sizes, the task's inputs and the model's own options. A
// registration takes the fields every encoder shares with encoder_config(spec) (models/encoder_config.hpp).
struct EncoderSpec {
  std::int64_t hidden = 100;
  std::int64_t heads = 10;
  std::int64_t layers = 2;
  float dropout = 0.f;
  std::int64_t vocab_size = 0;    // > 0: the task gives token ids from a vocabulary this large
  std::int64_t input_dim = 0;     // > 0: the task gives this many features per position instead
  std::int64_t max_length = 256;  // the longest sequence the run can see (size of learned position tables)
  Tensor pretrained;              // optional token vectors float32 [vocab_size, embedding_dim or hidden]
  // The token string of every id ([vocab_size], UTF-8) when the task reads text; models that look at the text
  // itself (BiG-Transformer's lexicon matching) read it, the others ignore it.
  std::vector<std::string> vocabulary = {};
  bool freeze_pretrained = false;
  std::vector<std::uint8_t> pretrained_rows = {};  // the rows of `pretrained` that hold vectors (empty: all)
  // In (0, vocab_size): ids from here on never occur in training; their rows stay out of the optimizer.
  std::int64_t trained_rows = 0;
  std::int64_t embedding_dim = 0;                  // token table width (0: hidden; else projected to hidden)
  // > 0: the batch carries a class per token (SequenceBatch::token_case, e.g. capitalisation) whose learned
  // embedding is added to the token's (models with SequenceEmbedding; the others refuse it).
  std::int64_t case_classes = 0;
  // > 0: the batch carries each token's characters (SequenceBatch::token_chars, classes below char_classes),
  // read by a character CNN of char_filters filters; suffix_classes > 0: a class per token's ending
  // (token_suffix) whose embedding is added. Models with SequenceEmbedding; the others refuse them.
  std::int64_t char_classes = 0;
  std::int64_t char_filters = 0;
  std::int64_t suffix_classes = 0;
  // > 0: the batch carries two bigram classes per token (token_bigrams), embedded at width bigram_dim
  // (bigram_pretrained [bigram_classes, bigram_dim] and its covered rows, optional) and projected into the
  // token's embedding (models::BigramFeatures): models with SequenceEmbedding, and BiG.
  std::int64_t bigram_classes = 0;
  std::int64_t bigram_dim = 0;
  Tensor bigram_pretrained = {};
  std::vector<std::uint8_t> bigram_pretrained_rows = {};
  // > 0: in training, token ids are replaced by the vocabulary's <unk> (id 1) with this probability before the
  // look-up (word dropout; models with SequenceEmbedding, the others refuse it).
  float word_dropout = 0.f;
  // > 0: the task wants this many features per node out of the encoder's last layer (node classification's class
  // scores: GCN and GAT end in their class layer); 0: hidden_size(). Only models that read graphs honour it.
  std::int64_t output_dim = 0;
  nn::Generator* generator = nullptr;  // dropout masks of models that take a generator (default one when null)
  nlohmann::json options = nlohmann::json::object();  // every option the model declares, defaults filled in

  // One of `options`, typed; a missing or mistyped one is a topo::Error naming it.
  template <class T>
  T option(const std::string& name) const;
};

struct ModelRegistration {
  std::string name;     // --model NAME
  std::string summary;  // one line for --help
  bool reads_token_ids = true;  // text tasks (classify)
  bool reads_features = true;   // feature tasks (masked-sum)
  bool reads_graph = false;     // graph tasks (node-classify): SequenceBatch::graph, one node per token row
  bool heads_divide_hidden = true;  // attention splits hidden into heads: heads must divide it
  std::vector<ModelOption> options;
  std::function<std::shared_ptr<SequenceEncoder>(const EncoderSpec&)> make;
  // Optional: checks the options against the run's sizes (spec.hidden, heads, layers and options; the task's
  // fields are not filled in) when the config is validated, before any data is read.
  std::function<void(const EncoderSpec&)> validate;
  // Optional: run settings the options imply, as config fields ({"heads": 10, "layers": 2} from a topology
  // file's head groups). topo-train puts them over the defaults and the recipe, never over a value the user
  // gave (validate then reports a disagreement).
  std::function<nlohmann::json(const nlohmann::json& options)> implied_settings;
  // Optional: the options as a checkpoint records them, when a value names something outside the run (the
  // graph model's topology file becomes its content), so the checkpoint evaluates and resumes without it and a
  // resume notices an edited file. The factory must accept the recorded form.
  std::function<nlohmann::json(const nlohmann::json& options)> recorded_options;
  // Per task ("classify", "masked-sum", ...): the config keys, in topo-train's JSON spelling, of the recipe
  // the model trains well with. They are topo-train's defaults for that model and task; a --config file and
  // flags override them.
  std::map<std::string, nlohmann::json> recipes;
};

// In the order of registry.cpp's list.
const std::vector<ModelRegistration>& registered_models();
// The model registered as `name`; a topo::Error listing the registered names otherwise.
const ModelRegistration& find_model(const std::string& name);
// "deepsets, star, transformer".
std::string registered_model_names();
// The registered models declaring option `name`, comma-separated ("star").
std::string models_declaring(const std::string& name);
// The recipe `model` registers for `task`: an empty object when it has none (or the model is unknown).
nlohmann::json model_recipe(const std::string& model, const std::string& task);

template <class T>
T EncoderSpec::option(const std::string& name) const {
  return option_value<T>(options, name, "model");
}

}  // namespace topo::models
