#pragma once
// TrainConfig: everything one training run depends on. Sources, later ones winning: the defaults below,
// the model's recipe for the task (models/registry.hpp; topo-train's command line applies it), a JSON
// object (`--config FILE.json`, keys spelled as the fields: "train_size"), then command-line flags (dashes:
// `--train-size`). Every field is declared once in a table (config.cpp) that drives JSON reading, flag
// registration, string parsing and to_json, so the three cannot drift apart; the options only some models
// read (Star's variant, ...) are declared by the models themselves and join the same keys and flags.
// Unknown keys, wrong JSON types and inconsistent values are topo::Errors naming the field and the value.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace topo::apps {

struct TrainConfig {
  // task
  std::string task = "masked-sum";  // masked-sum | mirrored-sum | classify | tag
  std::int64_t n = 200;       // sequence length (the longest when n_min > 0)
  std::int64_t n_min = 0;     // 0: fixed length n (the paper); else lengths uniform in [n_min, n]
  std::int64_t k = 10;        // masked positions
  std::int64_t d = 10;        // features per position (1 mask + d - 1 values)
  std::int64_t train_size = 10000;
  std::int64_t dev_size = 10000;
  std::int64_t test_size = 10000;
  std::int64_t max_len = 0;   // masked-sum: longest sequence accepted (0: no limit); classify: truncation (0: 256)
  // classify: text data (apps/text)
  std::string format;          // sst | sst-stsa | mtl | tsv | jsonl
  std::string train, dev, test;  // paths; dev may be empty when dev_split > 0 (mtl: the last 200 lines)
  std::int64_t dev_split = 0;  // > 0: dev = the last dev_split examples of the training file
  std::string encoding = "utf8";  // utf8 (invalid bytes -> U+FFFD, counted) | latin1
  bool lowercase = false;
  std::string tokenize = "whitespace";  // whitespace (words) | char (Unicode characters: Chinese text)
  std::string label_field = "label", text_field = "text";  // jsonl keys; tsv header column names (text_a)
  bool skip_bad = false;       // skip malformed lines (counted) instead of stopping at the first
  bool subtrees = false;       // sst: train on every labelled subtree (dev/test stay sentence level)
  bool binary = false;         // sst: SST-2 (drop neutral; 0,1 -> 0; 3,4 -> 1)
  std::int64_t min_freq = 1;   // vocabulary: tokens seen fewer times in training are unknown
  std::string vectors;         // word vectors (GloVe / word2vec text, plain or .gz) initialising the embedding
  bool freeze_vectors = false; // keep the loaded embedding fixed
  bool vectors_lowercase = false;          // a token the file lacks takes its lowercased form's vector
  std::string vectors_bad_lines = "skip";  // malformed vector lines: skip (reported) | reject (error at path:line)
  // tag: sequence labelling (apps/tasks/tag.hpp); format conll | conllu | weibo | bmes (empty: from the file name)
  std::string tag_scheme = "file";  // the scheme the model predicts: file (the training file's) | iob1 | iob2 | bioes | bmes
  bool xpos = false;                // conllu: tag with XPOS instead of UPOS
  bool case_feature = false;        // add a capitalisation embedding {lower, Upper, ALLCAPS, mixed, digits}
  bool crf = false;                 // a linear-chain CRF on the tag scores (NLL, Viterbi, the scheme's constraints)
  // model
  std::string model = "deepsets";  // a registered model (models/registry.hpp)
  // Every registered model's own options (key -> value, every key present, defaults filled in); only the
  // chosen model's may differ from their defaults. Set them by name: set_config_field(c, "variant", "no-ring").
  nlohmann::json model_options = default_model_options();
  std::int64_t layers = 2;
  std::int64_t hidden = 100;
  std::int64_t heads = 10;
  std::int64_t head_hidden = 100;  // hidden width of the output MLP (0: a single Linear)
  double dropout = 0.0;
  // optimisation
  std::int64_t epochs = 10;
  std::int64_t batch = 64;
  std::string optimizer = "adam";  // adam (L2 decay, as the Star authors) | adamw
  double lr = 1e-3;
  std::string schedule = "constant";  // constant | linear | cosine | inverse_sqrt (after warm-up)
  std::int64_t warmup = 0;            // warm-up steps
  double clip = 5.0;                  // max gradient norm (0: no clipping)
  double weight_decay = 0.0;
  std::int64_t min_steps = 0;         // train at least this many steps: epochs are raised to reach it, early stopping waits
  std::int64_t patience = 0;          // early stopping: stop after this many evaluations without a better dev
  std::int64_t seed = 1;
  // run
  std::int64_t threads = 0;        // CPU threads (0: OpenMP's default)
  std::string device = "cpu";      // cpu | cuda | cuda:N
  std::string precision = "fp32";  // CPU GEMMs: fp32 | bf16 (bf16 inputs, fp32 accumulation; AVX512_BF16 only)
  std::int64_t eval_every = 0;     // dev evaluation every this many steps (0: at the end of each epoch)
  std::int64_t eval_batch = 0;     // sequences per evaluation batch (0: masked-sum max(batch, 256); classify 128)
  std::int64_t log_every = 50;     // progress line every this many steps when not on a terminal
  std::string progress = "auto";   // auto (bar on a terminal, lines otherwise) | bar | lines | none
  std::string out = "runs/masked-sum";
  bool resume = false;             // continue from OUT/checkpoint.ckpt
  bool profile = false;            // time the phases of a step; report them in result.json
  std::int64_t stop_after = 0;     // stop (as if interrupted) after this many epochs in total (0: never)
  // data parallel (`mpirun -np N topo-train`, apps/train/data_parallel.hpp): ignored by a single process
  std::string dist_reduce = "overlap";  // overlap: allreduce gradient buckets while backward runs | after-backward
  double dist_bucket_mb = 1.0;     // MiB of gradients per allreduce bucket
  double dist_timeout = 600.0;     // seconds a rank waits in a collective before it ends the job

  // Where each value that is not a default came from: field -> "recipe star/classify", "config FILE" or
  // "flag". Filled by parse_train_args; not a setting (to_json leaves it out, resume does not compare it).
  std::map<std::string, std::string> sources;

  // Throws topo::Error naming the first inconsistent field and its value.
  void validate() const;
  // Every field and every model option, flat: {"task": ..., "variant": ..., ...}.
  nlohmann::json to_json() const;
  // The chosen model's options only: {"variant": "full", "residual": false} for star.
  nlohmann::json options_of_model() const;
  // The registered models' options at their defaults.
  static nlohmann::json default_model_options();
  // Fields whose change does not change the computation (where the run writes, how it reports, ...):
  // a resumed run may differ from the checkpoint in these only.
  static const std::vector<std::string>& runtime_fields();
};

// All field names (JSON spelling), in declaration order, with their help texts.
struct ConfigField {
  std::string name;
  std::string kind;  // "int", "float", "string", "bool"
  std::string help;
};
const std::vector<ConfigField>& config_fields();

// Sets one field from JSON (type-checked) or from a command-line string (parsed per the field's kind).
void set_config_field(TrainConfig& config, const std::string& name, const nlohmann::json& value);
void set_config_field_from_string(TrainConfig& config, const std::string& name, const std::string& text);
// Applies every key of a JSON object (unknown keys are errors) over `config`.
void apply_config_json(TrainConfig& config, const nlohmann::json& object, const std::string& source = "config");
// Reads FILE.json (missing file / malformed JSON are errors naming the file); apply_config_json applies it.
nlohmann::json read_config_file(const std::string& path);

}  // namespace topo::apps
