// SNLI / MultiNLI JSON lines (Bowman et al. 2015): one sentence pair per line with its gold label.
#include <nlohmann/json.hpp>

#include "apps/text/dataset.hpp"
#include "apps/text/line_reader.hpp"

namespace topo::text {

namespace {

// The leaves of a binary parse "( ( A boy ) ( is ( climbing ( a tree ) ) ) )": the tokens between brackets.
std::vector<std::string> parse_leaves(std::string_view parse, bool lowercase) {
  std::vector<std::string> tokens = tokenize(parse, lowercase);
  std::erase_if(tokens, [](const std::string& t) { return t == "(" || t == ")"; });
  return tokens;
}

// sentence1 / sentence2 of a pair as tokens: the binary parse's leaves when asked for and present.
std::vector<std::string> sentence_tokens(const nlohmann::json& j, int which, const ReadOptions& opts) {
  const std::string key = fmt::format("sentence{}", which);
  const std::string parse_key = key + "_binary_parse";
  if (opts.parse_tokens) {
    const auto parse = j.find(parse_key);
    // A parse of another type is a corrupt line, not an absent parse: falling back to the text mixed the two
    // tokenizations with nothing said (`"sentence1_binary_parse": 5` trained on the sentence's words).
    if (parse != j.end() && !parse->is_string() && !parse->is_null())
      detail::bad_line("'{}' must be a string, got {}", parse_key, parse->type_name());
    if (parse != j.end() && parse->is_string()) {
      std::vector<std::string> tokens = parse_leaves(parse->get_ref<const std::string&>(), opts.lowercase);
      if (!tokens.empty()) return tokens;
    }
  }
  const auto text = j.find(key);
  if (text == j.end()) detail::bad_line("no '{}' field", key);
  if (!text->is_string()) detail::bad_line("'{}' must be a string, got {}", key, text->type_name());
  std::vector<std::string> tokens = tokenize(text->get_ref<const std::string&>(), opts.tokenize, opts.lowercase);
  if (tokens.empty()) detail::bad_line("'{}' has no tokens", key);
  return tokens;
}

}  // namespace

Dataset read_snli(const std::string& path, const ReadOptions& opts) {
  Dataset d = detail::start_dataset(path, opts);
  detail::for_each_line(d, opts, [&](std::int64_t line, const std::string& text) {
    const nlohmann::json j = detail::json_object_line(text);
    const auto label = j.find("gold_label");
    if (label == j.end()) detail::bad_line("no 'gold_label' field");
    if (!label->is_string()) detail::bad_line("'gold_label' must be a string, got {}", label->dump());
    const std::string& gold = label->get_ref<const std::string&>();
    if (gold == "-") {  // no annotator majority: left out of training and scoring, as is standard
      ++d.stats.unlabelled;
      return;
    }
    if (gold != "entailment" && gold != "neutral" && gold != "contradiction")
      detail::bad_line("gold_label '{}' is not entailment, neutral, contradiction or -", gold);
    detail::add_pair(d, sentence_tokens(j, 1, opts), sentence_tokens(j, 2, opts), gold, line, opts);
  });
  return d;
}

}  // namespace topo::text
