// Dropout and random initialisation. CPU strategy: parallel_for over contiguous element chunks; inside a
// chunk, Philox blocks are generated in small stack batches (16 blocks = 64 draws, no heap) and applied in a
// flat loop. Values depend only on (seed, offset + i), so the thread count never changes the result.
#include "kernels/profile.hpp"
#include "kernels/dense/random.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/dense/random_math.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/parallel.hpp"

namespace topo {
namespace {

constexpr int kBlocksPerBatch = 16;
constexpr int kDrawsPerBatch = 4 * kBlocksPerBatch;

// Walks local elements [begin, end) whose global counters are offset + i. `draw(block, out4)` turns one
// Philox block index into four values; `emit(i, value)` consumes element i's value.
template <class Draw, class Emit>
void walk_stream(std::int64_t begin, std::int64_t end, std::uint64_t offset, Draw&& draw, Emit&& emit) {
  float values[kDrawsPerBatch];
  std::int64_t i = begin;
  while (i < end) {
    const std::uint64_t g0 = offset + static_cast<std::uint64_t>(i);
    const std::uint64_t block0 = g0 >> 2;
    const int skip = static_cast<int>(g0 & 3);
    const std::int64_t count = std::min<std::int64_t>(end - i, kDrawsPerBatch - skip);
    // Always a full batch: a fixed trip count lets the compiler vectorize Philox across blocks.
    for (int j = 0; j < kBlocksPerBatch; ++j) draw(block0 + j, values + 4 * j);
    for (std::int64_t k = 0; k < count; ++k) emit(i + k, values[skip + k]);
    i += count;
  }
}

// Dropout forward and backward are the same map (multiply by the regenerated mask / (1 - p)).
Tensor dropout_impl(const Tensor& x, float p, std::uint64_t seed, std::uint64_t offset, const char* op) {
  TOPO_PROFILE(Elementwise);
  check_dtype(x, DType::F32, op, "input");
  TOPO_CHECK(p >= 0.f && p < 1.f, "{}: probability p = {} is outside [0, 1)", op, p);
  if (p == 0.f) return x;
  const float scale = 1.f / (1.f - p);
  Tensor y = Tensor::empty(x.shape(), DType::F32, x.device());
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  const std::int64_t n = x.numel();
  TOPO_ON_DEVICE(
      x.device(),
      parallel_for(n, 16,
                   [&](std::int64_t b, std::int64_t e) {
                     walk_stream(
                         b, e, offset,
                         [&](std::uint64_t block, float* out) {
                           const Philox4 r = philox4x32_10(block, kStreamUniform, seed);
                           for (int l = 0; l < 4; ++l) out[l] = bits_to_unit(r.v[l]);
                         },
                         [&](std::int64_t i, float u) { yp[i] = dropout_apply(xp[i], u, p, scale); });
                   }),
      cuda::dropout(xp, yp, n, p, scale, seed, offset));
  return y;
}

}  // namespace

Tensor dropout(const Tensor& x, float p, std::uint64_t seed, std::uint64_t offset) {
  return dropout_impl(x, p, seed, offset, "dropout");
}

Tensor dropout_backward(const Tensor& grad, float p, std::uint64_t seed, std::uint64_t offset) {
  return dropout_impl(grad, p, seed, offset, "dropout_backward");
}

Tensor random_uniform(const Shape& shape, float lo, float hi, std::uint64_t seed, Device device) {
  TOPO_CHECK(std::isfinite(lo) && std::isfinite(hi) && lo <= hi, "random_uniform: bad range [{}, {})", lo, hi);
  Tensor y = Tensor::empty(shape, DType::F32, device);
  float* yp = y.data<float>();
  const std::int64_t n = y.numel();
  TOPO_ON_DEVICE(
      device,
      parallel_for(n, 16,
                   [&](std::int64_t b, std::int64_t e) {
                     walk_stream(
                         b, e, 0,
                         [&](std::uint64_t block, float* out) {
                           const Philox4 r = philox4x32_10(block, kStreamUniform, seed);
                           for (int l = 0; l < 4; ++l) out[l] = bits_to_unit(r.v[l]);
                         },
                         [&](std::int64_t i, float u) { yp[i] = uniform_affine(u, lo, hi); });
                   }),
      cuda::random_uniform(yp, n, lo, hi, seed));
  return y;
}

Tensor random_normal(const Shape& shape, float mean, float stddev, std::uint64_t seed, Device device) {
  TOPO_CHECK(std::isfinite(mean) && std::isfinite(stddev) && stddev >= 0.f,
             "random_normal: bad mean {} or stddev {} (stddev must be finite and >= 0)", mean, stddev);
  Tensor y = Tensor::empty(shape, DType::F32, device);
  float* yp = y.data<float>();
  const std::int64_t n = y.numel();
  TOPO_ON_DEVICE(
      device,
      parallel_for(n, 64,
                   [&](std::int64_t b, std::int64_t e) {
                     walk_stream(
                         b, e, 0,
                         [&](std::uint64_t block, float* out) {
                           const Philox4 r = philox4x32_10(block, kStreamNormal, seed);
                           for (unsigned l = 0; l < 4; ++l) out[l] = normal_from_block(r, l);
                         },
                         [&](std::int64_t i, float z) { yp[i] = normal_affine(z, mean, stddev); });
                   }),
      cuda::random_normal(yp, n, mean, stddev, seed));
  return y;
}

}  // namespace topo
