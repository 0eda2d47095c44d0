// Optimizers against naive per-element references of the published update rules (written here in
// double, independently of the fused kernel), clipping, a small regression fit, and the weights' moving average.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "nn/layers.hpp"
#include "nn/optim.hpp"
#include "nn/weight_average.hpp"
#include "tests/nn/nn_testing.hpp"

namespace nn = topo::nn;
using topo::Tensor;

namespace {

struct RefAdam {
  double lr, b1, b2, eps, wd;
  bool decoupled;
  std::vector<double> p, m, v;
  int t = 0;
  void step(const std::vector<float>& g) {
    ++t;
    for (std::size_t i = 0; i < p.size(); ++i) {
      double gi = g[i];
      if (decoupled) p[i] -= lr * wd * p[i];
      else gi += wd * p[i];
      m[i] = b1 * m[i] + (1 - b1) * gi;
      v[i] = b2 * v[i] + (1 - b2) * gi * gi;
      const double mhat = m[i] / (1 - std::pow(b1, t)), vhat = v[i] / (1 - std::pow(b2, t));
      p[i] -= lr * mhat / (std::sqrt(vhat) + eps);
    }
  }
};

std::vector<double> to_double(const Tensor& t) {
  const auto v = t.to_vector<float>();
  return {v.begin(), v.end()};
}
std::vector<float> to_float(const std::vector<double>& v) { return {v.begin(), v.end()}; }

}  // namespace

TEST_CASE("Adam / AdamW: several steps match the reference, incl. bias correction and decay styles") {
  for (std::int64_t n : topo::testing::kAwkwardSizes) {
    for (bool decoupled : {false, true}) {
      for (float wd : {0.f, 0.05f}) {
        CAPTURE(n);
        CAPTURE(decoupled);
        CAPTURE(wd);
        nn::Var p(topo::testing::random_uniform({n}, 1), true);
        nn::AdamOptions o{0.01f, 0.9f, 0.99f, 1e-8f};
        std::unique_ptr<nn::Adam> opt =
            decoupled ? std::make_unique<nn::AdamW>(std::vector<nn::Var>{p}, o, wd)
                      : std::make_unique<nn::Adam>(std::vector<nn::Var>{p}, o, wd);
        CHECK(opt->kind() == (decoupled ? "adamw" : "adam"));
        RefAdam ref{0.01, 0.9, 0.99, 1e-8, wd, decoupled, to_double(p.data()), std::vector<double>(n),
                    std::vector<double>(n)};
        for (int s = 0; s < 6; ++s) {
          const Tensor g = topo::testing::random_uniform({n}, 100 + s, -2.f, 2.f);
          p.set_grad(g);
          opt->step();
          ref.step(g.to_vector<float>());
        }
        TOPO_CHECK_CLOSE(p.data().to_vector<float>(), to_float(ref.p), 1e-6, 1e-5);
        TOPO_CHECK_CLOSE(opt->state()[0][0].buffers[0].to_vector<float>(), to_float(ref.m), 1e-6, 1e-5);
        TOPO_CHECK_CLOSE(opt->state()[0][0].buffers[1].to_vector<float>(), to_float(ref.v), 1e-6, 1e-5);
        CHECK(opt->state()[0][0].step == 6);
      }
    }
  }
}

