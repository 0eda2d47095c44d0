// BiG's word list (`--lexicon`, jieba's dict.txt layout) on arbitrary bytes, then lexicon matching over the input's
// own text: a bad file must be a topo::Error naming path:line, and every span matched must lie inside the
// sentence, be a word of the list, and come in order under the cap. Options (one-character words, a cap of 0-3
// spans) from the input's last byte, as the text readers take theirs.
#include <cstdlib>

#include "fuzz/fuzz_support.hpp"
#include "kernels/error.hpp"
#include "models/big_transformer/lexicon.hpp"

namespace {

void check_match(const topo::models::Lexicon& lexicon, const std::u32string& sentence,
                 const topo::models::LexiconMatchOptions& options) {
  const topo::models::LexiconMatch m = lexicon.match(sentence, options);
  const auto n = static_cast<std::int64_t>(sentence.size());
  if (options.max_words > 0 && static_cast<std::int64_t>(m.spans.size()) > options.max_words) std::abort();
  if (m.dropped < 0 || (m.dropped > 0 && options.max_words == 0)) std::abort();
  for (std::size_t i = 0; i < m.spans.size(); ++i) {
    const auto& s = m.spans[i];
    if (s.start < 0 || s.end >= n || s.start > s.end || (s.start == s.end && !options.single_units)) std::abort();
    if (i > 0 && (m.spans[i - 1].start > s.start || (m.spans[i - 1].start == s.start && m.spans[i - 1].end >= s.end)))
      std::abort();
    const auto length = static_cast<std::size_t>(s.end - s.start + 1);
    if (!lexicon.contains(sentence.substr(static_cast<std::size_t>(s.start), length))) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace topo;
  const fuzz::OptionBits bits = fuzz::option_bits(data, size);
  const models::LexiconMatchOptions options{.single_units = bits.lowercase, .max_words = bits.max_length};
  try {
    const models::Lexicon lexicon = models::Lexicon::load(fuzz::memory_file(fuzz::as_text(data, size)));
    if (lexicon.size() < 1 || lexicon.num_nodes() < 2) std::abort();  // a loaded list holds a word
    // Sentences: the input's text with its line breaks and spaces removed, so the words run together as in
    // Chinese text, when it is valid UTF-8; and the same decoded by hand one byte a code point.
    std::string joined;
    for (std::size_t i = 0; i < size; ++i)
      if (data[i] != '\n' && data[i] != ' ' && data[i] != '\r') joined.push_back(static_cast<char>(data[i]));
    try {
      const std::vector<char32_t> cps = models::utf8_code_points(joined);
      check_match(lexicon, std::u32string(cps.begin(), cps.end()), options);
    } catch (const Error&) {
    }
    check_match(lexicon, std::u32string(joined.begin(), joined.end()), options);
  } catch (const Error&) {
  }
  return 0;
}
