#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/dense/loss.hpp"
#include "kernels/dense/loss_math.hpp"
#include "kernels/dense/reference.hpp"
#include "kernels/threads.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using topo::testing::kAwkwardSizes;

using topo::testing::error_of;

namespace {

// Central differences of `f` at x, in double (perturbing one float element at a time).
template <class F>
std::vector<float> numeric_grad(std::vector<float> x, F&& f, float h) {
  std::vector<float> g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float keep = x[i];
    x[i] = keep + h;
    const double up = f(x);
    x[i] = keep - h;
    const double down = f(x);
    x[i] = keep;
    g[i] = float((up - down) / (double(keep + h) - double(keep - h)));
  }
  return g;
}

Tensor scalar(float v) { return Tensor::from_vector(std::vector<float>{v}, {}); }

}  // namespace

TEST_CASE("cross_entropy matches the double reference at awkward sizes, with ignored rows") {
  for (std::int64_t n : kAwkwardSizes) {
    for (std::int64_t c : {std::int64_t{1}, std::int64_t{7}, std::int64_t{33}, std::int64_t{257}}) {
      for (std::int64_t ignore : {std::int64_t{-100}, std::int64_t{0}}) {
        CAPTURE(n);
        CAPTURE(c);
        CAPTURE(ignore);
        Tensor logits = topo::testing::random_uniform({n, c}, n * c, -4.f, 4.f);
        std::vector<std::int64_t> t = topo::testing::random_ids({n}, c, n + c).to_vector<std::int64_t>();
        for (std::int64_t r = 0; r < n; r += 3) t[r] = ignore;  // every third row ignored
        Tensor targets = Tensor::from_vector(t, {n});
        Tensor loss = cross_entropy(logits, targets, ignore);
        CHECK(loss.shape().empty());  // 0-d
        const double expected = reference::cross_entropy(logits.to_vector<float>(), t, n, c, ignore);
        CHECK(loss.item() == doctest::Approx(expected).epsilon(1e-5));
      }
    }
  }
}

TEST_CASE("cross_entropy is stable for large logits; all rows ignored gives 0") {
  std::vector<float> x = {1000.f, 999.f, 998.f, -1000.f, -1001.f, -999.f};
  Tensor logits = Tensor::from_vector(x, {2, 3});
  const std::vector<std::int64_t> t = {1, 2};
  const float loss = cross_entropy(logits, Tensor::from_vector(t, {2})).item();
  CHECK(std::isfinite(loss));
  CHECK(loss == doctest::Approx(reference::cross_entropy(x, t, 2, 3, -100)).epsilon(1e-5));
  const std::vector<std::int64_t> none = {-100, -100};
  CHECK(cross_entropy(logits, Tensor::from_vector(none, {2})).item() == 0.f);
  const std::vector<float> g =
      cross_entropy_backward(scalar(1.f), logits, Tensor::from_vector(none, {2})).to_vector<float>();
  CHECK(g == std::vector<float>(6, 0.f));
  CHECK(cross_entropy(Tensor::empty({0, 4}), Tensor::from_vector(std::vector<std::int64_t>{}, {0})).item() == 0.f);
}

TEST_CASE("cross_entropy_backward matches central differences of the reference loss") {
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{7}, std::int64_t{31}}) {
    for (std::int64_t c : {std::int64_t{1}, std::int64_t{7}, std::int64_t{33}}) {
      CAPTURE(n);
      CAPTURE(c);
      Tensor logits = topo::testing::random_uniform({n, c}, 3 * n + c, -3.f, 3.f);
      std::vector<std::int64_t> t = topo::testing::random_ids({n}, c, n * c).to_vector<std::int64_t>();
      if (n > 1) t[1] = -100;
      Tensor targets = Tensor::from_vector(t, {n});
      const float g = 0.7f;
      const std::vector<float> dx = cross_entropy_backward(scalar(g), logits, targets).to_vector<float>();
      std::vector<float> numeric = numeric_grad(
          logits.to_vector<float>(), [&](const std::vector<float>& x) { return reference::cross_entropy(x, t, n, c, -100); }, 1e-2f);
      for (float& v : numeric) v *= g;
      TOPO_CHECK_CLOSE(dx, numeric, 1e-4, 1e-3);
      if (n > 1) {
        bool zero_row = true;
        for (std::int64_t j = 0; j < c; ++j) zero_row = zero_row && dx[1 * c + j] == 0.f;
        CHECK(zero_row);
      }
    }
  }
}

