// Head-group attention (one fused call per group inside one autograd node) on CUDA against the CPU,
// forward and the q/k/v gradients, on Multi-Scale's window blocks. Runs only with a CUDA device.
#include <doctest/doctest.h>

#include "models/multiscale_transformer/multiscale_transformer.hpp"
#include "nn/ops.hpp"
#include "nn/sparse_ops.hpp"
#include "tests/support/testing.hpp"

using namespace topo;

TEST_CASE("CUDA head-group attention equals the CPU one, forward and gradients") {
  const std::vector<std::int64_t> lengths = {1, 2, 9, 30, 5};
  const auto scales = models::parse_scales("1,3,N/4,7");
  const auto cpu = models::multiscale_topology(lengths, scales);
  const auto gpu = models::multiscale_topology(lengths, scales, Device::cuda());
  const std::vector<std::int64_t> heads = {2, 1, 3, 1};
  const std::int64_t n = cpu.num_positions(), dh = 32;
  std::vector<const Block*> bc, bg;
  for (std::size_t k = 0; k < scales.size(); ++k) {
    bc.push_back(&cpu.scales[k]);
    bg.push_back(&gpu.scales[k]);
  }
  std::vector<nn::Var> c, g;
  for (std::uint64_t s = 1; s <= 3; ++s) {
    const Tensor t = testing::random_uniform({n, 7, dh}, s);
    c.emplace_back(t, true);
    g.emplace_back(t.to(Device::cuda()), true);
  }
  const nn::Var yc = nn::sparse_attention(bc, heads, c[0], c[1], c[2], 0.3f);
  const nn::Var yg = nn::sparse_attention(bg, heads, g[0], g[1], g[2], 0.3f);
  REQUIRE(yg.device().is_cuda());
  const Tensor seed = testing::random_uniform(yc.shape(), 9);
  yc.backward(seed);
  yg.backward(seed.to(Device::cuda()));
  TOPO_CHECK_CLOSE(yg.data().to_vector<float>(), yc.data().to_vector<float>(), 1e-5, 1e-4);
  for (std::size_t i = 0; i < 3; ++i) TOPO_CHECK_CLOSE(g[i].grad().to_vector<float>(), c[i].grad().to_vector<float>(), 1e-5, 1e-4);
}