TEST_CASE("AdamW with no-decay groups: biases and norm weights are not decayed") {
  struct Model : nn::Module {
    std::shared_ptr<nn::Linear> fc;
    std::shared_ptr<nn::LayerNorm> norm;
    Model() {
      fc = register_module("fc", std::make_shared<nn::Linear>(4, 3));
      norm = register_module("norm", std::make_shared<nn::LayerNorm>(3));
    }
  } model;
  model.reset_parameters(5);
  auto groups = nn::split_decay_groups(model.named_parameters(), 0.1f);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].params.size() == 1);
  CHECK(groups[0].params[0].same(model.fc->weight));
  CHECK(groups[1].params.size() == 3);
  CHECK(groups[1].weight_decay == 0.f);

  // With zero gradients, Adam's moment update is 0, so only decay moves a parameter.
  nn::AdamW opt(groups, {0.5f});
  const auto w0 = model.fc->weight.data().to_vector<float>(), b0 = model.fc->bias.data().to_vector<float>();
  for (const auto& v : model.parameters()) {
    nn::Var h = v;
    h.set_grad(Tensor::zeros(v.shape()));
  }
  opt.step();
  std::vector<float> w1(w0);
  for (float& x : w1) x *= 1.f - 0.5f * 0.1f;
  TOPO_CHECK_CLOSE(model.fc->weight.data().to_vector<float>(), w1, 1e-7, 1e-6);
  CHECK(model.fc->bias.data().to_vector<float>() == b0);
  CHECK(model.norm->weight.data().to_vector<float>() == std::vector<float>(3, 1.f));

  // `only`: the weights whose names contain it; a name no weight has is an error listing them.
  auto fc_only = nn::split_decay_groups(model.named_parameters(), 0.1f, "fc.");
  CHECK(fc_only[0].params.size() == 1);
  CHECK(fc_only[1].params.size() == 3);
  CHECK_THROWS_WITH_AS(nn::split_decay_groups(model.named_parameters(), 0.1f, "conv1."),
                       doctest::Contains("fc.weight"), topo::Error);

  // Frozen parameters are left out of the groups.
  nn::Embedding frozen(3, 2, true);
  CHECK(nn::split_decay_groups(frozen.named_parameters(), 0.1f)[0].params.empty());
  // A parameter without a gradient is skipped and its step does not advance.
  nn::Var q(Tensor::full({2}, 1.f), true);
  nn::Adam lone({q}, {0.1f});
  lone.step();
  CHECK(lone.state()[0][0].step == 0);
  CHECK(q.data().to_vector<float>() == std::vector<float>(2, 1.f));
  CHECK_THROWS_AS(nn::Adam(std::vector<nn::Var>{nn::Var(Tensor::zeros({2}), false)}, {}), topo::Error);
  CHECK_THROWS_AS(nn::Adam(std::vector<nn::Var>{q, q}, {}), topo::Error);  // would be stepped twice
}

TEST_CASE("SGD with momentum and L2 matches the reference") {
  for (std::int64_t n : topo::testing::kAwkwardSizes) {
    CAPTURE(n);
    nn::Var p(topo::testing::random_uniform({n}, 3), true);
    nn::SGD opt({p}, {0.1f, 0.9f}, 0.01f);
    std::vector<double> ref = to_double(p.data()), buf(n);
    for (int s = 0; s < 5; ++s) {
      const Tensor g = topo::testing::random_uniform({n}, 200 + s);
      p.set_grad(g);
      opt.step();
      const auto gv = g.to_vector<float>();
      for (std::int64_t i = 0; i < n; ++i) {
        const double gi = gv[i] + 0.01 * ref[i];
        buf[i] = s == 0 ? gi : 0.9 * buf[i] + gi;
        ref[i] -= 0.1 * buf[i];
      }
    }
    TOPO_CHECK_CLOSE(p.data().to_vector<float>(), to_float(ref), 1e-6, 1e-5);
  }
  nn::Var p(Tensor::full({2}, 1.f), true);
  nn::SGD plain({p}, {0.5f});
  CHECK(plain.buffer_names().empty());
  p.set_grad(Tensor::full({2}, 2.f));
  plain.step();
  CHECK(p.data().to_vector<float>() == std::vector<float>{0.f, 0.f});
}

