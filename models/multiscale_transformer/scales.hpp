#pragma once
// Scales of the Multi-Scale Transformer (Guo et al., AAAI 2020; ../shared/docs/models.md §2) and the α rule
// that distributes a layer's heads over them.
//
// A scale is an odd window width: a constant ("3") or a fraction of the sentence length ("N/8": ceil(N/8)
// rounded up to odd, at least 1, computed per sentence with N its token count).
//
// Head counts (our reading of Eq. 11-12): for layer l = 1..L and scale index k = 0..K-1 (smallest first),
// z_k = α·(L−l)·(K−1−k), n^l = softmax(z)·heads, rounded by largest remainder (ties to the smaller scale) so
// every layer's counts sum to `heads`. α = 0 is uniform everywhere; α > 0 favours small scales in shallow
// layers; the top layer is always uniform. For the paper's worked example (α = 0.5, 10 heads, 3 layers,
// 5 scales) this gives {7,2,1,0,0}, {4,3,1,1,1}, {2,2,2,2,2}; the paper prints {5,2,2,1,0}, {4,2,2,1,1},
// {2,2,2,2,2}, which no single softmax temperature reproduces (its first row).
#include <cstdint>
#include <string>
#include <vector>

namespace topo::models {

struct Scale {
  std::int64_t width = 1;    // constant odd width (when divisor == 0)
  std::int64_t divisor = 0;  // > 0: width = ceil(N / divisor) rounded up to odd
  bool fractional() const { return divisor > 0; }
  std::string str() const;   // "3" or "N/8"
  // The width for a sentence of n tokens.
  std::int64_t width_for(std::int64_t n) const;
};

// "1,3,N/16,N/8,N/4" -> scales in that order; throws naming a bad entry (even or non-positive widths,
// divisors <= 0, duplicates).
std::vector<Scale> parse_scales(const std::string& spec);
std::string scales_str(const std::vector<Scale>& scales);

// [layers][scales.size()] head counts per the α rule above; each row sums to `heads`.
std::vector<std::vector<std::int64_t>> head_distribution(double alpha, std::int64_t layers, std::int64_t num_scales,
                                                         std::int64_t heads);

}  // namespace topo::models
