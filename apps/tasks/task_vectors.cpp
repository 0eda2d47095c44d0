#include "apps/tasks/task_vectors.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "kernels/error.hpp"

namespace topo::apps {

TaskVectors load_task_vectors(const std::string& path, const text::WordVectorOptions& options,
                              const text::Vocabulary& vocab, const std::vector<std::vector<std::int64_t>>& train_ids) {
  return task_vectors(text::load_word_vectors(path, vocab, options), path, options, vocab, train_ids);
}

TaskVectors task_vectors(const text::WordVectors& v, const std::string& path, const text::WordVectorOptions& options,
                         const text::Vocabulary& vocab, const std::vector<std::vector<std::int64_t>>& train_ids) {
  const bool folded = options.lowercase_fallback || v.uncased;
  TOPO_CHECK(v.found > 0, "word vectors '{}' cover none of the {} vocabulary tokens{}", path, vocab.size(),
             folded ? "" : " (try the lowercase look-up, --vectors-lowercase)");
  TaskVectors out;
  out.table = Tensor::from_vector(v.values, {vocab.size(), v.dim});
  out.rows = v.covered;
  out.dim = v.dim;
  const text::VectorCoverage coverage = text::vector_coverage(v, train_ids);
  out.report = {{"file", path},
                {"dim", v.dim},
                {"vectors", v.vectors},
                {"lowercase_fallback", folded},
                {"uncased", v.uncased},
                {"found_lowercase", v.found_lowercase},
                {"duplicates", v.duplicates},
                {"bad_lines", v.bad_lines},
                {"bad_line_examples", v.bad_examples},
                {"load_seconds", v.seconds},
                {"train_coverage", coverage.to_json()}};
  return out;
}

ExtendedVocabulary extended_by_vectors(const text::Vocabulary& vocab, const std::vector<std::string>& candidates,
                                       const std::string& path, const text::WordVectorOptions& options) {
  const text::Vocabulary all = vocab.extended(candidates);
  text::WordVectors found = text::load_word_vectors(path, all, options);
  std::vector<std::string> covered;
  for (std::int64_t id = vocab.size(); id < all.size(); ++id)
    if (found.covered[static_cast<std::size_t>(id)]) covered.push_back(all.token(id));
  ExtendedVocabulary out{vocab.extended(covered), static_cast<std::int64_t>(covered.size()), {}};
  out.vectors = text::vectors_for(std::move(found), all, out.vocab);
  return out;
}

ExtendedVocabulary vocabulary_with_vectors(const text::Vocabulary& vocab, std::vector<std::string> candidates,
                                           const std::string& which, const std::string& path,
                                           const text::WordVectorOptions& options) {
  TOPO_CHECK(which == "data" || which == "all", "vectors_vocabulary '{}': expected data or all here", which);
  if (which == "all") {
    text::WordVectorOptions listing = options;
    listing.list_words = true;
    std::vector<std::string> words = text::load_word_vectors(path, vocab, listing).words;
    candidates.insert(candidates.end(), std::make_move_iterator(words.begin()), std::make_move_iterator(words.end()));
  }
  return extended_by_vectors(vocab, candidates, path, options);
}

std::int64_t trained_rows_of(std::int64_t vocab_size,
                             const std::vector<const std::vector<std::vector<std::int64_t>>*>& training_sentences) {
  std::int64_t largest = text::Vocabulary::kUnk;
  for (const auto* sentences : training_sentences)
    for (const auto& sentence : *sentences)
      for (const std::int64_t id : sentence) largest = std::max(largest, id);
  return largest + 1 < vocab_size ? largest + 1 : 0;
}

}  // namespace topo::apps
