// One text reader (TOPO_FUZZ_FORMAT: sst, sst-stsa, mtl, tsv, jsonl) on arbitrary bytes, with reading
// options from the input's last byte. Every malformed line must be a topo::Error naming path:line (or,
// with skip_bad, a counted skip); whatever is produced must satisfy the reader's contract.
#include <cstdlib>

#include "apps/text/dataset.hpp"
#include "fuzz/fuzz_support.hpp"
#include "kernels/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace topo;
  const fuzz::OptionBits bits = fuzz::option_bits(data, size);
  text::ReadOptions o;
  o.lowercase = bits.lowercase;
  o.skip_bad = bits.skip_bad;
  o.sst_subtrees = bits.subtrees;
  o.sst_binary = bits.binary;
  o.encoding = bits.latin1 ? text::TextEncoding::Latin1 : text::TextEncoding::Utf8;
  o.max_length = bits.max_length;
  const std::string& path = fuzz::memory_file(fuzz::as_text(data, size));
  try {
    const text::Dataset d = text::read_dataset(TOPO_FUZZ_FORMAT, path, o);
    for (const text::Example& e : d.examples) {
      // The contract: labelled, non-empty, truncated to max_length, a line inside the file.
      if (e.label.empty() || e.tokens.empty() || e.line < 1 || e.line > static_cast<std::int64_t>(size) + 1 ||
          (o.max_length > 0 && static_cast<std::int64_t>(e.tokens.size()) > o.max_length))
        std::abort();
      for (const std::string& t : e.tokens)
        if (t.empty()) std::abort();
    }
    if (d.stats.examples != static_cast<std::int64_t>(d.examples.size())) std::abort();
  } catch (const Error&) {
  }
  return 0;
}
