// Random kernels on CUDA, grid-stride loops. Uniform and normal draws: one thread per Philox block (four
// consecutive counters); block j of a launch covers global counters 4*(first + j) .. +3, of which those inside
// [offset, offset + n) are written. Dropout: one thread per 32-element mask word, then one per element to apply
// it. Math from random_math.hpp, so values match the CPU bit for bit (normals to a few ulp).
#include "kernels/cuda_utils.cuh"
#include "kernels/dense/random_math.hpp"

namespace topo::cuda {
namespace {

enum class Draw : int { Uniform, Normal };

template <Draw kind>
__global__ void random_kernel(float* y, std::int64_t n, std::uint64_t offset, std::uint64_t first,
                              std::int64_t blocks, float a, float b, std::uint64_t seed) {
  for (std::int64_t j = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; j < blocks;
       j += std::int64_t{gridDim.x} * blockDim.x) {
    const std::uint64_t block = first + static_cast<std::uint64_t>(j);
    const Philox4 r =
        philox4x32_10(block, kind == Draw::Normal ? kStreamNormal : kStreamUniform, seed);
    for (unsigned l = 0; l < 4; ++l) {
      const std::uint64_t g = block * 4 + l;
      const std::uint64_t local = g - offset;  // wraps to a huge value below offset
      if (local >= static_cast<std::uint64_t>(n)) continue;
      const std::int64_t i = static_cast<std::int64_t>(local);
      if constexpr (kind == Draw::Uniform) {
        y[i] = uniform_affine(bits_to_unit(r.v[l]), a, b);
      } else {
        y[i] = normal_affine(normal_from_block(r, l), a, b);
      }
    }
  }
}

template <Draw kind>
void launch(float* y, std::int64_t n, std::uint64_t offset, float a, float b, std::uint64_t seed,
            const char* what) {
  if (n == 0) return;
  const std::uint64_t first = offset >> 2, last = (offset + static_cast<std::uint64_t>(n) - 1) >> 2;
  const std::int64_t blocks = static_cast<std::int64_t>(last - first + 1);
  random_kernel<kind><<<blocks_for(blocks, 256), 256>>>(y, n, offset, first, blocks, a, b, seed);
  check_launch(what);
}

// One thread per mask word: its 32 elements' draws, one Philox block per four counters (a word whose counters
// start inside a block takes that block's tail and the next's head).
__global__ void dropout_mask_kernel(std::uint32_t* words, std::int64_t n, std::int64_t num_words, float p,
                                    std::uint64_t seed, std::uint64_t offset) {
  for (std::int64_t w = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; w < num_words;
       w += std::int64_t{gridDim.x} * blockDim.x) {
    std::uint32_t bits = 0;
    const std::int64_t end = n - w * 32 < 32 ? n - w * 32 : 32;
    Philox4 r{};
    for (std::int64_t k = 0; k < end; ++k) {
      const std::uint64_t g = offset + static_cast<std::uint64_t>(w * 32 + k);
      if (k == 0 || (g & 3) == 0) r = philox4x32_10(g >> 2, kStreamUniform, seed);
      if (bits_to_unit(r.v[g & 3]) >= p) bits |= 1u << k;
    }
    words[w] = bits;
  }
}

__global__ void dropout_apply_mask_kernel(const float* x, float* y, std::int64_t n, const std::uint32_t* words,
                                          std::int64_t first, float scale) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    y[i] = dropout_keep(x[i], mask_bit(words, first + i), scale);
}

}  // namespace

void dropout_mask(std::uint32_t* words, std::int64_t n, float p, std::uint64_t seed, std::uint64_t offset) {
  const std::int64_t num_words = dropout_mask_words(n);
  if (num_words == 0) return;
  dropout_mask_kernel<<<blocks_for(num_words, 256), 256>>>(words, n, num_words, p, seed, offset);
  check_launch("dropout_mask");
}

void dropout_apply_mask(const float* x, float* y, std::int64_t n, const std::uint32_t* words, std::int64_t first,
                        float scale) {
  if (n == 0) return;
  dropout_apply_mask_kernel<<<blocks_for(n, 256), 256>>>(x, y, n, words, first, scale);
  check_launch("dropout_apply_mask");
}

void random_uniform(float* y, std::int64_t n, float lo, float hi, std::uint64_t seed) {
  launch<Draw::Uniform>(y, n, 0, lo, hi, seed, "random_uniform");
}

void random_normal(float* y, std::int64_t n, float mean, float stddev, std::uint64_t seed) {
  launch<Draw::Normal>(y, n, 0, mean, stddev, seed, "random_normal");
}

}  // namespace topo::cuda
