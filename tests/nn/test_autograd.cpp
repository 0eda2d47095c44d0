// Tape mechanics: accumulation, fan-out, grad mode, detach, deep chains, release of the tape, errors.
// Uses only ops that need no other kernel than unary, plus a host-loop op defined here through the public
// make_output (the way later ops extend the tape).
#include <algorithm>
#include <cmath>

#include "kernels/dense/unary.hpp"
#include "nn/autograd.hpp"
#include "tests/nn/nn_testing.hpp"

using namespace topo;
using namespace topo::nn;
using topo::nn::testing::leaf;

namespace {
// out = a + b for equal shapes, with loops on the host. Its backward hands the same tensor to both inputs,
// which the engine must not let alias.
Var host_add(const Var& a, const Var& b) {
  REQUIRE(a.shape() == b.shape());
  Tensor out = Tensor::empty(a.shape());
  const float *ap = a.data().data<float>(), *bp = b.data().data<float>();
  float* op = out.data<float>();
  for (std::int64_t i = 0; i < out.numel(); ++i) op[i] = ap[i] + bp[i];
  return make_output(
      out, {a, b},
      [](const Tensor& g, const std::vector<bool>& needs) {
        return std::vector<Tensor>{needs[0] ? g : Tensor(), needs[1] ? g : Tensor()};
      },
      "host_add");
}

std::vector<float> filled(std::int64_t n, float v) { return std::vector<float>(static_cast<std::size_t>(n), v); }
Tensor ones_like(const Var& v) { return Tensor::full(v.shape(), 1.f); }
}  // namespace

TEST_CASE("gradients accumulate on leaves across backward calls; zero_grad forgets them") {
  Var x = leaf({7, 3}, 1);
  CHECK_FALSE(x.grad().defined());
  Var y = mul_scalar(x, 3.f);
  y.backward(ones_like(y), /*retain_graph=*/true);
  TOPO_CHECK_CLOSE(x.grad().to_vector<float>(), filled(21, 3.f), 1e-6, 0);
  y.backward(ones_like(y));
  TOPO_CHECK_CLOSE(x.grad().to_vector<float>(), filled(21, 6.f), 1e-6, 0);
  // A fresh graph adds onto the same leaf.
  mul_scalar(x, -1.f).backward(ones_like(x));
  TOPO_CHECK_CLOSE(x.grad().to_vector<float>(), filled(21, 5.f), 1e-6, 0);
  x.zero_grad();
  CHECK_FALSE(x.grad().defined());
}

TEST_CASE("a Var used twice receives the sum of both gradients") {
  Var x = leaf({33}, 2);
  SUBCASE("leaf used twice in one op") {
    host_add(x, x).backward(ones_like(x));
    TOPO_CHECK_CLOSE(x.grad().to_vector<float>(), filled(33, 2.f), 1e-6, 0);
  }
  SUBCASE("interior Var feeding two paths") {
    Var h = tanh(x);
    host_add(h, mul_scalar(h, 3.f)).backward(ones_like(x));
    const std::vector<float> xs = x.data().to_vector<float>();
    std::vector<float> expected;
    for (float v : xs) expected.push_back(4.f * (1.f - std::tanh(v) * std::tanh(v)));
    TOPO_CHECK_CLOSE(x.grad().to_vector<float>(), expected, 1e-6, 1e-5);
  }
  SUBCASE("two leaves given the same gradient tensor do not alias") {
    Var a = leaf({5}, 3), b = leaf({5}, 4);
    Var y = host_add(a, b);
    y.backward(ones_like(y), true);
    CHECK_FALSE(a.grad().shares_storage_with(b.grad()));
    y.backward(ones_like(y));
    TOPO_CHECK_CLOSE(a.grad().to_vector<float>(), filled(5, 2.f), 1e-6, 0);
    TOPO_CHECK_CLOSE(b.grad().to_vector<float>(), filled(5, 2.f), 1e-6, 0);
  }
}

