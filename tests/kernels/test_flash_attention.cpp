// Fused dense attention (kernels/dense/flash_attention.hpp) against a double-precision dense reference written
// from the formula, at awkward sizes (sequence lengths that leave partial query and key tiles, one longer than
// a key tile so the online rescaling runs, head dims that are not multiples of a vector), and its backward
// against finite differences of that reference. Bands (per-sequence or per-(sequence, head) radii): the same
// against the reference restricted to |i - j| <= radius, through both band schedules (per-row dot products
// for narrow bands, masked tiles for wide ones) and the full-attention limit.
#include <cmath>
#include <random>

#include "kernels/dense/flash_attention.hpp"
#include "kernels/dense/flash_attention_band.hpp"
#include "kernels/dense/reference.hpp"
#include "kernels/threads.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::testing;

namespace {

using AttentionProblem = reference::DenseAttentionProblem;

std::vector<double> doubles(const Tensor& t) {
  const auto f = t.to_vector<float>();
  return {f.begin(), f.end()};
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

void check_problem(const AttentionProblem& p, std::uint64_t seed, bool elementwise_grads) {
  const std::int64_t N = p.rows();
  const Tensor q = random_uniform({N, p.heads, p.dk}, seed, -2.f, 2.f);
  const Tensor k = random_uniform({N, p.heads, p.dk}, seed + 1, -2.f, 2.f);
  const Tensor v = random_uniform({N, p.heads, p.dv}, seed + 2);
  const Tensor w = random_uniform({N, p.heads, p.dv}, seed + 3);  // loss = sum(out * w)
  const FlashAttentionOutput fwd = flash_attention(q, k, v, p.lengths, p.scale, p.radii);
  std::vector<double> qd = doubles(q), kd = doubles(k), vd = doubles(v);
  const auto expected = reference::dense_attention(p, qd, kd, vd);
  TOPO_CHECK_CLOSE(fwd.out.to_vector<float>(), std::vector<float>(expected.begin(), expected.end()), 1e-5, 1e-4);
  const FlashAttentionOutput plain = flash_attention_reference(q, k, v, p.lengths, p.scale, p.radii);
  TOPO_CHECK_CLOSE(plain.out.to_vector<float>(), std::vector<float>(expected.begin(), expected.end()), 1e-5, 1e-4);
  TOPO_CHECK_CLOSE(fwd.lse.to_vector<float>(), plain.lse.to_vector<float>(), 1e-5, 1e-5);

  const FlashAttentionGrads g = flash_attention_backward(q, k, v, p.lengths, fwd, w, p.scale, p.radii);
  const auto wd = doubles(w);
  const auto loss = [&] { return dot(reference::dense_attention(p, qd, kd, vd), wd); };
  const double eps = 1e-5;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  for (auto [name, x, grad] : {std::tuple{"q", &qd, g.dq}, std::tuple{"k", &kd, g.dk}, std::tuple{"v", &vd, g.dv}}) {
    TOPO_CAPTURE(name);  // the gradient checked
    const auto analytic = doubles(grad);
    REQUIRE(analytic.size() == x->size());
    if (elementwise_grads) {  // every element by central differences
      std::vector<float> numeric(x->size());
      for (std::size_t i = 0; i < x->size(); ++i) {
        const double keep = (*x)[i];
        (*x)[i] = keep + eps;
        const double up = loss();
        (*x)[i] = keep - eps;
        numeric[i] = static_cast<float>((up - loss()) / (2 * eps));
        (*x)[i] = keep;
      }
      TOPO_CHECK_CLOSE(grad.to_vector<float>(), numeric, 1e-4, 1e-3);
    }
    // Directional derivative along a random direction (all elements at once).
    std::vector<double> u(x->size());
    for (double& e : u) e = normal(rng);
    const std::vector<double> keep = *x;
    for (std::size_t i = 0; i < u.size(); ++i) (*x)[i] = keep[i] + eps * u[i];
    const double up = loss();
    for (std::size_t i = 0; i < u.size(); ++i) (*x)[i] = keep[i] - eps * u[i];
    const double numeric = (up - loss()) / (2 * eps);
    *x = keep;
    CHECK(std::abs(dot(analytic, u) - numeric) <= 1e-3 * (1.0 + std::abs(numeric)));
  }
}

}  // namespace

TEST_CASE("flash_attention: forward and gradients against the double dense reference at awkward sizes") {
  for (std::int64_t L : {1, 7, 33, 130})
    for (std::int64_t dh : {16, 50, 64}) {
      CAPTURE(L);
      CAPTURE(dh);
      // A batch of the length under test beside shorter ones, so sequences start mid-tile.
      const AttentionProblem p{
          {L, std::max<std::int64_t>(1, L / 3), 1}, 2, dh, dh, 1.f / std::sqrt(static_cast<float>(dh))};
      check_problem(p, static_cast<std::uint64_t>(L * 100 + dh), L <= 7);
    }
}

TEST_CASE("flash_attention: a sequence longer than a key tile (online rescaling) and dv != dk") {
  check_problem(AttentionProblem{{600, 5}, 1, 16, 16, 0.25f}, 11, false);
  check_problem(AttentionProblem{{9, 70}, 3, 8, 12, 0.5f}, 12, true);
}

TEST_CASE("flash_attention: every sequence on the lanes kernels, whose gradients are written unzeroed") {
  // All lengths >= flash_lanes::kMinLength: dq, dk and dv start as empty tensors, so a row the kernels missed
  // would hold whatever memory was there.
  check_problem(AttentionProblem{{300, 257}, 2, 50, 50, 0.14f}, 13, false);
}

TEST_CASE("flash_attention: results do not depend on the thread count") {
  // 1,100 rows: the banded backward's chunks of one sequence split across the threads.
  const AttentionProblem p{{130, 64, 1, 200, 1100}, 3, 50, 50, 0.1f};
  const Tensor q = random_uniform({p.rows(), 3, 50}, 1), k = random_uniform({p.rows(), 3, 50}, 2),
               v = random_uniform({p.rows(), 3, 50}, 3), w = random_uniform({p.rows(), 3, 50}, 4);
  // Full attention, and bands of both schedules (per-row: radius 2; tiles: 20, 70).
  for (const std::vector<std::int64_t>& radii : {std::vector<std::int64_t>{}, std::vector<std::int64_t>{2, 20, 0, 70, 3}}) {
    CAPTURE(radii.size());
    const int threads = num_threads();
    set_num_threads(1);
    const FlashAttentionOutput one = flash_attention(q, k, v, p.lengths, p.scale, radii);
    const FlashAttentionGrads g1 = flash_attention_backward(q, k, v, p.lengths, one, w, p.scale, radii);
    set_num_threads(std::max(2, threads));
    const FlashAttentionOutput many = flash_attention(q, k, v, p.lengths, p.scale, radii);
    const FlashAttentionGrads g2 = flash_attention_backward(q, k, v, p.lengths, many, w, p.scale, radii);
    set_num_threads(threads);
    CHECK(one.out.to_vector<float>() == many.out.to_vector<float>());
    CHECK(g1.dq.to_vector<float>() == g2.dq.to_vector<float>());
    CHECK(g1.dk.to_vector<float>() == g2.dk.to_vector<float>());
    CHECK(g1.dv.to_vector<float>() == g2.dv.to_vector<float>());
  }
}

TEST_CASE("flash_attention bands: forward and gradients against the banded reference at awkward sizes") {
  // One batch of awkward lengths; radii 0 ... 40 run on the banded micro-kernels on AVX-512 CPUs (radius 0 as
  // copies; 1 ... 4 with positions in lanes, cut by the sequence ends and, at 301, by the forward's chunks of
  // 256 queries; from 5 on, blocks of 8 queries cut by the band edges) and elsewhere take the per-row (0 ... 5)
  // and masked-tile (9, 40) schedules. 300 and 1000 (>= the longest length - 1) are full attention; its
  // 301-row sequence runs on the queries-in-lanes forward (key tiles of 240, a last key group of one).
  const std::vector<std::int64_t> lengths = {1, 2, 7, 33, 130, 301};
  for (std::int64_t radius : {0, 1, 2, 3, 4, 5, 9, 40, 300, 1000})
    for (std::int64_t dh : {7, 30, 64}) {
      CAPTURE(radius);
      CAPTURE(dh);
      AttentionProblem p{lengths, 3, dh, dh, 1.f / std::sqrt(static_cast<float>(dh))};
      p.radii.assign(lengths.size(), radius);
      check_problem(p, static_cast<std::uint64_t>(radius * 100 + dh), false);
    }
  // Every element's gradient by central differences on a small batch, per (sequence, head) radii.
  check_problem(AttentionProblem{{2, 7, 5}, 2, 7, 5, 0.4f, {0, 3, 1, 1, 2, 9}}, 21, true);
}

TEST_CASE("flash_attention bands: per-(sequence, head) radii mix both schedules in one call") {
  // Multi-Scale's use: heads 0-1 width 1 and 3, head 2 a wide window, head 3 full, per sequence.
  const std::vector<std::int64_t> lengths = {130, 1, 600, 17};
  std::vector<std::int64_t> radii;
  for (std::int64_t len : lengths)
    for (std::int64_t r : {std::int64_t{0}, std::int64_t{1}, (len + 3) / 4, len}) radii.push_back(r);
  check_problem(AttentionProblem{lengths, 4, 30, 30, 0.18f, radii}, 31, false);
  // A band wider than a key tile (several key tiles per query tile) with dv != dk.
  check_problem(AttentionProblem{{700, 3}, 2, 16, 24, 0.25f, {300, 1}}, 32, false);
  // Head widths past two vectors (dk 33, dv 17: a third, partial vector of columns in every product and
  // transpose) on sequences of several forward chunks.
  check_problem(AttentionProblem{{300, 41, 530}, 2, 33, 17, 0.2f, {20, 3, 1, 0, 7, 90}}, 33, false);
}

TEST_CASE("flash_attention bands: a radius of length - 1 or more is full attention, bit for bit") {
  const AttentionProblem p{{130, 64, 1, 600}, 3, 50, 50, 0.1f};
  const Tensor q = random_uniform({p.rows(), 3, 50}, 5), k = random_uniform({p.rows(), 3, 50}, 6),
               v = random_uniform({p.rows(), 3, 50}, 7), w = random_uniform({p.rows(), 3, 50}, 8);
  const FlashAttentionOutput full = flash_attention(q, k, v, p.lengths, p.scale);
  const FlashAttentionOutput wide = flash_attention(q, k, v, p.lengths, p.scale, {129, 5000, 0, 600});
  CHECK(full.out.to_vector<float>() == wide.out.to_vector<float>());
  const FlashAttentionGrads g1 = flash_attention_backward(q, k, v, p.lengths, full, w, p.scale);
  const FlashAttentionGrads g2 = flash_attention_backward(q, k, v, p.lengths, wide, w, p.scale, {129, 5000, 0, 600});
  CHECK(g1.dq.to_vector<float>() == g2.dq.to_vector<float>());
  CHECK(g1.dk.to_vector<float>() == g2.dk.to_vector<float>());
}

TEST_CASE("flash_attention_packed: q, k, v read in place from one [rows, 3, H, dh] tensor, bit for bit the separate call") {
  // Full attention, bands on the micro-kernels and the tiles, radius 0 and per-head radii mixing them.
  const std::vector<std::int64_t> lengths = {130, 1, 300, 17};
  const std::int64_t heads = 3, dh = 30, rows = 448;
  std::vector<std::int64_t> mixed;
  for (std::int64_t len : lengths)
    for (std::int64_t r : {std::int64_t{0}, (len + 3) / 4, len}) mixed.push_back(r);
  for (const std::vector<std::int64_t>& radii : {std::vector<std::int64_t>{}, std::vector<std::int64_t>{4, 4, 4, 4}, mixed}) {
    CAPTURE(radii.size());
    const Tensor qkv = random_uniform({rows, 3, heads, dh}, 70), w = random_uniform({rows, heads, dh}, 71);
    // The parts as their own tensors: row i of part j is row 3 i + j of [3 rows, H dh].
    const std::vector<float> all = qkv.to_vector<float>();
    std::vector<std::vector<float>> part(3);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < 3; ++j)
        part[static_cast<std::size_t>(j)].insert(part[static_cast<std::size_t>(j)].end(), all.begin() + (3 * i + j) * heads * dh,
                                                 all.begin() + (3 * i + j + 1) * heads * dh);
    const Tensor q = Tensor::from_vector(part[0], {rows, heads, dh}), k = Tensor::from_vector(part[1], {rows, heads, dh}),
                 v = Tensor::from_vector(part[2], {rows, heads, dh});
    const FlashAttentionOutput packed = flash_attention_packed(qkv, lengths, 0.2f, radii);
    const FlashAttentionOutput separate = flash_attention(q, k, v, lengths, 0.2f, radii);
    CHECK(packed.out.to_vector<float>() == separate.out.to_vector<float>());
    CHECK(packed.lse.to_vector<float>() == separate.lse.to_vector<float>());
    const std::vector<float> dqkv = flash_attention_packed_backward(qkv, lengths, packed, w, 0.2f, radii).to_vector<float>();
    const FlashAttentionGrads g = flash_attention_backward(q, k, v, lengths, separate, w, 0.2f, radii);
    const std::vector<float> dq = g.dq.to_vector<float>(), dk = g.dk.to_vector<float>(), dv = g.dv.to_vector<float>();
    std::vector<float> expected;
    for (std::int64_t i = 0; i < rows; ++i)
      for (const std::vector<float>* x : {&dq, &dk, &dv})
        expected.insert(expected.end(), x->begin() + i * heads * dh, x->begin() + (i + 1) * heads * dh);
    CHECK(dqkv == expected);
  }
  CHECK_THROWS_WITH_AS(flash_attention_packed(Tensor::zeros({4, 2, 1, 3}), {4}, 1.f), doctest::Contains("[rows, 3, heads, dim]"),
                       topo::Error);
  CHECK_THROWS_WITH_AS(flash_attention_packed(Tensor::zeros({4, 3, 1, 3}), {5}, 1.f), doctest::Contains("lengths sum to 5"),
                       topo::Error);
}

