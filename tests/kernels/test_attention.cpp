#include <cmath>
#include <random>

#include "kernels/sparse/attention.hpp"
#include "kernels/sparse/edge_softmax.hpp"
#include "kernels/sparse/sddmm.hpp"
#include "kernels/sparse/spmm.hpp"
#include "kernels/threads.hpp"
#include "tests/kernels/sparse_test_graphs.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::testing;

namespace {

double weighted_sum(const std::vector<float>& a, const std::vector<float>& r) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += double(a[i]) * r[i];
  return s;
}

// Destinations whose in-degrees straddle the CPU kernel's limits: rows of up to 512 in-edges go in blocks
// (512: a block on its own), heavier ones (513, 600) run the online softmax over chunks of 16 (600 = 37
// chunks and 8); 0, 1, 15, 16, 17, 32, 33 and a relay-like 129 around and inside blocks. Sources at random.
CooGraph chunk_boundary_graph() {
  const std::vector<std::int64_t> degrees = {0, 1, 15, 16, 17, 0, 32, 33, 129, 2, 512, 513, 600, 5};
  std::mt19937_64 rng(23);
  const EdgeLists e = edges_with_degrees(degrees, 40, rng);
  return make_coo_graph("chunk boundaries", 40, static_cast<std::int64_t>(degrees.size()), e.src, e.dst, DType::I32);
}

}  // namespace

TEST_CASE("sparse_attention: in-degrees around the block and chunk limits match the reference; 1, 2, 3 threads agree bitwise") {
  const CooGraph g = chunk_boundary_graph();
  // scale 2: scores up to ~+-30, so chunk maxima rise; dv = 70 and dk = 70: wider than the 64 floats kept in
  // registers (gspmm's sums, simd::dots_with's head slice).
  for (auto [H, dk, dv, scale] : {std::tuple<std::int64_t, std::int64_t, std::int64_t, float>{6, 50, 50, 0.15f},
                                  {3, 17, 33, 2.f}, {2, 5, 70, 0.5f}, {2, 70, 9, 0.1f}}) {
    TOPO_CAPTURE(H);
    TOPO_CAPTURE(dk);
    const Tensor q = random_uniform({g.num_dst, H, dk}, 41), k = random_uniform({g.num_src, H, dk}, 42),
                 v = random_uniform({g.num_src, H, dv}, 43), R = random_uniform({g.num_dst, H, dv}, 44);
    const int saved = num_threads();
    std::vector<std::vector<float>> outs, dqs, dks, dvs;
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      const AttentionOutput fwd = sparse_attention(g.in, q, k, v, scale);
      const AttentionGrads grads = sparse_attention_backward(g.in, g.out, q, k, v, fwd, R, scale);
      outs.push_back(fwd.out.to_vector<float>());
      dqs.push_back(grads.dq.to_vector<float>());
      dks.push_back(grads.dk.to_vector<float>());
      dvs.push_back(grads.dv.to_vector<float>());
    }
    set_num_threads(saved);
    const auto expected = reference::sparse_attention(g, q.to_vector<float>(), k.to_vector<float>(), v.to_vector<float>(), H, dk,
                                        dv, scale);
    TOPO_CHECK_CLOSE(outs[0], expected, 1e-5, 1e-4);
    for (std::size_t i = 1; i < outs.size(); ++i) {
      CHECK(outs[i] == outs[0]);
      CHECK(dqs[i] == dqs[0]);
      CHECK(dks[i] == dks[0]);
      CHECK(dvs[i] == dvs[0]);
    }
    const reference::AttentionGrads ref = reference::sparse_attention_grads(g, q.to_vector<float>(), k.to_vector<float>(), v.to_vector<float>(),
                                             R.to_vector<float>(), H, dk, dv, scale);
    TOPO_CHECK_CLOSE(dqs[0], ref.dq, 1e-4, 1e-3);
    TOPO_CHECK_CLOSE(dks[0], ref.dk, 1e-4, 1e-3);
    TOPO_CHECK_CLOSE(dvs[0], ref.dv, 1e-5, 1e-4);
  }
}