namespace {
// y = x (values copied); its backward returns `grad_for_x` (a tensor of ones the caller may keep), or, when
// that is undefined, a fresh tensor of ones whose data pointer goes to *fresh.
Var pass_with(const Var& x, Tensor grad_for_x, const void** fresh) {
  return make_output(
      x.data().clone(), {x},
      [grad_for_x, fresh](const Tensor& g, const std::vector<bool>&) {
        if (grad_for_x.defined()) return std::vector<Tensor>{grad_for_x};
        Tensor out = Tensor::full(g.shape(), 1.f);
        *fresh = out.raw_data();
        return std::vector<Tensor>{out};
      },
      "pass_with");
}
}  // namespace

TEST_CASE("a gradient nothing else holds is kept without a copy; one somebody holds is copied, never written") {
  Var x = leaf({9}, 9);
  SUBCASE("fresh gradient of a leaf: kept as it is") {
    const void* fresh = nullptr;
    pass_with(x, Tensor(), &fresh).backward(Tensor::full({9}, 1.f));
    REQUIRE(fresh != nullptr);
    CHECK(x.grad().raw_data() == fresh);
    TOPO_CHECK_CLOSE(x.grad().to_vector<float>(), filled(9, 1.f), 1e-6, 0);
  }
  SUBCASE("a gradient the op keeps: the leaf gets a copy, and accumulating into it leaves the op's intact") {
    const Tensor kept = Tensor::full({9}, 1.f);
    Var y = pass_with(x, kept, nullptr);
    y.backward(Tensor::full({9}, 1.f), /*retain_graph=*/true);
    CHECK_FALSE(x.grad().shares_storage_with(kept));
    y.backward(Tensor::full({9}, 1.f));
    TOPO_CHECK_CLOSE(x.grad().to_vector<float>(), filled(9, 2.f), 1e-6, 0);
    TOPO_CHECK_CLOSE(kept.to_vector<float>(), filled(9, 1.f), 1e-6, 0);
  }
  SUBCASE("interior Var: a kept first contribution is copied before the second is added") {
    const Tensor kept = Tensor::full({9}, 1.f);
    Var h = tanh(x);
    host_add(pass_with(h, kept, nullptr), mul_scalar(h, 3.f)).backward(Tensor::full({9}, 1.f));
    TOPO_CHECK_CLOSE(kept.to_vector<float>(), filled(9, 1.f), 1e-6, 0);
    std::vector<float> expected;
    for (float v : x.data().to_vector<float>()) expected.push_back(4.f * (1.f - std::tanh(v) * std::tanh(v)));
    TOPO_CHECK_CLOSE(x.grad().to_vector<float>(), expected, 1e-6, 1e-5);
  }
  SUBCASE("interior Var: fresh contributions are summed in place") {
    const void* fresh = nullptr;
    Var h = tanh(x);
    host_add(pass_with(h, Tensor(), &fresh), pass_with(h, Tensor(), &fresh)).backward(Tensor::full({9}, 1.f));
    std::vector<float> expected;
    for (float v : x.data().to_vector<float>()) expected.push_back(2.f * (1.f - std::tanh(v) * std::tanh(v)));
    TOPO_CHECK_CLOSE(x.grad().to_vector<float>(), expected, 1e-6, 1e-5);
  }
}

TEST_CASE("no-grad scope records nothing and restores the previous mode") {
  Var x = leaf({4}, 5);
  CHECK(grad_enabled());
  {
    NoGradGuard guard;
    CHECK_FALSE(grad_enabled());
    {
      NoGradGuard nested;
      CHECK_FALSE(grad_enabled());
    }
    CHECK_FALSE(grad_enabled());
    Var y = tanh(x);
    CHECK_FALSE(y.requires_grad());
    CHECK(y.is_leaf());
    CHECK_THROWS_AS(y.backward(ones_like(y)), Error);
  }
  CHECK(grad_enabled());
  CHECK(tanh(x).requires_grad());
}

