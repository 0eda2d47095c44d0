// The message-passing API (nn/message_passing.hpp) on a CUDA graph against the CPU, forward and gradients:
// update_all with a user-defined reduce, whose padded mailbox is built on the device. The sparse ops
// themselves (every gSpMM op x reducer, including the CUDA max/min backward kernels, gSDDMM, edge softmax,
// fused attention) are entries of the op table: tests/gpu/test_op_table_gpu.cpp. Runs only with a CUDA device.
#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "nn/message_passing.hpp"
#include "nn/sparse_ops.hpp"
#include "tests/nn/test_sparse_ops_graphs.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::nn;

namespace {

struct Pair {
  Var cpu, gpu;
};
Pair leaves(const Shape& shape, std::uint64_t seed, float lo = -1.f, float hi = 1.f) {
  const Tensor t = topo::testing::random_uniform(shape, seed, lo, hi);
  return {Var(t, true), Var(t.to(Device::cuda()), true)};
}

// Runs f on both devices with the same seed gradient and compares the outputs and the leaves' gradients.
template <class F>
void compare(F&& f, const std::vector<Pair>& inputs, std::uint64_t seed) {
  std::vector<Var> c, g;
  for (const Pair& p : inputs) {
    c.push_back(p.cpu);
    g.push_back(p.gpu);
  }
  const Var yc = f(c), yg = f(g);
  REQUIRE(yg.device().is_cuda());
  const Tensor seed_grad = topo::testing::random_uniform(yc.shape(), seed);
  yc.backward(seed_grad);
  yg.backward(seed_grad.to(Device::cuda()));
  TOPO_CHECK_CLOSE(yg.data().to_vector<float>(), yc.data().to_vector<float>(), 1e-5, 1e-4);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    CAPTURE(i);
    // An operand the op ignores (copy_e's node features, copy_lhs's rhs) gets no gradient on either device.
    REQUIRE(g[i].grad().defined() == c[i].grad().defined());
    if (c[i].grad().defined())
      TOPO_CHECK_CLOSE(g[i].grad().to_vector<float>(), c[i].grad().to_vector<float>(), 1e-5, 1e-4);
  }
}

}  // namespace

TEST_CASE("CUDA message passing (update_all with a reduce UDF) equals the CPU, forward and gradients") {
  for (const auto& t : topo::nn::testing::test_graphs()) {
    CAPTURE(t.name);
    const HeteroGraph gg = t.g.to(Device::cuda());
    // The API on a CUDA graph, with a reduce UDF (the padded mailbox is built on the device).
    const std::string st = t.g.canonical_etype(0).src_type;
    compare(
        [&](const std::vector<Var>& x) {
          GraphFeatures f(x[0].device().is_cuda() ? gg : t.g);
          f.set_ndata(st, "h", x[0]);
          return update_all(f, t.etype, fn::copy_u("h", "m"),
                            fn::reduce_udf([](const Mailbox& b) { return sum(b.messages, 1); }));
        },
        {leaves({t.num_src, 3}, 13)}, 14);
  }
}

TEST_CASE("CUDA sage_mean (the composition there) equals the CPU's fused op, forward and gradient") {
  for (const auto& t : topo::nn::testing::test_graphs()) {
    if (t.num_src != t.num_dst || t.g.canonical_etype(0).src_type != t.g.canonical_etype(0).dst_type) continue;
    CAPTURE(t.name);
    const HeteroGraph gg = t.g.to(Device::cuda());
    compare(
        [&](const std::vector<Var>& x) {
          const HeteroGraph& g = x[0].device().is_cuda() ? gg : t.g;
          return sage_mean(gspmm_block(g, 0, MessageOp::CopyU, SpmmReduce::Mean), x[0]);
        },
        {leaves({t.num_src, 10}, 15)}, 16);
  }
}