TEST_CASE("sparse_attention equals dense masked attention and the three-kernel composition") {
  for (const CooGraph& g : test_graphs())
    for (auto [H, dk, dv] : {std::tuple<std::int64_t, std::int64_t, std::int64_t>{1, 1, 1}, {6, 50, 50}, {2, 7, 64}}) {
      CAPTURE(g.name);
      TOPO_CAPTURE(H);
      TOPO_CAPTURE(dk);
      TOPO_CAPTURE(dv);
      const float scale = 1.f / std::sqrt(float(dk));
      Tensor q = random_uniform({g.num_dst, H, dk}, 1), k = random_uniform({g.num_src, H, dk}, 2),
             v = random_uniform({g.num_src, H, dv}, 3);
      AttentionOutput fused = sparse_attention(g.in, q, k, v, scale);
      const auto expected = reference::sparse_attention(g, q.to_vector<float>(), k.to_vector<float>(), v.to_vector<float>(), H, dk,
                                          dv, scale);
      TOPO_CHECK_CLOSE(fused.out.to_vector<float>(), expected, 1e-5, 1e-4);

      // Composition: scores (Dot on pre-scaled q) -> edge softmax -> weighted sum of v.
      std::vector<float> qs = q.to_vector<float>();
      for (float& x : qs) x *= scale;
      Tensor scores = gsddmm(SddmmOp::Dot, g.in, Tensor::from_vector(qs, q.shape()), k, Target::V, Target::U);
      Tensor a = edge_softmax(g.in, scores);
      Tensor composed = gspmm(MessageOp::UMulE, SpmmReduce::Sum, g.in, v, a).out;
      TOPO_CHECK_CLOSE(fused.out.to_vector<float>(), composed.to_vector<float>(), 1e-5, 1e-4);
    }
}

TEST_CASE("sparse_attention backward matches finite differences for q, k and v") {
  for (const CooGraph& g : {ring_relay_graph(5), random_graph(7, 9, 30, 4), window_graph(9, 3)}) {
    CAPTURE(g.name);
    const std::int64_t H = 2, dk = 3, dv = 4;
    const float scale = 0.7f;
    Tensor q = random_uniform({g.num_dst, H, dk}, 1), k = random_uniform({g.num_src, H, dk}, 2),
           v = random_uniform({g.num_src, H, dv}, 3);
    Tensor R = random_uniform({g.num_dst, H, dv}, 4);
    AttentionOutput fwd = sparse_attention(g.in, q, k, v, scale);
    AttentionGrads grads = sparse_attention_backward(g.in, g.out, q, k, v, fwd, R, scale);
    const auto rv = R.to_vector<float>();
    std::vector<float> qv = q.to_vector<float>(), kv = k.to_vector<float>(), vv = v.to_vector<float>();
    auto loss = [&] { return weighted_sum(reference::sparse_attention(g, qv, kv, vv, H, dk, dv, scale), rv); };
    const float h = 1e-2f;
    for (auto [values, analytic] : {std::pair{&qv, grads.dq}, {&kv, grads.dk}, {&vv, grads.dv}}) {
      std::vector<float> numeric(values->size());
      for (std::size_t i = 0; i < values->size(); ++i) {
        const float x = (*values)[i];
        (*values)[i] = x + h;
        const double lp = loss();
        (*values)[i] = x - h;
        const double lm = loss();
        (*values)[i] = x;
        numeric[i] = static_cast<float>((lp - lm) / (2 * h));
      }
      TOPO_CHECK_CLOSE(analytic.to_vector<float>(), numeric, 2e-3, 2e-2);
    }
  }
}