TEST_CASE("detach shares data and cuts history") {
  Var x = leaf({6}, 6);
  Var d = tanh(x).detach();
  CHECK(d.is_leaf());
  CHECK_FALSE(d.requires_grad());
  Var h = exp(x);
  CHECK(h.detach().data().shares_storage_with(h.data()));
  // Only the undetached path reaches x: d(x + tanh(x).detach())/dx = 1.
  host_add(x, d).backward(ones_like(x));
  TOPO_CHECK_CLOSE(x.grad().to_vector<float>(), filled(6, 1.f), 1e-6, 0);
}

TEST_CASE("requires_grad propagates from any input and only leaves may change it") {
  Var x = leaf({3}, 7);
  Var c(topo::testing::random_uniform({3}, 8));
  CHECK_FALSE(c.requires_grad());
  CHECK(c.is_leaf());
  Var y = host_add(c, x);
  CHECK(y.requires_grad());
  CHECK_FALSE(y.is_leaf());
  CHECK(y.op_name() == "host_add");
  CHECK_FALSE(host_add(c, c).requires_grad());
  CHECK(host_add(c, c).is_leaf());
  y.backward(ones_like(y));
  CHECK_FALSE(c.grad().defined());  // a constant input gets no gradient
  CHECK(x.grad().defined());
  CHECK_THROWS_AS(y.set_requires_grad(false), Error);
  CHECK_THROWS_AS(Var(Tensor::arange(3), true), Error);  // int64 cannot require grad
  Var ids(Tensor::arange(3));
  CHECK_THROWS_AS(ids.set_requires_grad(), Error);
  c.set_requires_grad();
  CHECK(host_add(c, c).requires_grad());
}

TEST_CASE("a chain of 10000 ops runs backward (and is destroyed) without recursion") {
  Var x = leaf({3}, 9);
  Var y = x;
  // 10000 negations: an even count, so dy/dx = 1.
  for (int i = 0; i < 10000; ++i) y = neg(y);
  y.backward(ones_like(y));
  TOPO_CHECK_CLOSE(x.grad().to_vector<float>(), filled(3, 1.f), 1e-6, 0);
  // A longer chain never backpropagated must also be freed without deep recursion.
  Var z = x;
  for (int i = 0; i < 100000; ++i) z = mul_scalar(z, 1.f);
  z = Var();
  CHECK(x.requires_grad());
}

TEST_CASE("backward errors: non-scalar without grad_output, wrong grad_output, released tape") {
  Var x = leaf({2, 3}, 10);
  Var y = tanh(x);
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("[2, 3]"), Error);
  CHECK_THROWS_AS(y.backward(Tensor::full({3, 2}, 1.f)), Error);
  CHECK_THROWS_AS(y.backward(Tensor::arange(6).reshape({2, 3})), Error);
  y.backward(ones_like(y));
  CHECK_THROWS_WITH_AS(y.backward(ones_like(y)), doctest::Contains("retain_graph"), Error);
  CHECK_THROWS_AS(Var().backward(), Error);

  // A one-element output seeds 1.
  Var s = leaf({1}, 11);
  Var t = mul_scalar(s, 2.5f);
  t.backward();
  CHECK(s.grad().item() == 2.5f);
}

TEST_CASE("retain_grad keeps an interior gradient; a leaf root receives the seed") {
  Var x = leaf({4}, 12);
  Var h = mul_scalar(x, 2.f);
  h.retain_grad();
  Var y = mul_scalar(h, 5.f);
  y.backward(ones_like(y));
  TOPO_CHECK_CLOSE(h.grad().to_vector<float>(), filled(4, 5.f), 1e-6, 0);
  TOPO_CHECK_CLOSE(x.grad().to_vector<float>(), filled(4, 10.f), 1e-6, 0);
  Var leaf_root = leaf({1}, 13);
  leaf_root.backward();
  CHECK(leaf_root.grad().item() == 1.f);
}