TEST_CASE("clip_grad_norm returns the pre-clip norm and scales only when above max_norm") {
  nn::Var a(Tensor::zeros({3}), true), b(Tensor::zeros({2, 2}), true), c(Tensor::zeros({2}), true);
  const Tensor ga = topo::testing::random_uniform({3}, 7), gb = topo::testing::random_uniform({2, 2}, 8);
  a.set_grad(ga);
  b.set_grad(gb);
  double sq = 0;
  for (float v : ga.to_vector<float>()) sq += double(v) * v;
  for (float v : gb.to_vector<float>()) sq += double(v) * v;
  const double norm = std::sqrt(sq);
  const float got = nn::clip_grad_norm({a, b, c}, static_cast<float>(norm / 2));
  CHECK(got == doctest::Approx(norm).epsilon(1e-6));
  double after = 0;
  for (const nn::Var& v : {a, b})
    for (float x : v.grad().to_vector<float>()) after += double(x) * x;
  CHECK(std::sqrt(after) == doctest::Approx(norm / 2).epsilon(1e-5));
  CHECK(ga.to_vector<float>() != a.grad().to_vector<float>());
  const auto kept = a.grad().to_vector<float>();
  CHECK(nn::clip_grad_norm({a, b}, 100.f) == doctest::Approx(norm / 2).epsilon(1e-5));
  CHECK(a.grad().to_vector<float>() == kept);
  CHECK_THROWS_AS(nn::clip_grad_norm({a}, 0.f), topo::Error);
}