TEST_CASE("flash_attention bands: the banded backward cut into chunks gives the whole head's bits") {
  // flash_attention_backward cuts a sequence's micro-banded heads into chunks (at least 8 radii long) so that
  // one long sequence runs on every thread; each chunk recomputes the queries within the band beyond it. Cuts
  // shorter than the band, and lengths that end chunks mid-vector, against one call over the whole head.
  if (!flash_band::kAvailable) {
    MESSAGE("no AVX-512: the banded micro-kernels are not built here");
    return;
  }
  const std::int64_t len = 701, dk = 30, dv = 17;
  const Tensor q = random_uniform({len, dk}, 41, -2.f, 2.f), k = random_uniform({len, dk}, 42, -2.f, 2.f),
               v = random_uniform({len, dv}, 43), g = random_uniform({len, dv}, 44);
  for (std::int64_t radius : {0, 1, 2, 4, 5, 20, 90}) {
    CAPTURE(radius);
    const flash_band::HeadView h{len, radius, dk, dv, dk, dv, dv, 1};
    flash_band::Scratch w;
    std::vector<float> out(len * dv), lse(len);
    flash_band::forward(h, 0, len, 0.2f, q.data<float>(), k.data<float>(), v.data<float>(), out.data(), lse.data(), w);
    auto backward = [&](std::int64_t chunk) {
      std::vector<float> dq(len * dk, NAN), dkk(len * dk, NAN), dvv(len * dv, NAN);
      for (std::int64_t r0 = 0; r0 < len; r0 += chunk)
        flash_band::backward(h, r0, std::min(chunk, len - r0), 0.2f, q.data<float>(), k.data<float>(), v.data<float>(),
                             out.data(), lse.data(), g.data<float>(), dq.data(), dkk.data(), dvv.data(), w);
      return std::tuple{dq, dkk, dvv};
    };
    const auto whole = backward(len);
    for (std::int64_t chunk : {256, 100, 37, 3}) {
      CAPTURE(chunk);
      const auto cut = backward(chunk);
      CHECK(std::get<0>(cut) == std::get<0>(whole));
      CHECK(std::get<1>(cut) == std::get<1>(whole));
      CHECK(std::get<2>(cut) == std::get<2>(whole));
    }
    // Every row written: no NaN left from the fill.
    for (const auto& grad : {std::get<0>(whole), std::get<1>(whole), std::get<2>(whole)})
      for (float x : grad) REQUIRE(std::isfinite(x));
  }
}

