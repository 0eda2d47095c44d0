// `--task nli`: natural language inference on SNLI / MultiNLI JSON lines. A sentence-pair classification: the
// TextClassification task over pairs (premises and hypotheses encoded in one batch by one encoder, then
// models::PairClassifier's [u; v; |u - v|; u * v] and an MLP), with SNLI's reader and its tokens.
#include "apps/tasks/classify/classify.hpp"
#include "apps/tasks/registry.hpp"
#include "apps/tasks/text_task_options.hpp"

namespace topo::apps {

TaskRegistration nli_registration() {
  TaskRegistration t;
  t.name = "nli";
  t.summary = "natural language inference (SNLI / MultiNLI JSON lines, plain or .gz); 3-way accuracy, dev-selected";
  t.input = TaskInput::TokenIds;
  t.options = text_task_options();
  t.options.push_back({"tokens", "parse",
                       "parse: the leaves of sentence{1,2}_binary_parse (the Stanford tokenizer's words and "
                       "punctuation, as word vectors key them) | text: the sentences split on whitespace",
                       {"parse", "text"}});
  t.validate = [](const TaskSettings& s) {
    if (s.option<std::string>("train").empty()) models::fail_invalid_field("train", "", "nli needs a training file");
    if (s.option<std::string>("dev").empty())
      models::fail_invalid_field("dev", "", "nli needs a dev file (the checkpoint is selected on it)");
    validate_text_task(s);
  };
  t.make = [](const TaskSettings& s) -> std::unique_ptr<Task> {
    ClassifyOptions o = text_classification_options(s);
    o.task = "nli";
    o.format = "snli";
    o.read.parse_tokens = s.option<std::string>("tokens") == "parse";
    return std::make_unique<TextClassification>(o);
  };
  t.evaluate_file = evaluate_classifier_file;
  return t;
}

}  // namespace topo::apps
