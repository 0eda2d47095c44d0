#pragma once
// Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11), shared by the CPU and CUDA backends.
//
// Stream layout: element g of a stream with key `seed` comes from the Philox block with counter
// (g >> 2, stream tag) — lane g & 3 of its four 32-bit outputs. Every value is a pure function of
// (seed, g), so any split of the work (threads, CUDA blocks, halves with offsets) draws the same numbers.
// Uniform and normal draws use different stream tags so the same seed gives uncorrelated tensors.
//
// Bit-identity between host and device: the generator is integer-only, the uniform float is an exact
// 24-bit fraction, and the affine maps use fmaf explicitly (no contraction differences). Normal draws go
// through logf/sinf/cosf, whose last bits may differ between libm and CUDA: equal to within a few ulp.
#include <cmath>
#include <cstdint>

#include "kernels/hd.hpp"

namespace topo {

struct Philox4 {
  std::uint32_t v[4];
};

inline constexpr std::uint32_t kStreamUniform = 0;
inline constexpr std::uint32_t kStreamNormal = 1;

TOPO_HD void philox_mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi, std::uint32_t& lo) {
  const std::uint64_t p = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(p >> 32);
  lo = static_cast<std::uint32_t>(p);
}

inline constexpr std::uint32_t kPhiloxBump0 = 0x9E3779B9u, kPhiloxBump1 = 0xBB67AE85u;

// One Philox round on a block's counter words under the round's key (k0, k1).
TOPO_HD void philox_round(std::uint32_t& c0, std::uint32_t& c1, std::uint32_t& c2, std::uint32_t& c3, std::uint32_t k0,
                          std::uint32_t k1) {
  std::uint32_t hi0, lo0, hi1, lo1;
  philox_mulhilo(0xD2511F53u, c0, hi0, lo0);
  philox_mulhilo(0xCD9E8D57u, c2, hi1, lo1);
  const std::uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
  c1 = lo1;
  c3 = lo0;
  c0 = n0;
  c2 = n2;
}

// Philox4x32 with 10 rounds on the full counter (c0..c3) and key (k0, k1) -> four independent 32-bit words.
// (The CPU's bulk draws run the same rounds on many blocks at once: random.cpp's philox_blocks.)
TOPO_HD Philox4 philox4x32_10_raw(Philox4 ctr, std::uint32_t k0, std::uint32_t k1) {
  std::uint32_t c0 = ctr.v[0], c1 = ctr.v[1], c2 = ctr.v[2], c3 = ctr.v[3];
  for (int round = 0; round < 10; ++round) {
    philox_round(c0, c1, c2, c3, k0, k1);
    k0 += kPhiloxBump0;
    k1 += kPhiloxBump1;
  }
  return Philox4{{c0, c1, c2, c3}};
}

// Our streams: counter words (block index low, high, stream tag, 0), key = the 64-bit seed.
TOPO_HD Philox4 philox4x32_10(std::uint64_t block, std::uint32_t stream, std::uint64_t seed) {
  return philox4x32_10_raw(
      Philox4{{static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32), stream, 0u}},
      static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

// Top 24 bits as an exact float in [0, 1).
TOPO_HD float bits_to_unit(std::uint32_t bits) { return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f); }
// Top 24 bits as an exact float in (0, 1]: safe under logf.
TOPO_HD float bits_to_unit_open0(std::uint32_t bits) {
  return static_cast<float>((bits >> 8) + 1u) * (1.0f / 16777216.0f);
}

// Element g of the uniform stream; kernels that walk a range call philox4x32_10 once per four elements.
TOPO_HD float uniform_at(std::uint64_t seed, std::uint64_t g) {
  return bits_to_unit(philox4x32_10(g >> 2, kStreamUniform, seed).v[g & 3]);
}

// Dropout of one element given its uniform draw: keep iff u >= p, kept values scaled by 1/(1-p)
// (`scale`, computed once on the host so both backends multiply by the same float).
// x times a mask of 0 or scale, as PyTorch's dropout (a dropped NaN stays NaN, a dropped negative is -0). A
// select of x * scale or 0 kept GCC's CPU loop scalar (under -ftrapping-math it will not hoist the product out
// of the branch), a branch mispredicted on half the elements.
TOPO_HD float dropout_keep(float x, bool keep, float scale) { return x * (keep ? scale : 0.f); }
TOPO_HD float dropout_apply(float x, float u, float p, float scale) { return dropout_keep(x, u >= p, scale); }

// Dropout's mask kept as bits, one an element, in 32-bit words: bit i & 31 of word i >> 5 is set where element i
// is kept. The backward and a lazy input's slabs read it instead of drawing the Philox stream again.
TOPO_HD std::int64_t dropout_mask_words(std::int64_t n) { return (n + 31) / 32; }
TOPO_HD bool mask_bit(const std::uint32_t* words, std::int64_t i) { return (words[i >> 5] >> (i & 31)) & 1u; }

TOPO_HD float uniform_affine(float u, float lo, float hi) { return fmaf(hi - lo, u, lo); }
TOPO_HD float normal_affine(float z, float mean, float stddev) { return fmaf(stddev, z, mean); }

// Box-Muller on lanes (0,1) and (2,3) of one block: lane 0/2 take the cosine, lane 1/3 the sine branch,
// so each block yields four standard normals from two pairs of uniforms.
TOPO_HD float normal_from_block(const Philox4& r, unsigned lane) {
  const unsigned pair = lane >> 1;
  const float u1 = bits_to_unit_open0(r.v[2 * pair]);  // (0, 1]: log finite
  const float u2 = bits_to_unit(r.v[2 * pair + 1]);
  const float radius = sqrtf(-2.f * logf(u1));
  const float angle = 6.2831853071795865f * u2;
  return radius * ((lane & 1u) ? sinf(angle) : cosf(angle));
}

TOPO_HD float normal_at(std::uint64_t seed, std::uint64_t g) {
  return normal_from_block(philox4x32_10(g >> 2, kStreamNormal, seed), static_cast<unsigned>(g & 3));
}

namespace cuda {
// Device launchers (random_cuda.cu); pointers are device memory, n elements, element i uses counter offset + i:
// words[dropout_mask_words(n)] of the mask of n elements; y[i] = dropout_keep of x[i] with bit first + i.
void dropout_mask(std::uint32_t* words, std::int64_t n, float p, std::uint64_t seed, std::uint64_t offset);
void dropout_apply_mask(const float* x, float* y, std::int64_t n, const std::uint32_t* words, std::int64_t first,
                        float scale);
void random_uniform(float* y, std::int64_t n, float lo, float hi, std::uint64_t seed);
void random_normal(float* y, std::int64_t n, float mean, float stddev, std::uint64_t seed);
}  // namespace cuda

}  // namespace topo
