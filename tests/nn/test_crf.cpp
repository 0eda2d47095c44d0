// The linear-chain CRF against brute force over every tag path (log Z, NLL, Viterbi, with and without
// constraints) and its gradient against finite differences.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "nn/autograd.hpp"
#include "nn/crf.hpp"
#include "nn/gradcheck.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::nn;

namespace {

// Every path of one sentence: (score, path) by enumeration; -inf scores for forbidden paths.
struct Brute {
  double log_z = -INFINITY;
  std::vector<std::int64_t> best;
  double best_score = -INFINITY;
};

Brute brute_force(const std::vector<float>& e, std::int64_t offset, std::int64_t len, std::int64_t k,
                  const std::vector<float>& tr, const std::vector<float>& st, const std::vector<float>& en,
                  const CrfConstraints& c) {
  Brute b;
  std::vector<std::int64_t> path(static_cast<std::size_t>(len), 0);
  std::vector<double> scores;
  std::function<void(std::int64_t)> rec = [&](std::int64_t t) {
    if (t == len) {
      bool ok = c.start.empty() || c.start[path[0]];
      ok = ok && (c.end.empty() || c.end[path[len - 1]]);
      double s = st[path[0]] + e[(offset + 0) * k + path[0]] + en[path[len - 1]];
      for (std::int64_t i = 1; i < len; ++i) {
        ok = ok && (c.transition.empty() || c.transition[path[i - 1] * k + path[i]]);
        s += tr[path[i - 1] * k + path[i]] + e[(offset + i) * k + path[i]];
      }
      if (!ok) return;
      scores.push_back(s);
      if (s > b.best_score) b.best_score = s, b.best = path;
      return;
    }
    for (std::int64_t j = 0; j < k; ++j) {
      path[t] = j;
      rec(t + 1);
    }
  };
  rec(0);
  double m = -INFINITY, sum = 0;
  for (double s : scores) m = std::max(m, s);
  for (double s : scores) sum += std::exp(s - m);
  b.log_z = m + std::log(sum);
  return b;
}

}  // namespace

TEST_CASE("crf: NLL and Viterbi equal brute force over every path, with and without constraints") {
  const std::int64_t k = 3;
  const std::vector<std::int64_t> lengths = {1, 4, 3};
  const std::int64_t n = 8;
  const Tensor em = topo::testing::random_uniform({n, k}, 1, -2.f, 2.f);
  const Tensor tr = topo::testing::random_uniform({k, k}, 2);
  const Tensor st = topo::testing::random_uniform({k}, 3);
  const Tensor en = topo::testing::random_uniform({k}, 4);
  // Tag 2 may not follow tag 0 nor start a sentence (like I-X after O in IOB2); the gold path respects that.
  CrfConstraints constrained;
  constrained.transition = {1, 1, 0, 1, 1, 1, 1, 1, 1};
  constrained.start = {1, 1, 0};
  constrained.end = {1, 1, 1};
  const std::vector<std::int64_t> gold = {1, 0, 1, 2, 2, 1, 0, 0};
  for (const CrfConstraints& c : {CrfConstraints{}, constrained}) {
    const std::vector<float> e = em.to_vector<float>(), t = tr.to_vector<float>(), s = st.to_vector<float>(),
                             d = en.to_vector<float>();
    double expected = 0.0;
    std::vector<std::int64_t> best;
    std::int64_t offset = 0;
    for (std::int64_t len : lengths) {
      const Brute b = brute_force(e, offset, len, k, t, s, d, c);
      double g = s[gold[offset]] + e[offset * k + gold[offset]] + d[gold[offset + len - 1]];
      for (std::int64_t i = 1; i < len; ++i)
        g += t[gold[offset + i - 1] * k + gold[offset + i]] + e[(offset + i) * k + gold[offset + i]];
      expected += b.log_z - g;
      best.insert(best.end(), b.best.begin(), b.best.end());
      offset += len;
    }
    expected /= double(lengths.size());
    const Var nll = crf_nll(Var(em), Var(tr), Var(st), Var(en), lengths,
                            Tensor::from_vector(gold, {n}), c);
    CHECK(nll.item() == doctest::Approx(expected).epsilon(1e-5));
    CHECK(crf_viterbi(em, tr, st, en, lengths, c) == best);
  }
  // A gold path through a forbidden transition is an error naming the sentence.
  const std::vector<std::int64_t> bad = {1, 0, 2, 2, 2, 1, 0, 0};
  CHECK(topo::testing::error_of([&] {
          crf_nll(Var(em), Var(tr), Var(st), Var(en), lengths, Tensor::from_vector(bad, {n}), constrained);
        }).find("sentence 1") != std::string::npos);
  CHECK(topo::testing::error_of([&] {
          crf_nll(Var(em), Var(tr), Var(st), Var(en), {3, 4}, Tensor::from_vector(gold, {n}));
        }).find("lengths sum to 7") != std::string::npos);
  const std::int64_t big = std::int64_t{1} << 62;  // a sum that wraps back to the emissions' rows
  CHECK(topo::testing::error_of([&] {
          crf_nll(Var(em), Var(tr), Var(st), Var(en), {big, big, big, big, n}, Tensor::from_vector(gold, {n}));
        }).find("lengths overflow int64") != std::string::npos);
}

TEST_CASE("crf: the gradient of the NLL matches finite differences") {
  const std::int64_t k = 4;
  const std::vector<std::int64_t> lengths = {2, 5, 1};
  const std::int64_t n = 8;
  const Tensor gold = Tensor::from_vector(std::vector<std::int64_t>{0, 3, 1, 1, 2, 0, 3, 2}, {n});
  CrfConstraints c;
  c.transition.assign(16, 1);
  c.transition[2 * 4 + 3] = 0;  // 3 never follows 2: its gradient must stay 0
  const auto r = gradcheck(
      [&](const std::vector<Var>& x) { return crf_nll(x[0], x[1], x[2], x[3], lengths, gold, c); },
      {Var(topo::testing::random_uniform({n, k}, 5), true), Var(topo::testing::random_uniform({k, k}, 6), true),
       Var(topo::testing::random_uniform({k}, 7), true), Var(topo::testing::random_uniform({k}, 8), true)});
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("crf: the NLL without grad (an evaluation's loss) is the NLL with it, bit for bit") {
  // Without grad the marginals are skipped (alpha alone gives log Z); the value must not move.
  const std::int64_t k = 5;
  const std::vector<std::int64_t> lengths = {3, 7, 1, 4};
  const std::int64_t n = 15;
  const Tensor gold = Tensor::from_vector(std::vector<std::int64_t>{0, 3, 1, 1, 2, 0, 4, 2, 3, 3, 0, 1, 4, 4, 2}, {n});
  const Var e(topo::testing::random_uniform({n, k}, 9), true), tr(topo::testing::random_uniform({k, k}, 10), true),
      st(topo::testing::random_uniform({k}, 11), true), en(topo::testing::random_uniform({k}, 12), true);
  const Var with_grad = crf_nll(e, tr, st, en, lengths, gold, {});
  REQUIRE(with_grad.requires_grad());
  float without = 0;
  {
    NoGradGuard no_grad;
    const Var loss = crf_nll(e, tr, st, en, lengths, gold, {});
    CHECK_FALSE(loss.requires_grad());
    without = loss.data().item();
  }
  CHECK(without == with_grad.data().item());
  // Inputs that need no grad take the same path as no grad at all.
  CHECK(crf_nll(Var(e.data()), Var(tr.data()), Var(st.data()), Var(en.data()), lengths, gold, {}).data().item() == without);
}