TEST_CASE("Adam fits y = W x + b: loss falls more than 100x") {
  nn::Linear teacher(5, 3), student(5, 3);
  teacher.reset_parameters(1);
  student.reset_parameters(2);
  const nn::Var x(topo::testing::random_uniform({64, 5}, 3));
  const nn::Var y = teacher(x).detach();
  nn::Adam opt(student.parameters(), {0.05f});
  float first = 0.f, last = 0.f;
  for (int s = 0; s < 300; ++s) {
    nn::Var loss = nn::mse(student(x), y);
    if (s == 0) first = loss.item();
    last = loss.item();
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  INFO("first " << first << " last " << last);
  CHECK(first > 0.f);
  CHECK(last < first / 100.f);
}

TEST_CASE("parameter groups: lr_scale and per-group decay apply per group") {
  nn::Var a(Tensor::full({3}, 1.f), true), b(Tensor::full({3}, 1.f), true);
  nn::SGD opt({nn::ParamGroup{{a}, 0.f, 1.f, "full"}, nn::ParamGroup{{b}, 0.5f, 0.25f, "scaled"}}, {0.2f});
  a.set_grad(Tensor::full({3}, 1.f));
  b.set_grad(Tensor::full({3}, 1.f));
  opt.step();
  CHECK(a.data().to_vector<float>() == std::vector<float>(3, 1.f - 0.2f));
  // b: g' = 1 + 0.5 * 1 = 1.5, lr = 0.2 * 0.25 = 0.05.
  TOPO_CHECK_CLOSE(b.data().to_vector<float>(), std::vector<float>(3, 1.f - 0.05f * 1.5f), 1e-7, 1e-6);
  CHECK_THROWS_AS(nn::SGD({nn::ParamGroup{{a}, 0.f, -1.f, "bad"}}, {0.1f}), topo::Error);
}

TEST_CASE("split_lr_groups: named parameters move to groups of their multiplier; Adam steps them at lr x it") {
  nn::Var a(Tensor::full({3}, 1.f), true), b(Tensor::full({2, 2}, 1.f), true), c(Tensor::full({2}, 1.f), true),
      d(Tensor::full({4}, 1.f), true);
  const std::vector<nn::ParamGroup> groups = {{{a, b}, 0.1f, 1.f, "decay"}, {{c, d}, 0.f, 2.f, "no_decay"}};
  const auto split = nn::split_lr_groups(groups, {{b, 0.5f}, {d, 0.5f}, {c, 1.f}});
  REQUIRE(split.size() == 4);
  CHECK(split[0].name == "decay");
  REQUIRE(split[0].params.size() == 1);
  CHECK(split[0].params[0].same(a));
  CHECK(split[1].name == "no_decay");  // a multiplier of 1 leaves c where it was
  REQUIRE(split[1].params.size() == 1);
  CHECK(split[1].params[0].same(c));
  CHECK(split[2].name == "decay lr x0.5");
  CHECK(split[2].params[0].same(b));
  CHECK(split[2].weight_decay == 0.1f);  // the group's decay kept
  CHECK(split[2].lr_scale == 0.5f);
  CHECK(split[3].name == "no_decay lr x0.5");
  CHECK(split[3].lr_scale == 1.f);  // the group's 2 x 0.5
  // Adam's first step moves every entry by lr x scale (the bias-corrected m / sqrt(v) is the gradient's sign).
  nn::Adam opt(split, {.lr = 0.1f});
  for (nn::Var* p : {&a, &b, &c, &d}) p->set_grad(Tensor::full(p->shape(), 1.f));
  opt.step();
  TOPO_CHECK_CLOSE(b.data().to_vector<float>(), std::vector<float>(4, 0.95f), 1e-6, 1e-6);  // L2 goes through the moments
  TOPO_CHECK_CLOSE(d.data().to_vector<float>(), std::vector<float>(4, 0.9f), 1e-6, 1e-6);
  TOPO_CHECK_CLOSE(c.data().to_vector<float>(), std::vector<float>(2, 0.8f), 1e-6, 1e-6);
  // Naming a parameter no group holds, or a negative multiplier, is an error.
  nn::Var stray(Tensor::full({1}, 1.f), true);
  CHECK_THROWS_AS(nn::split_lr_groups(groups, {{stray, 0.5f}}), topo::Error);
  CHECK_THROWS_AS(nn::split_lr_groups(groups, {{a, -1.f}}), topo::Error);
}

TEST_CASE("WeightAverage: the moving average against a double reference, its warm-up, swap and frozen parameters") {
  nn::Var w(Tensor::from_vector<float>({1.f, -2.f, 3.f}, {3}), true);
  nn::Var frozen(Tensor::from_vector<float>({5.f}, {1}), false);
  nn::WeightAverage average({{"w", w}, {"frozen", frozen}}, 0.9f);
  REQUIRE(average.named_averages().size() == 1u);  // the frozen parameter is not averaged
  CHECK(average.named_averages()[0].first == "w");
  std::vector<double> ref = {1.0, -2.0, 3.0};
  for (int n = 0; n < 40; ++n) {
    // The parameter moves (as an optimizer step would), then the average follows at min(0.9, (1 + n) / (10 + n)).
    std::vector<float> p = w.data().to_vector<float>();
    for (std::size_t i = 0; i < p.size(); ++i) p[i] += 0.25f * float(i + 1) * (n % 3 == 0 ? -1.f : 1.f);
    Tensor live = w.data();
    live.copy_from(Tensor::from_vector<float>(p, {3}));
    average.update();
    const double decay = std::min(0.9, (1.0 + n) / (10.0 + n));
    for (std::size_t i = 0; i < p.size(); ++i) ref[i] = decay * ref[i] + (1 - decay) * p[i];
  }
  CHECK(average.updates() == 40);
  const std::vector<float> params = w.data().to_vector<float>();
  const std::vector<float> averaged = average.named_averages()[0].second.to_vector<float>();
  for (std::size_t i = 0; i < 3; ++i) CHECK(averaged[i] == doctest::Approx(ref[i]).epsilon(1e-5));
  CHECK(averaged != params);
  {
    const nn::AveragesInScope in(&average);
    CHECK(average.swapped());
    CHECK(w.data().to_vector<float>() == averaged);
    CHECK(average.named_averages()[0].second.to_vector<float>() == params);
    CHECK_THROWS_AS(average.update(), topo::Error);  // not while swapped
  }
  CHECK(!average.swapped());
  CHECK(w.data().to_vector<float>() == params);
  CHECK(average.named_averages()[0].second.to_vector<float>() == averaged);
  CHECK(frozen.data().to_vector<float>() == std::vector<float>{5.f});
  CHECK_THROWS_AS(nn::WeightAverage({{"w", w}}, 1.f), topo::Error);
  CHECK_THROWS_AS(nn::WeightAverage({{"w", w}}, -0.1f), topo::Error);
}