TEST_CASE("sparse_attention: destinations without in-edges give 0; mismatched shapes are errors") {
  CooGraph g = random_graph(5, 8, 10, 9);  // destinations 4..7 have no in-edges
  Tensor q = random_uniform({8, 2, 3}, 1), k = random_uniform({5, 2, 3}, 2), v = random_uniform({5, 2, 3}, 3);
  const auto out = sparse_attention(g.in, q, k, v, 1.f).out.to_vector<float>();
  for (std::int64_t i = 4 * 6; i < 8 * 6; ++i) CHECK(out[i] == 0.f);
  CHECK_THROWS_WITH_AS(sparse_attention(g.in, q, random_uniform({5, 3, 3}, 1), v, 1.f),
                       doctest::Contains("head counts differ"), Error);
  CHECK_THROWS_WITH_AS(sparse_attention(g.in, random_uniform({7, 2, 3}, 1), k, v, 1.f),
                       doctest::Contains("must have 8 rows"), Error);
}

TEST_CASE("sparse_attention_kv: k and v read in place from one [sources, 2, H, dh] tensor equal the separate call bitwise") {
  const CooGraph g = chunk_boundary_graph();  // every path: blocks, chunked heavy rows, rows without in-edges
  for (auto [H, dh] : {std::pair<std::int64_t, std::int64_t>{6, 50}, {3, 17}, {1, 1}}) {
    TOPO_CAPTURE(H);
    TOPO_CAPTURE(dh);
    const float scale = 0.4f;
    const Tensor q = random_uniform({g.num_dst, H, dh}, 51), kv = random_uniform({g.num_src, 2, H, dh}, 52),
                 R = random_uniform({g.num_dst, H, dh}, 53);
    // The halves as tensors of their own: k = kv[:, 0], v = kv[:, 1].
    const std::vector<float> all = kv.to_vector<float>();
    std::vector<float> kh, vh;
    for (std::int64_t u = 0; u < g.num_src; ++u) {
      const auto row = all.begin() + u * 2 * H * dh;
      kh.insert(kh.end(), row, row + H * dh);
      vh.insert(vh.end(), row + H * dh, row + 2 * H * dh);
    }
    const Tensor k = Tensor::from_vector(kh, {g.num_src, H, dh}), v = Tensor::from_vector(vh, {g.num_src, H, dh});
    const AttentionOutput separate = sparse_attention(g.in, q, k, v, scale);
    const AttentionOutput packed = sparse_attention_kv(g.in, q, kv, scale);
    CHECK(packed.out.to_vector<float>() == separate.out.to_vector<float>());
    CHECK(packed.lse.to_vector<float>() == separate.lse.to_vector<float>());
    const AttentionGrads gs = sparse_attention_backward(g.in, g.out, q, k, v, separate, R, scale);
    const AttentionKvGrads gp = sparse_attention_kv_backward(g.in, g.out, q, kv, packed, R, scale);
    CHECK(gp.dq.to_vector<float>() == gs.dq.to_vector<float>());
    REQUIRE(gp.dkv.shape() == kv.shape());
    const std::vector<float> dkv = gp.dkv.to_vector<float>(), dk = gs.dk.to_vector<float>(), dv = gs.dv.to_vector<float>();
    std::vector<float> dk_half, dv_half;
    for (std::int64_t u = 0; u < g.num_src; ++u) {
      const auto row = dkv.begin() + u * 2 * H * dh;
      dk_half.insert(dk_half.end(), row, row + H * dh);
      dv_half.insert(dv_half.end(), row + H * dh, row + 2 * H * dh);
    }
    CHECK(dk_half == dk);
    CHECK(dv_half == dv);
  }
  const Tensor q = random_uniform({g.num_dst, 2, 3}, 1);
  CHECK_THROWS_WITH_AS(sparse_attention_kv(g.in, q, random_uniform({g.num_src, 3, 2, 3}, 2), 1.f),
                       doctest::Contains("kv [sources, 2, heads, dim]"), Error);
  CHECK_THROWS_WITH_AS(sparse_attention_kv(g.in, q, random_uniform({g.num_src + 1, 2, 2, 3}, 2), 1.f),
                       doctest::Contains("kv"), Error);
}
