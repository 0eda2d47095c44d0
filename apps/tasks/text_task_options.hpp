#pragma once
// The options the text tasks (classify, tag) share: their files, decoding, vocabulary, truncation and word
// vectors; each task adds its own (classify's formats and fields, tag's scheme and CRF) in its registration.
#include <vector>

#include "apps/tasks/registry.hpp"
#include "apps/text/word_vectors.hpp"
#include "models/option.hpp"

namespace topo::apps {

// train, dev, test, encoding, lowercase, skip_bad, min_freq, max_len, vectors, freeze_vectors,
// vectors_lowercase, vectors_bad_lines.
std::vector<models::Option> text_task_options();
// vectors_vocabulary (train | data | all; task_vectors.hpp's vocabulary_with_vectors) with the task's default:
// classify "train", tag "data" (the tagger has always taken its files' words the vectors cover).
models::Option vectors_vocabulary_option(const char* default_value);
// Their checks against each other (a named field and value in the error).
void validate_text_task(const TaskSettings& settings);
// --vectors-lowercase and --vectors-bad-lines as the loader takes them.
text::WordVectorOptions vector_options(const TaskSettings& settings);
// eval_batch, else 128 sentences (the papers' "ms per test batch of 128").
std::int64_t text_eval_batch(const TaskSettings& settings);

}  // namespace topo::apps
