// GAT's fused edge attention (kernels/sparse/gat_attention) against the double-precision reference, the
// composition it replaces (gsddmm u_add_v -> leaky relu -> edge_softmax -> dropout -> gspmm u_mul_e), and
// itself at 1, 2 and 3 threads. Gradients against finite differences run in the op table (gat_attention).
#include <random>

#include "kernels/dense/random.hpp"
#include "kernels/dense/unary.hpp"
#include "kernels/sparse/edge_softmax.hpp"
#include "kernels/sparse/gat_attention.hpp"
#include "kernels/sparse/sddmm.hpp"
#include "kernels/sparse/spmm.hpp"
#include "kernels/threads.hpp"
#include "tests/kernels/sparse_test_graphs.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::testing;

namespace {

// In-degrees 0 to 600 (rows without in-edges, a relay-like 129, heavy rows past any buffer a kernel might size
// for the common case); sources at random, so multi-edges; edge ids in a shuffled order.
CooGraph degree_spread_graph(DType ids) {
  const std::vector<std::int64_t> degrees = {0, 1, 15, 16, 17, 0, 32, 33, 129, 2, 512, 513, 600, 5};
  std::mt19937_64 rng(29);
  const EdgeLists e = edges_with_degrees(degrees, 40, rng);
  return make_coo_graph("degree spread", 40, static_cast<std::int64_t>(degrees.size()), e.src, e.dst, ids);
}

GatDropout dropout_of(float p, std::uint64_t seed, std::uint64_t offset) {
  return p == 0.f ? GatDropout{} : GatDropout{p, 1.f / (1.f - p), seed, offset};
}

}  // namespace

TEST_CASE("gat_attention equals the reference in double, forward and backward, with and without attention dropout") {
  for (DType ids : {DType::I32, DType::I64})
    for (auto [H, F, p] : {std::tuple<std::int64_t, std::int64_t, float>{8, 8, 0.f}, {8, 8, 0.6f}, {3, 5, 0.3f},
                           {1, 33, 0.f}, {5, 1, 0.5f}, {70, 2, 0.5f}}) {  // 70: past a Philox batch per edge
      const CooGraph g = degree_spread_graph(ids);
      TOPO_CAPTURE(H);
      TOPO_CAPTURE(F);
      TOPO_CAPTURE(p);
      // Scores up to +-6: softmax rows far from uniform, both sides of the LeakyReLU.
      const Tensor el = random_uniform({g.num_src, H}, 61, -3.f, 3.f), er = random_uniform({g.num_dst, H}, 62, -3.f, 3.f),
                   z = random_uniform({g.num_src, H, F}, 63), R = random_uniform({g.num_dst, H, F}, 64);
      const float slope = 0.2f;
      const GatDropout drop = dropout_of(p, 77, 5);  // an offset that is not a multiple of 4: blocks straddle edges
      const GatAttentionOutput fwd = gat_attention(g.in, el, er, z, slope, drop);
      const reference::GatMask mask{p, 77, 5};
      TOPO_CHECK_CLOSE(fwd.out.to_vector<float>(),
                       reference::gat_attention(g, el.to_vector<float>(), er.to_vector<float>(), z.to_vector<float>(), H,
                                                F, slope, mask),
                       1e-5, 1e-4);
      const GatAttentionGrads grads = gat_attention_backward(g.in, g.out, el, er, z, fwd, R, slope, drop);
      const reference::GatGrads ref = reference::gat_attention_grads(
          g, el.to_vector<float>(), er.to_vector<float>(), z.to_vector<float>(), R.to_vector<float>(), H, F, slope, mask);
      TOPO_CHECK_CLOSE(grads.del.to_vector<float>(), ref.del, 1e-4, 1e-3);
      TOPO_CHECK_CLOSE(grads.der.to_vector<float>(), ref.der, 1e-4, 1e-3);
      TOPO_CHECK_CLOSE(grads.dz.to_vector<float>(), ref.dz, 1e-5, 1e-4);
      // Rows without in-edges: output 0, lse -inf, no gradient.
      const auto out = fwd.out.to_vector<float>(), lse = fwd.lse.to_vector<float>(), der = grads.der.to_vector<float>();
      for (std::int64_t t : {0, 5}) {
        for (std::int64_t i = 0; i < H * F; ++i) CHECK(out[t * H * F + i] == 0.f);
        for (std::int64_t h = 0; h < H; ++h) {
          CHECK(std::isinf(lse[t * H + h]));
          CHECK(der[t * H + h] == 0.f);
        }
      }
    }
}