TEST_CASE("gradcheck catches a wrong backward and names the worst element") {
  // out = 3 * x, with a backward that is right except for element 4 of the input.
  auto faulty = [](const std::vector<Var>& in) {
    Var x = in[0];
    Tensor out = unary(UnaryOp::Scale, x.data(), 3.f);
    return make_output(
        out, {x},
        [](const Tensor& g, const std::vector<bool>&) {
          Tensor dx = unary(UnaryOp::Scale, g, 3.f);
          dx.data<float>()[4] *= 1.5f;
          return std::vector<Tensor>{dx};
        },
        "faulty");
  };
  Var x = leaf({7}, 14);
  GradcheckResult r = gradcheck(faulty, {x});
  CHECK_FALSE(r.ok);
  CHECK(r.input == 0);
  CHECK(r.index == 4);
  CHECK(r.checked == 7);
  CHECK(r.message.find("FAILED") != std::string::npos);
  // The caller's Var is untouched by the perturbations and gets no gradient.
  CHECK_FALSE(x.grad().defined());

  GradcheckResult good = gradcheck([](const std::vector<Var>& in) { return mul_scalar(in[0], 3.f); }, {x});
  CHECK(good.ok);
  CHECK(good.numeric == doctest::Approx(good.analytic).epsilon(1e-2));
  // Nothing to check is reported rather than silently passing.
  CHECK_FALSE(gradcheck([](const std::vector<Var>& in) { return tanh(in[0]); }, {x.detach()}).ok);
}

TEST_CASE("autograd: a backward observer sees each leaf once, when its gradient is final") {
  // a feeds three nodes (two of them late in the chain); b one; c none of this graph.
  const Var a(Tensor::from_vector(std::vector<float>{1.f, 2.f}, {2}), true);
  const Var b(Tensor::from_vector(std::vector<float>{3.f, 4.f}, {2}), true);
  const Var c(Tensor::from_vector(std::vector<float>{5.f, 6.f}, {2}), true);
  struct Recorder final : BackwardObserver {
    std::vector<std::pair<const VarImpl*, std::vector<float>>> seen;  // the grad at the time of the call
    int nodes = 0;
    std::vector<const VarImpl*> reachable;
    void backward_begins(const std::vector<const VarImpl*>& leaves) override {
      CHECK(nodes == 0);  // before any node
      reachable = leaves;
    }
    void leaf_ready(VarImpl& v) override {
      seen.emplace_back(&v, v.grad.defined() ? v.grad.to_vector<float>() : std::vector<float>{});
    }
    void after_node() override { ++nodes; }
  } recorder;
  const Var x = host_add(a, b);
  const Var y = host_add(x, a);
  const Var z = host_add(y, a);
  {
    BackwardObserverScope watch(recorder);
    z.backward(Tensor::full({2}, 1.f));
  }
  CHECK(recorder.nodes == 3);
  CHECK(recorder.reachable.size() == 2u);  // a and b; c is not part of this graph
  CHECK(std::count(recorder.reachable.begin(), recorder.reachable.end(), c.impl().get()) == 0);
  REQUIRE(recorder.seen.size() == 2u);
  // Reverse order: a's last use (the first node of the chain) comes last, with b; both grads are final then.
  for (const auto& [impl, grad] : recorder.seen) {
    CHECK((impl == a.impl().get() || impl == b.impl().get()));
    CHECK(grad == (impl == a.impl().get() ? std::vector<float>{3.f, 3.f} : std::vector<float>{1.f, 1.f}));
  }
  CHECK(!c.grad().defined());
  // Without a scope nothing is observed.
  const Var w = host_add(Var(Tensor::full({1}, 1.f), true), Var(Tensor::full({1}, 2.f), true));
  w.backward(Tensor::full({1}, 1.f));
  CHECK(recorder.nodes == 3);
}
