// The wrappers compute what their names say: forward values against naive host loops written here.
// (gradcheck alone cannot catch a wrapper that, say, computes x - c for c - x: its backward would agree
// with its own wrong forward.)
#include <cmath>

#include "tests/nn/nn_testing.hpp"

using namespace topo;
using namespace topo::nn;
using topo::nn::testing::leaf;

namespace {
std::vector<float> host(const Var& v) { return v.data().to_vector<float>(); }
}  // namespace

TEST_CASE("binary and scalar wrappers: operand order and broadcasting") {
  const std::int64_t R = 7, C = 33;
  Var a = leaf({R, C}, 81), b = leaf({C}, 82, 0.5f, 2.f);
  const std::vector<float> av = host(a), bv = host(b);
  std::vector<float> s(av.size()), d(av.size()), p(av.size()), q(av.size()), cm(av.size()), cd(av.size());
  for (std::int64_t r = 0; r < R; ++r)
    for (std::int64_t c = 0; c < C; ++c) {
      const std::size_t i = static_cast<std::size_t>(r * C + c);
      s[i] = av[i] - bv[c];
      d[i] = av[i] / bv[c];
      p[i] = av[i] * bv[c];
      q[i] = av[i] + bv[c];
      cm[i] = 2.f - av[i];
      cd[i] = 3.f / bv[c];
    }
  TOPO_CHECK_CLOSE(host(a - b), s, 1e-6, 1e-6);
  TOPO_CHECK_CLOSE(host(a / b), d, 1e-6, 1e-6);
  TOPO_CHECK_CLOSE(host(a * b), p, 1e-6, 1e-6);
  TOPO_CHECK_CLOSE(host(b + a), q, 1e-6, 1e-6);
  TOPO_CHECK_CLOSE(host(2.f - a), cm, 1e-6, 1e-6);
  std::vector<float> cdr(bv.size()), xc(av.size()), xp(av.size());
  for (std::size_t i = 0; i < bv.size(); ++i) cdr[i] = 3.f / bv[i];
  for (std::size_t i = 0; i < av.size(); ++i) {
    xc[i] = av[i] / 4.f;
    xp[i] = av[i] + 0.5f;
  }
  TOPO_CHECK_CLOSE(host(3.f / b), cdr, 1e-6, 1e-6);
  TOPO_CHECK_CLOSE(host(a / 4.f), xc, 1e-6, 1e-6);
  TOPO_CHECK_CLOSE(host(0.5f + a), xp, 1e-6, 1e-6);
  TOPO_CHECK_CLOSE(host(a - 0.5f), host(a + -0.5f), 1e-7, 1e-7);
}

TEST_CASE("matmul wrapper: transpose flags against a naive product") {
  const std::int64_t M = 7, K = 33, N = 5;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      CAPTURE(ta);
      CAPTURE(tb);
      Var a = leaf(ta ? Shape{K, M} : Shape{M, K}, 83), b = leaf(tb ? Shape{N, K} : Shape{K, N}, 84);
      const std::vector<float> av = host(a), bv = host(b);
      std::vector<float> expected(static_cast<std::size_t>(M * N));
      for (std::int64_t m = 0; m < M; ++m)
        for (std::int64_t n = 0; n < N; ++n) {
          double acc = 0;
          for (std::int64_t k = 0; k < K; ++k)
            acc += double(av[ta ? k * M + m : m * K + k]) * bv[tb ? n * K + k : k * N + n];
          expected[m * N + n] = static_cast<float>(acc);
        }
      Var c = matmul(a, b, ta, tb);
      CHECK(c.shape() == Shape{M, N});
      TOPO_CHECK_CLOSE(host(c), expected, 1e-5, 1e-5);
    }
}