TEST_CASE("gat_attention: the same output as the composition it replaces, dropout mask bit for bit") {
  const CooGraph g = random_graph(30, 25, 200, 8);
  const std::int64_t H = 4, F = 6;
  const float slope = 0.2f, p = 0.4f;
  const Tensor el = random_uniform({g.num_src, H, 1}, 1, -2.f, 2.f), er = random_uniform({g.num_dst, H, 1}, 2, -2.f, 2.f),
               z = random_uniform({g.num_src, H, F}, 3);
  // The composition draws its mask with topo::dropout on the [E, H, 1] weights at the same seed and offset.
  const Tensor x = gsddmm(SddmmOp::Add, g.in, el, er, Target::U, Target::V);
  const Tensor a = dropout(edge_softmax(g.in, leaky_relu(x, slope)), p, 11, 3);
  const Tensor composed = gspmm(MessageOp::UMulE, SpmmReduce::Sum, g.in, z, a).out;
  const GatAttentionOutput fused = gat_attention(g.in, el, er, z, slope, dropout_of(p, 11, 3));
  TOPO_CHECK_CLOSE(fused.out.to_vector<float>(), composed.to_vector<float>(), 1e-6, 1e-5);
}

TEST_CASE("gat_attention: 1, 2 and 3 threads agree bitwise, forward and backward") {
  const CooGraph g = degree_spread_graph(DType::I32);
  const std::int64_t H = 8, F = 8;
  const Tensor el = random_uniform({g.num_src, H}, 71), er = random_uniform({g.num_dst, H}, 72),
               z = random_uniform({g.num_src, H, F}, 73), R = random_uniform({g.num_dst, H, F}, 74);
  const GatDropout drop = dropout_of(0.5f, 3, 0);
  const int saved = num_threads();
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    const GatAttentionOutput fwd = gat_attention(g.in, el, er, z, 0.2f, drop);
    const GatAttentionGrads grads = gat_attention_backward(g.in, g.out, el, er, z, fwd, R, 0.2f, drop);
    std::vector<float> all = fwd.out.to_vector<float>();
    for (const Tensor& t : {grads.del, grads.der, grads.dz}) {
      const auto v = t.to_vector<float>();
      all.insert(all.end(), v.begin(), v.end());
    }
    results.push_back(all);
  }
  set_num_threads(saved);
  CHECK(results[1] == results[0]);
  CHECK(results[2] == results[0]);
}

TEST_CASE("gat_attention: mismatched shapes and a bad dropout rate are errors naming the operand") {
  const CooGraph g = random_graph(5, 8, 10, 9);
  const Tensor el = random_uniform({5, 2}, 1), er = random_uniform({8, 2}, 2), z = random_uniform({5, 2, 3}, 3);
  CHECK_THROWS_WITH_AS(gat_attention(g.in, random_uniform({5, 3}, 1), er, z, 0.2f), doctest::Contains("el"), Error);
  CHECK_THROWS_WITH_AS(gat_attention(g.in, el, random_uniform({7, 2}, 2), z, 0.2f), doctest::Contains("er"), Error);
  CHECK_THROWS_WITH_AS(gat_attention(g.in, el, er, random_uniform({5, 6}, 3), 0.2f),
                       doctest::Contains("[sources, heads, features]"), Error);
  CHECK_THROWS_WITH_AS(gat_attention(g.in, el, er, z, 0.2f, GatDropout{1.f, 1.f, 0, 0}),
                       doctest::Contains("dropout must be in [0, 1)"), Error);
  const GatAttentionOutput fwd = gat_attention(g.in, el, er, z, 0.2f);
  CHECK_THROWS_WITH_AS(gat_attention_backward(g.in, g.in, el, er, z, fwd, random_uniform({8, 2, 3}, 4), 0.2f),
                       doctest::Contains("is not the reverse of in_csr"), Error);
}
