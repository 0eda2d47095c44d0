// Suite `lexicon`: BiG-Transformer's word matching (models/big_transformer/lexicon.hpp), a host-side step of
// every batch: the spans of a 128-character sentence against jieba's 349k-word dictionary. Target:
// microseconds per sentence (a batch of 128 such sentences stays well under a millisecond-scale step).
// The sentence is real text: the first 128 characters of ChnSentiCorp's dev reviews, concatenated.
// Data from TOPO_DATA (default ../shared/data); the suite says so and records nothing when it is missing.
#include <chrono>
#include <cstdlib>

#include "bench/harness.hpp"
#include "bench/review_text.hpp"
#include "models/big_transformer/lexicon.hpp"

namespace {

using namespace topo;

// The first `n` characters of the reviews of `path`, concatenated.
std::u32string first_characters(const std::string& path, std::size_t n) {
  std::string text;
  std::size_t count = 0;
  for (const std::vector<std::string>& review : bench::review_characters(path))
    for (const std::string& c : review)
      if (count++ < n) text += c;
  const std::vector<char32_t> cps = models::utf8_code_points(text, path);
  return std::u32string(cps.begin(), cps.end());
}

}  // namespace

TOPO_BENCH_SUITE(lexicon, "lexicon matching: every word of jieba's dictionary in a 128-character sentence") {
  const std::vector<std::string> paths = bench::data_files("lexicon", {"zh_lexicon/dict.txt", "chnsenticorp/dev.tsv"});
  if (paths.empty()) return;
  const std::string &dict = paths[0], &text = paths[1];
  const auto t0 = std::chrono::steady_clock::now();
  const models::Lexicon lexicon = models::Lexicon::load(dict);
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::u32string sentence = first_characters(text, 128);
  const std::int64_t spans = static_cast<std::int64_t>(lexicon.match(sentence).spans.size());
  const nlohmann::json shape = {{"characters", sentence.size()}, {"words_in_lexicon", lexicon.size()},
                                {"trie_nodes", lexicon.num_nodes()}, {"spans_found", spans},
                                {"load_seconds", load_s}};
  const bench::Result r = bench.run("match 128 characters against jieba dict.txt", {}, [&] {
    const models::LexiconMatch m = lexicon.match(sentence);
    if (m.spans.empty()) std::abort();  // keeps the call from being optimised away
  }, shape);
  bench.annotate("microseconds_per_sentence", 1e3 * r.stats.median_ms);
}
