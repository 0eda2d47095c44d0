#pragma once
// splitmix64 (Steele, Lea & Flood 2014): a well-mixed 64-bit stream from a counter. Ours rather than
// <random>'s distributions, whose outputs are implementation-defined: generated data and shuffles must be
// the same with every standard library.
#include <cstdint>
#include <initializer_list>

namespace topo::apps {

inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class SplitMix64 {
 public:
  // A stream keyed by several words (seed, split, index, ...): distinct keys give unrelated streams.
  SplitMix64(std::initializer_list<std::uint64_t> key) {
    std::uint64_t s = 0x6a09e667f3bcc909ULL;
    for (std::uint64_t word : key) s = mix64(s ^ mix64(word + 0x9e3779b97f4a7c15ULL));
    state_ = s;
  }
  std::uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return mix64(state_);
  }
  // U[0, 1) with 24 random bits: exactly representable in float32, never 1.
  float uniform() { return static_cast<float>(next() >> 40) * (1.f / 16777216.f); }
  // Uniform integer in [0, bound), bound < 2^32 (Lemire's multiply-shift; bias below 2^-32 * bound).
  std::int64_t below(std::int64_t bound) {
    return static_cast<std::int64_t>(((next() >> 32) * static_cast<std::uint64_t>(bound)) >> 32);
  }

 private:
  std::uint64_t state_ = 0;
};

}  // namespace topo::apps
