#pragma once
// Shared by the libFuzzer targets. The readers take paths, so each input is written to one in-memory file
// (memfd), rewritten per run and named by /proc/self/fd/N: no disk traffic, no temp files left behind.
// A target catches topo::Error (the clean rejection every bad input must get); anything else escaping —
// another exception type, a crash, a sanitizer report, a leak, a hang — is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace topo::fuzz {

// Path of an in-memory file holding exactly `bytes`; `slot` picks one of a few files (0..3), for targets
// that need two inputs at once.
const std::string& memory_file(std::string_view bytes, int slot = 0);

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Reader options from the input's last byte (real data seeds end in '\n': the defaults), so mutations
// explore the options together with the bytes they act on.
struct OptionBits {
  bool lowercase, skip_bad, subtrees, binary, latin1;
  std::int64_t max_length;  // 0..3 (0: no truncation)
};
inline OptionBits option_bits(const std::uint8_t* data, std::size_t size) {
  const unsigned b = size > 0 ? static_cast<unsigned>(data[size - 1]) ^ 0x0Au : 0u;  // '\n' -> all off
  return {(b & 1) != 0, (b & 2) != 0, (b & 4) != 0, (b & 8) != 0, (b & 16) != 0, (b >> 5) & 3};
}

}  // namespace topo::fuzz