TEST_CASE("mse and mse_backward match the reference and central differences") {
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{7}, std::int64_t{31}, std::int64_t{33}, std::int64_t{257},
                         std::int64_t{3 * 4096 + 17}}) {
    CAPTURE(n);
    Tensor p = topo::testing::random_uniform({n, 3}, n), t = topo::testing::random_uniform({n, 3}, n + 1);
    Tensor loss = mse(p, t);
    CHECK(loss.shape().empty());  // 0-d
    CHECK(loss.item() == doctest::Approx(reference::mse(p.to_vector<float>(), t.to_vector<float>())).epsilon(1e-5));
    if (n > 257) continue;  // finite differences are O(n^2): keep them to the small sizes
    const float g = -1.3f;
    const std::vector<float> tv = t.to_vector<float>();
    const std::vector<float> dp = mse_backward(scalar(g), p, t).to_vector<float>();
    std::vector<float> numeric =
        numeric_grad(p.to_vector<float>(), [&](const std::vector<float>& x) { return reference::mse(x, tv); }, 1e-2f);
    for (float& v : numeric) v *= g;
    TOPO_CHECK_CLOSE(dp, numeric, 1e-5, 1e-3);
  }
  CHECK(mse(Tensor::empty({0, 2}), Tensor::empty({0, 2})).item() == 0.f);
}

TEST_CASE("CPU losses do not depend on the number of OpenMP threads") {
  const int saved = num_threads();
  const std::int64_t n = 4099, c = 37;
  Tensor logits = topo::testing::random_uniform({n, c}, 1, -5.f, 5.f);
  Tensor targets = topo::testing::random_ids({n}, c, 2);
  Tensor p = topo::testing::random_uniform({1 << 18}, 3), t = topo::testing::random_uniform({1 << 18}, 4);
  std::vector<float> ce, me;
  std::vector<std::vector<float>> dce;
  for (int threads : {1, 2, 5}) {
    set_num_threads(threads);
    ce.push_back(cross_entropy(logits, targets).item());
    me.push_back(mse(p, t).item());
    dce.push_back(cross_entropy_backward(scalar(1.f), logits, targets).to_vector<float>());
  }
  set_num_threads(saved);
  CHECK(ce[0] == ce[1]);
  CHECK(ce[0] == ce[2]);
  CHECK(me[0] == me[1]);
  CHECK(me[0] == me[2]);
  CHECK(dce[0] == dce[1]);
  CHECK(dce[0] == dce[2]);
}

TEST_CASE("loss errors name the row, value and shapes") {
  Tensor logits = topo::testing::random_uniform({3, 4}, 1);
  std::string e = error_of([&] { (void)cross_entropy(logits, Tensor::from_vector(std::vector<std::int64_t>{0, 3, 4}, {3})); });
  CHECK(e.find("row 2") != std::string::npos);
  CHECK(e.find("is 4") != std::string::npos);
  e = error_of([&] {
    (void)cross_entropy_backward(scalar(1.f), logits, Tensor::from_vector(std::vector<std::int64_t>{-1, 0, 0}, {3}));
  });
  CHECK(e.find("row 0") != std::string::npos);
  CHECK(e.find("-1") != std::string::npos);
  // ignore_index is honoured even when it is a valid class.
  CHECK(error_of([&] { (void)cross_entropy(logits, Tensor::from_vector(std::vector<std::int64_t>{7, 1, 7}, {3}), 7); })
            .empty());
  CHECK_FALSE(error_of([&] { (void)cross_entropy(logits, Tensor::from_vector(std::vector<std::int32_t>{0, 1, 2}, {3})); })
                  .empty());
  e = error_of([&] { (void)cross_entropy(logits, Tensor::from_vector(std::vector<std::int64_t>{0, 1}, {2})); });
  CHECK(e.find("[3, 4]") != std::string::npos);
  CHECK_FALSE(error_of([&] { (void)cross_entropy(logits.reshape({12}), Tensor::arange(12)); }).empty());
  CHECK_FALSE(error_of([&] { (void)cross_entropy_backward(Tensor::empty({2}), logits, Tensor::arange(3)); }).empty());
  e = error_of([&] { (void)mse(Tensor::empty({2, 3}), Tensor::empty({3, 2})); });
  CHECK(e.find("[2, 3]") != std::string::npos);
  CHECK(e.find("[3, 2]") != std::string::npos);
  CHECK_FALSE(error_of([&] { (void)mse_backward(Tensor::empty({2}), Tensor::empty({2}), Tensor::empty({2})); }).empty());
}
