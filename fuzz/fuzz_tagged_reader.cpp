// One sequence-labelling reader (TOPO_FUZZ_FORMAT: conll, conllu, weibo, bmes) on arbitrary bytes, options from
// the input's last byte (skip_bad, Latin-1, XPOS). Every malformed line must be a topo::Error naming path:line
// (or, with skip_bad, a counted dropped sentence). What is read must satisfy the reader's contract, and the
// tags must survive what the tag task does with them: scheme detection, conversion to IOB2 and scoring, where
// gold against itself finds every chunk.
#include <cstdlib>

#include "apps/text/tag_schemes.hpp"
#include "apps/text/tag_scores.hpp"
#include "apps/text/tagged.hpp"
#include "fuzz/fuzz_support.hpp"
#include "kernels/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace topo;
  const fuzz::OptionBits bits = fuzz::option_bits(data, size);
  text::TagReadOptions o;
  o.skip_bad = bits.skip_bad;
  o.encoding = bits.latin1 ? text::TextEncoding::Latin1 : text::TextEncoding::Utf8;
  o.xpos = bits.subtrees;
  const std::string& path = fuzz::memory_file(fuzz::as_text(data, size));
  try {
    const text::TaggedDataset d = text::read_tagged(text::parse_tag_format(TOPO_FUZZ_FORMAT), path, o);
    std::vector<std::vector<std::string>> tags;
    for (const text::TaggedSentence& s : d.sentences) {
      // The contract: non-empty, one tag and one source line per token, a line inside the file.
      if (s.tokens.empty() || s.tags.size() != s.tokens.size() || s.source.size() != s.tokens.size() ||
          s.line < 1 || s.line > static_cast<std::int64_t>(size) + 1)
        std::abort();
      for (std::size_t i = 0; i < s.tokens.size(); ++i)
        if (s.tokens[i].empty() || s.tags[i].empty()) std::abort();
      tags.push_back(s.tags);
    }
    if (d.stats.read.examples != static_cast<std::int64_t>(d.sentences.size())) std::abort();
    const text::TagScheme scheme = text::detect_tag_scheme(tags);
    text::TagScorer scorer(scheme);
    for (const auto& t : tags) {
      if (scheme != text::TagScheme::None) (void)text::convert_tags(t, scheme, text::TagScheme::IOB2);
      scorer.add(t, t);
    }
    const text::ChunkCounts& c = scorer.overall();
    if (c.guessed != c.gold || c.correct > c.gold || scorer.correct_tokens() != scorer.tokens()) std::abort();
  } catch (const Error&) {
  }
  return 0;
}