TEST_CASE("reductions, softmax and layer_norm wrappers against host loops") {
  const std::int64_t R = 7, C = 33;
  Var x = leaf({R, C}, 85, -3.f, 3.f);
  const std::vector<float> xv = host(x);
  std::vector<float> row_max(R), row_mean(R), col_sum(C, 0.f), soft(xv.size()), norm(xv.size());
  double total = 0;
  for (std::int64_t r = 0; r < R; ++r) {
    float mx = -INFINITY;
    double sum = 0, z = 0;
    for (std::int64_t c = 0; c < C; ++c) {
      const float v = xv[r * C + c];
      mx = std::max(mx, v);
      sum += v;
      col_sum[c] += v;
    }
    for (std::int64_t c = 0; c < C; ++c) z += std::exp(double(xv[r * C + c]) - mx);
    double var = 0;
    const double mu = sum / C;
    for (std::int64_t c = 0; c < C; ++c) var += (xv[r * C + c] - mu) * (xv[r * C + c] - mu);
    var /= C;
    for (std::int64_t c = 0; c < C; ++c) {
      soft[r * C + c] = static_cast<float>(std::exp(double(xv[r * C + c]) - mx) / z);
      norm[r * C + c] = static_cast<float>((xv[r * C + c] - mu) / std::sqrt(var + 1e-5));
    }
    row_max[r] = mx;
    row_mean[r] = static_cast<float>(mu);
    total += sum;
  }
  Var m = max(x, 1, true);
  CHECK(m.shape() == Shape{R, 1});
  TOPO_CHECK_CLOSE(host(m), row_max, 1e-7, 1e-7);
  TOPO_CHECK_CLOSE(host(mean(x, -1)), row_mean, 1e-6, 1e-5);
  TOPO_CHECK_CLOSE(host(sum(x, 0)), col_sum, 1e-5, 1e-5);
  CHECK(sum_all(x).item() == doctest::Approx(total).epsilon(1e-5));
  CHECK(mean_all(x).item() == doctest::Approx(total / (R * C)).epsilon(1e-5));
  TOPO_CHECK_CLOSE(host(softmax(x)), soft, 1e-6, 1e-5);
  std::vector<float> log_soft(soft.size());
  for (std::size_t i = 0; i < soft.size(); ++i) log_soft[i] = std::log(soft[i]);
  TOPO_CHECK_CLOSE(host(log_softmax(x)), log_soft, 1e-5, 1e-5);
  TOPO_CHECK_CLOSE(host(layer_norm(x, Var(), Var())), norm, 1e-4, 1e-4);
}

TEST_CASE("indexing wrappers and losses against host loops") {
  Var w = leaf({7, 3}, 86);
  const std::vector<float> wv = host(w);
  const std::vector<std::int64_t> idv{6, 0, 6, 2};
  const Tensor ids = Tensor::from_vector(idv, {4});
  std::vector<float> gathered;
  for (std::int64_t id : idv)
    for (int c = 0; c < 3; ++c) gathered.push_back(wv[id * 3 + c]);
  TOPO_CHECK_CLOSE(host(embedding(w, ids)), gathered, 1e-7, 1e-7);
  TOPO_CHECK_CLOSE(host(index_select(w, ids)), gathered, 1e-7, 1e-7);

  // split then concat in another order: pieces are the consecutive slices of the input.
  std::vector<Var> parts = split(w, {2, 5}, 0);
  REQUIRE(parts.size() == 2);
  std::vector<float> swapped(wv.begin() + 6, wv.end());
  swapped.insert(swapped.end(), wv.begin(), wv.begin() + 6);
  TOPO_CHECK_CLOSE(host(concat({parts[1], parts[0]}, 0)), swapped, 1e-7, 1e-7);

  // mse(pred, target) = mean (pred - target)^2; cross_entropy = mean over kept rows of logsumexp - logit[t].
  Var t = leaf({7, 3}, 87);
  const std::vector<float> tv = host(t);
  double se = 0;
  for (std::size_t i = 0; i < wv.size(); ++i) se += (wv[i] - tv[i]) * (wv[i] - tv[i]);
  CHECK(mse(w, t).item() == doctest::Approx(se / wv.size()).epsilon(1e-5));
  const std::vector<std::int64_t> tg{2, -100, 0, 1, -100, 1, 2};
  double ce = 0;
  int kept = 0;
  for (int r = 0; r < 7; ++r) {
    if (tg[r] == -100) continue;
    double z = 0;
    for (int c = 0; c < 3; ++c) z += std::exp(double(wv[r * 3 + c]));
    ce += std::log(z) - wv[r * 3 + tg[r]];
    ++kept;
  }
  CHECK(cross_entropy(w, Tensor::from_vector(tg, {7})).item() == doctest::Approx(ce / kept).epsilon(1e-5));
}