TEST_CASE("flash_attention: bad input is a clear error") {
  const Tensor q = random_uniform({5, 2, 4}, 1);
  CHECK_THROWS_WITH_AS(flash_attention(q, q, q, {2, 2}, 1.f), doctest::Contains("lengths sum to 4"), Error);
  CHECK_THROWS_WITH_AS(flash_attention(q, q, q, {5, 0}, 1.f), doctest::Contains("sequence 1 has length 0"), Error);
  CHECK_THROWS_WITH_AS(flash_attention(q, random_uniform({5, 2, 3}, 2), q, {5}, 1.f), doctest::Contains("differ"),
                       Error);
  CHECK_THROWS_WITH_AS(flash_attention(q, q, q, {2, 3}, 1.f, {1, -1}), doctest::Contains("sequence 1 head 0 has radius -1"),
                       Error);
  CHECK_THROWS_WITH_AS(flash_attention(q, q, q, {2, 3}, 1.f, {1, 1, 1}), doctest::Contains("3 radii for 2 sequences"),
                       Error);
  // Four lengths of 2^62 and a 5 wrapped the sum back to q's 5 rows (then std::bad_alloc, from Python).
  const std::int64_t big = std::int64_t{1} << 62;
  CHECK_THROWS_WITH_AS(flash_attention(q, q, q, {big, big, big, big, 5}, 1.f),
                       doctest::Contains("the lengths overflow int64 at sequence 1"), Error);
}
