#pragma once
// Counter-based random numbers: the value at position i depends only on (seed, offset + i), so CPU and
// CUDA draw identical masks and initialisations, in any order, on any number of threads.
#include "kernels/dense/random_math.hpp"
#include "kernels/tensor.hpp"

namespace topo {

// y = x * mask / (1 - p), mask_i = (uniform(seed, offset + i) >= p). p in [0, 1); p = 0 returns x. The output of
// dropout_with_mask (its bits dropped): nn::dropout keeps them for the backward.
Tensor dropout(const Tensor& x, float p, std::uint64_t seed, std::uint64_t offset = 0);
// dropout's mask of n elements as bits (int32 words [ceil(n / 32)]; bit i & 31 of word i >> 5 set where element i
// is kept, uniform(seed, offset + i) >= p), drawn once so that the backward and a lazy input's slabs apply it
// rather than draw the stream again: one bit an element against the element's 32, and no Philox rounds.
Tensor dropout_mask(std::int64_t n, float p, std::uint64_t seed, std::uint64_t offset = 0,
                    Device device = Device::cpu());
// dropout(x, p, seed, offset) and its dropout_mask in one pass (each draw both applied and recorded).
struct MaskedDropout {
  Tensor y, mask;
};
MaskedDropout dropout_with_mask(const Tensor& x, float p, std::uint64_t seed, std::uint64_t offset = 0);
// x times the mask / (1 - p), x's element i taking bit first + i: with a mask drawn for (p, seed, offset), bit for
// bit dropout(x, p, seed, offset) of x whole (first = 0), or of a run of its elements (a slab of rows: first =
// the slab's first element). The backward is the same map on the gradient.
Tensor dropout_apply_mask(const Tensor& x, const Tensor& mask, float p, std::int64_t first = 0);

// Philox blocks of the stream `stream` of `seed` at the first `count` (<= kPhiloxBatch) of the given block
// indices (element g of a stream is lane g & 3 of block g >> 2), as struct of arrays: each of the ten rounds is
// one loop over the batch, which vectorizes (vpmuludq lanes); called block by block, philox4x32_10 moves each
// block's words through memory. For CPU kernels that draw masks of scattered elements (GAT's attention dropout
// per edge id; a short row draws only the blocks it needs) and for dropout's runs.
inline constexpr int kPhiloxBatch = 16;
void philox_batch(const std::uint64_t (&blocks)[kPhiloxBatch], std::uint32_t stream, std::uint64_t seed,
                  Philox4 (&out)[kPhiloxBatch], int count = kPhiloxBatch);

// Fresh tensors for initialisation.
Tensor random_uniform(const Shape& shape, float lo, float hi, std::uint64_t seed, Device device = Device::cpu());
Tensor random_normal(const Shape& shape, float mean, float stddev, std::uint64_t seed, Device device = Device::cpu());

}  // namespace topo
