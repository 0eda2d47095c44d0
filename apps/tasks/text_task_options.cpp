#include "apps/tasks/text_task_options.hpp"

namespace topo::apps {

std::vector<models::Option> text_task_options() {
  return {
      {"train", "", "training file", {}},
      {"dev", "", "development file (the checkpoint is selected on it)", {}},
      {"test", "", "test file (optional)", {}},
      {"encoding", "utf8", "text encoding: utf8 (invalid bytes replaced, counted) | latin1", {"utf8", "latin1"}},
      {"lowercase", false, "lowercase tokens", {}},
      {"skip_bad", false, "skip malformed lines (counted) instead of failing", {}},
      {"min_freq", 1, "vocabulary: tokens seen fewer times in training are unknown", {}},
      {"max_len", 256, "longest sentence (piece) the model sees, in tokens; longer ones are cut", {}},
      {"vectors", "",
       "word vectors (GloVe / word2vec text, plain or .gz) for the embedding; another width than --hidden is projected",
       {}},
      {"freeze_vectors", false, "keep the loaded word vectors fixed", {}},
      {"vectors_lowercase", false,
       "a token absent from the vectors takes its lowercased form's vector (always, for uncased vectors such as "
       "GloVe 6B)",
       {}},
      {"vectors_bad_lines", "skip", "malformed vector lines: skip (reported with path:line) | reject (stop there)",
       {"skip", "reject"}},
  };
}

models::Option vectors_vocabulary_option(const char* default_value) {
  return {"vectors_vocabulary", default_value,
          "with --vectors, the tokens that join the vocabulary beside those seen min_freq times in training: train "
          "(none) | data (every token of the train, dev and test files the vectors cover) | all (those and every "
          "other word of the vector file: a held-back file scored later reads its words' vectors too)",
          {"train", "data", "all"}};
}

void validate_text_task(const TaskSettings& s) {
  if (s.option<std::int64_t>("min_freq") < 1)
    models::fail_invalid_field("min_freq", s.option<std::int64_t>("min_freq"), "must be >= 1");
  // The position table has max_len rows: 10^8 spent minutes allocating before the first step, 2^63 - 1 crashed.
  constexpr std::int64_t kMaxLength = std::int64_t{1} << 20;
  if (s.option<std::int64_t>("max_len") < 1 || s.option<std::int64_t>("max_len") > kMaxLength)
    models::fail_invalid_field("max_len", s.option<std::int64_t>("max_len"),
                               fmt::format("must be in [1, {}]", kMaxLength));
  const bool vectors = !s.option<std::string>("vectors").empty();
  if (s.option<bool>("freeze_vectors") && !vectors) models::fail_invalid_field("freeze_vectors", true, "needs --vectors");
  if (s.option<bool>("vectors_lowercase") && !vectors)
    models::fail_invalid_field("vectors_lowercase", true, "needs --vectors");
}

text::WordVectorOptions vector_options(const TaskSettings& s) {
  return {s.option<bool>("vectors_lowercase"), text::parse_bad_vector_lines(s.option<std::string>("vectors_bad_lines"))};
}

std::int64_t text_eval_batch(const TaskSettings& s) { return s.eval_batch > 0 ? s.eval_batch : 128; }

}  // namespace topo::apps
