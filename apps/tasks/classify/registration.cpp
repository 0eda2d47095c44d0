// `--task classify`: text classification (SST, MTL-16, TSV, JSON lines), its options, their checks, and
// topo-eval's scoring of a saved classifier on a file.
#include "apps/tasks/classify/classify.hpp"
#include "apps/tasks/registry.hpp"
#include "apps/tasks/text_task_options.hpp"

namespace topo::apps {

ClassifyOptions text_classification_options(const TaskSettings& s) {
  ClassifyOptions o;
  o.train = s.option<std::string>("train");
  o.dev = s.option<std::string>("dev");
  o.test = s.option<std::string>("test");
  o.read.encoding = text::parse_text_encoding(s.option<std::string>("encoding"));
  o.read.lowercase = s.option<bool>("lowercase");
  o.read.skip_bad = s.option<bool>("skip_bad");
  o.read.max_length = s.option<std::int64_t>("max_len");
  o.min_freq = s.option<std::int64_t>("min_freq");
  o.vectors = s.option<std::string>("vectors");
  o.vector_options = vector_options(s);
  o.freeze_vectors = s.option<bool>("freeze_vectors");
  o.eval_batch = text_eval_batch(s);
  return o;
}

namespace {

ClassifyOptions options_of(const TaskSettings& s) {
  ClassifyOptions o = text_classification_options(s);
  o.format = s.option<std::string>("format");
  // MTL-16 ships train and test only; its customary dev set is the last 200 training lines.
  const auto dev_split = s.option<std::int64_t>("dev_split");
  o.dev_split = dev_split > 0 ? dev_split : (o.dev.empty() && o.format == "mtl" ? 200 : 0);
  o.read.tokenize = text::parse_tokenization(s.option<std::string>("tokenize"));
  o.read.label_field = s.option<std::string>("label_field");
  o.read.text_field = s.option<std::string>("text_field");
  o.read.sst_binary = s.option<bool>("binary");
  o.train_subtrees = s.option<bool>("subtrees");
  o.train_unique_subtrees = s.option<bool>("unique_subtrees");
  o.vectors_vocabulary = s.option<std::string>("vectors_vocabulary");
  return o;
}

void validate(const TaskSettings& s) {
  const auto format = s.option<std::string>("format");
  const bool sst = format == "sst" || format == "sst-stsa";
  if (format != "mtl" && format != "tsv" && format != "jsonl" && !sst)
    models::fail_invalid_field("format", format, "expected sst, sst-stsa, mtl, tsv or jsonl");
  if (s.option<std::string>("train").empty()) models::fail_invalid_field("train", "", "classify needs a training file");
  const auto dev_split = s.option<std::int64_t>("dev_split");
  const bool dev = !s.option<std::string>("dev").empty();
  if (dev_split < 0) models::fail_invalid_field("dev_split", dev_split, "must be >= 0");
  if (!dev && dev_split == 0 && format != "mtl")
    models::fail_invalid_field("dev", "", "classify needs a dev file, or dev_split > 0 to hold out the last training examples");
  if (dev && dev_split > 0) models::fail_invalid_field("dev_split", dev_split, "give either dev or dev_split, not both");
  for (const char* sst_only : {"subtrees", "binary"})
    if (s.option<bool>(sst_only) && !sst) models::fail_invalid_field(sst_only, true, "applies only to the sst formats");
  if (s.option<bool>("subtrees") && format != "sst") models::fail_invalid_field("subtrees", true, "needs trees (--format sst)");
  if (s.option<bool>("unique_subtrees") && !s.option<bool>("subtrees"))
    models::fail_invalid_field("unique_subtrees", true, "applies only with subtrees");
  validate_text_task(s);
}

}  // namespace

nlohmann::json evaluate_classifier_file(const FileEvaluation& request) {
  ClassifyOptions options;
  // The file's format: as given, else the one training read (in the task's metadata; older checkpoints: config).
  options.format = !request.format.empty()                ? request.format
                   : request.metadata.contains("format") ? request.metadata.value("format", "")
                                                          : request.config.value("format", "");
  options.test = request.test;
  options.eval_batch = request.batch;
  options.read.skip_bad = request.skip_bad;
  TOPO_CHECK(request.predictions.empty(), "--predictions applies to taggers only; '{}' is a classifier",
             request.checkpoint);
  const auto task =
      TextClassification::for_evaluation(request.metadata, options, "checkpoint '" + request.checkpoint + "'");
  const auto model = request.load_model(*task);
  const Evaluation e = task->evaluate(*model, Split::Test, request.device);
  const nlohmann::json baseline = task->baseline(Split::Test);
  const nlohmann::json data = read_stats_json(task->read_stats(Split::Test));
  nlohmann::json result = {{"format", options.format}, {"majority_acc", baseline.at("majority_acc")}, {"data", data}};
  result.update(e.values);
  std::string report = fmt::format(
      "{} on {}: acc {:.4f} ({} examples; majority class {:.4f}), loss {:.4f}, {:.2f} ms per batch of {}\n",
      request.config.value("model", "?"), request.test, result.at("acc").get<double>(),
      result.at("examples").get<std::int64_t>(), result.at("majority_acc").get<double>(),
      result.at("loss").get<double>(), result.at("ms_per_batch").get<double>(), request.batch);
  if (data.at("invalid_utf8_lines").get<std::int64_t>() > 0 || data.at("skipped_bad").get<std::int64_t>() > 0)
    report += fmt::format("input: {} lines with invalid UTF-8 (decoded with U+FFFD{}), {} malformed lines skipped\n",
                          data.at("invalid_utf8_lines").get<std::int64_t>(),
                          data.value("first_invalid_utf8", "").empty()
                              ? ""
                              : "; the first at " + data.value("first_invalid_utf8", ""),
                          data.at("skipped_bad").get<std::int64_t>());
  result["report"] = report;
  return result;
}

TaskRegistration classify_registration() {
  TaskRegistration t;
  t.name = "classify";
  t.summary = "text classification (SST, MTL-16, TSV, JSON lines); accuracy, dev-selected";
  t.input = TaskInput::TokenIds;
  t.options = {{"format", "", "sst | sst-stsa | mtl | tsv | jsonl (mtl: dev = the last 200 training lines)", {}}};
  for (const models::Option& o : text_task_options()) t.options.push_back(o);
  t.options.push_back({"dev_split", 0, "dev = the last N training examples (0: use --dev)", {}});
  t.options.push_back({"tokenize", "whitespace", "tokens are whitespace-separated words | char (Unicode characters, e.g. Chinese text)",
                       {"whitespace", "char"}});
  t.options.push_back({"label_field", "label", "label key (jsonl) / header column (tsv)", {}});
  t.options.push_back({"text_field", "text", "text key (jsonl) / header column (tsv; ChnSentiCorp's header says text_a)", {}});
  t.options.push_back({"subtrees", false, "sst: train on every labelled subtree", {}});
  t.options.push_back({"unique_subtrees", false,
                       "sst, with subtrees: each distinct phrase once, with its most frequent label (not once per "
                       "tree it occurs in)",
                       {}});
  t.options.push_back(vectors_vocabulary_option("train"));
  t.options.push_back({"binary", false, "sst: SST-2 (drop neutral, merge the polarities)", {}});
  t.validate = validate;
  t.make = [](const TaskSettings& s) -> std::unique_ptr<Task> {
    return std::make_unique<TextClassification>(options_of(s));
  };
  t.evaluate_file = evaluate_classifier_file;
  return t;
}

}  // namespace topo::apps
