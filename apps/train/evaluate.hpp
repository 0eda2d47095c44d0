#pragma once
// topo-eval's work as a library call: score a saved model of a task that reads files (classify, tag, nli: each
// task's registration has evaluate_file) on any file of a supported format.
// The checkpoint (a run directory's best.ckpt, or a .ckpt file) carries the training config, the vocabulary,
// the label set and the reading options, so the file is tokenized and encoded exactly as training did.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace topo::apps {

struct EvalOptions {
  std::string checkpoint;  // run directory (its best.ckpt) or a checkpoint file
  std::string test;        // file to score
  std::string format;      // empty: the format the model was trained on
  std::string json;        // where to write the result (atomically); empty: nowhere
  std::int64_t batch = 128;
  std::int64_t threads = 0;
  std::string device = "cpu";
  std::string precision = "fp32";  // GEMMs: fp32 | bf16 (fp32 where the CPU lacks AVX512_BF16; the result says which)
  std::string attention;   // Transformer: graph | dense overrides the trained setting (same parameters)
  bool skip_bad = false;
  std::string predictions;  // taggers: write the scored file with a predicted column here
};

// The checkpoint file a --checkpoint argument names (DIR -> DIR/best.ckpt); missing: an error naming it.
std::string resolve_checkpoint(const std::string& path);

// Classifiers: {"checkpoint", "test", "format", "model", "acc", "loss", "examples", "ms_per_batch", "batch",
//  "majority_acc", "read": {...}, "precision" (the GEMM precision that ran), "precision_note" (the log line saying
//  what was asked and what ran), "config": {...}}. Taggers: {"task": "tag", "metric", "f1" or "acc", "acc",
//  "scores": {conlleval's counts, per_type}, "table": conlleval's report, "majority_tag", ...}. Written to
//  options.json when set.
nlohmann::json evaluate_checkpoint(const EvalOptions& options);

// Command line of topo-eval; nullopt after --help (printed to `out`). Bad flags are topo::Errors.
std::optional<EvalOptions> parse_eval_args(int argc, const char* const* argv, std::ostream& out);

}  // namespace topo::apps
