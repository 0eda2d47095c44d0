// GloVe / word2vec text vectors on arbitrary bytes, looked up for a small fixed vocabulary (GloVe's most
// frequent words, so the real-file seeds hit it). A bad file must be a topo::Error naming path:line.
#include <cstdlib>

#include "apps/text/word_vectors.hpp"
#include "fuzz/fuzz_support.hpp"
#include "kernels/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace topo;
  static const text::Vocabulary vocab = [] {
    text::Dataset d;
    d.examples.push_back({{"the", ",", ".", "of", "to", "and", "in", "a", "\"", "'s", "for", "-", "that"}, "0", 1});
    return text::Vocabulary::build({&d});
  }();
  try {
    const text::WordVectors v = text::load_word_vectors(fuzz::memory_file(fuzz::as_text(data, size)), vocab);
    if (v.dim <= 0 || v.values.size() != static_cast<std::size_t>(vocab.size() * v.dim) || v.found < 0 ||
        v.found > vocab.size())
      std::abort();
  } catch (const Error&) {
  }
  return 0;
}
