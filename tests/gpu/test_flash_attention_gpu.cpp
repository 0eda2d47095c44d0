// Fused dense attention on CUDA against the CPU kernel, forward and the q/k/v gradients, at sequence lengths
// that cross the CUDA key tile (32) and the CPU tiles, full and banded (per-(sequence, head) radii through both
// CPU band schedules). Runs only with a CUDA device.
#include <doctest/doctest.h>

#include "nn/ops.hpp"
#include "tests/support/testing.hpp"

using namespace topo;

TEST_CASE("CUDA flash attention equals the CPU one, forward and gradients") {
  const std::vector<std::int64_t> lengths = {1, 33, 7, 130, 70};
  std::int64_t n = 0;
  for (std::int64_t l : lengths) n += l;
  std::vector<std::int64_t> band;  // per (sequence, head) of 3 heads: width 1, a 5-row band, a quarter window
  for (std::int64_t l : lengths)
    for (std::int64_t r : {std::int64_t{0}, std::int64_t{2}, (l + 3) / 4}) band.push_back(r);
  for (const auto& radii : {std::vector<std::int64_t>{}, band}) {
    for (std::int64_t dh : {16, 50}) {
      CAPTURE(radii.size());
      CAPTURE(dh);
      std::vector<nn::Var> c, g;
      for (std::uint64_t s = 1; s <= 3; ++s) {
        const Tensor t = testing::random_uniform({n, 3, dh}, s + static_cast<std::uint64_t>(dh));
        c.emplace_back(t, true);
        g.emplace_back(t.to(Device::cuda()), true);
      }
      const float scale = 0.2f;
      const nn::Var yc = nn::flash_attention(c[0], c[1], c[2], lengths, scale, radii);
      const nn::Var yg = nn::flash_attention(g[0], g[1], g[2], lengths, scale, radii);
      REQUIRE(yg.device().is_cuda());
      const Tensor seed = testing::random_uniform(yc.shape(), 9);
      yc.backward(seed);
      yg.backward(seed.to(Device::cuda()));
      TOPO_CHECK_CLOSE(yg.data().to_vector<float>(), yc.data().to_vector<float>(), 1e-5, 1e-4);
      for (std::size_t i = 0; i < 3; ++i)
        TOPO_CHECK_CLOSE(g[i].grad().to_vector<float>(), c[i].grad().to_vector<float>(), 1e-5, 1e-4);
    }
  }
}

TEST_CASE("CUDA flash attention on a packed qkv [rows, 3, H, dh] equals the CPU one, forward and gradient") {
  const std::vector<std::int64_t> lengths = {1, 33, 130};
  const std::int64_t n = 164;
  for (const auto& radii : {std::vector<std::int64_t>{}, std::vector<std::int64_t>{0, 2, 40}}) {
    CAPTURE(radii.size());
    const Tensor t = testing::random_uniform({n, 3, 2, 30}, 11);
    const nn::Var c(t, true), g(t.to(Device::cuda()), true);
    const nn::Var yc = nn::flash_attention_packed(c, lengths, 0.2f, radii);
    const nn::Var yg = nn::flash_attention_packed(g, lengths, 0.2f, radii);
    REQUIRE(yg.device().is_cuda());
    const Tensor seed = testing::random_uniform(yc.shape(), 12);
    yc.backward(seed);
    yg.backward(seed.to(Device::cuda()));
    TOPO_CHECK_CLOSE(yg.data().to_vector<float>(), yc.data().to_vector<float>(), 1e-5, 1e-4);
    TOPO_CHECK_CLOSE(g.grad().to_vector<float>(), c.grad().to_vector<float>(), 1e-5, 1e-4);
  }
}
