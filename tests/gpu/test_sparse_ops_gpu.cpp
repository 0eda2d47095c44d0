// CUDA versions of the differentiable sparse ops (nn/sparse_ops.hpp, nn/message_passing.hpp) against the
// CPU ones, forward and every gradient; this covers the CUDA max/min backward kernels (spmm_arg_to_sources
// for copy_u, spmm_arg_to_edges for the other ops). The CPU ops are checked against loops and finite
// differences in tests/nn. Runs only with a CUDA device.
#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "nn/message_passing.hpp"
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

TEST_CASE("CUDA sparse ops and message passing equal the CPU ones, forward and gradients") {
  for (const auto& t : topo::nn::testing::test_graphs()) {
    CAPTURE(t.name);
    const HeteroGraph gg = t.g.to(Device::cuda());
    const Block cc = t.csr(), cg = relation_block(gg, t.etype);
    auto csr_of = [&](const Var& x) { return x.device().is_cuda() ? cg : cc; };
    // Every gSpMM message op x reducer; edge features broadcast over the last axis, except copy_e's.
    for (SpmmReduce r : {SpmmReduce::Sum, SpmmReduce::Mean, SpmmReduce::Max, SpmmReduce::Min})
      for (MessageOp op : {MessageOp::CopyU, MessageOp::CopyE, MessageOp::UAddE, MessageOp::USubE, MessageOp::UMulE,
                           MessageOp::UDivE}) {
        CAPTURE(static_cast<int>(r));
        CAPTURE(static_cast<int>(op));
        const std::int64_t edge_width = op == MessageOp::CopyE ? 7 : 1;
        compare([&](const std::vector<Var>& x) { return gspmm(csr_of(x[0]), op, r, x[0], x[1]); },
                {leaves({t.num_src, 6, 7}, 1), leaves({t.num_edges(), 6, edge_width}, 2, 0.5f, 1.5f)}, 3);
      }
    // Every gSDDMM op, between node and edge operands in both directions.
    auto rows_of = [&](Target target) {
      return target == Target::U ? t.num_src : target == Target::V ? t.num_dst : t.num_edges();
    };
    for (SddmmOp op : {SddmmOp::Add, SddmmOp::Sub, SddmmOp::Mul, SddmmOp::Div, SddmmOp::Dot, SddmmOp::CopyLhs,
                       SddmmOp::CopyRhs})
      for (const auto& [lt, rt] : std::vector<std::pair<Target, Target>>{
               {Target::U, Target::V}, {Target::V, Target::U}, {Target::U, Target::E}, {Target::E, Target::V}}) {
        CAPTURE(static_cast<int>(op));
        CAPTURE(static_cast<int>(lt));
        CAPTURE(static_cast<int>(rt));
        compare([&](const std::vector<Var>& x) { return gsddmm(csr_of(x[0]), op, x[0], x[1], lt, rt); },
                {leaves({rows_of(lt), 6, 7}, 4), leaves({rows_of(rt), 6, 7}, 5, 0.5f, 1.5f)}, 6);
      }
    for (NormBy by : {NormBy::Src, NormBy::Dst}) {
      CAPTURE(static_cast<int>(by));
      compare([&](const std::vector<Var>& x) { return edge_softmax(csr_of(x[0]), x[0], by); },
              {leaves({t.num_edges(), 6}, 7)}, 8);
    }
    compare([&](const std::vector<Var>& x) { return sparse_attention(csr_of(x[0]), x[0], x[1], x[2], 0.4f); },
            {leaves({t.num_dst, 6, 7}, 9), leaves({t.num_src, 6, 7}, 10), leaves({t.num_src, 6, 5}, 11)}, 12);
    // k and v as one projection [sources, 2, H, dh] (the graph attention layer's form).
    compare([&](const std::vector<Var>& x) { return sparse_attention_kv(csr_of(x[0]), x[0], x[1], 0.4f); },
            {leaves({t.num_dst, 6, 7}, 13), leaves({t.num_src, 2, 6, 7}, 14)}, 15);
    // The head widths the models use (the fused kernel specialises on them).
    for (std::int64_t dh : {32, 64, 128}) {
      CAPTURE(dh);
      compare([&](const std::vector<Var>& x) { return sparse_attention(csr_of(x[0]), x[0], x[1], x[2], 0.125f); },
              {leaves({t.num_dst, 2, dh}, 20), leaves({t.num_src, 2, dh}, 21), leaves({t.num_src, 2, dh}, 22)}, 23);
    }
    // The API on a CUDA graph, including a reduce UDF (padded mailbox built on the device).
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
