// Gradients of the ops over the binary, reduce, softmax, layer_norm, gemm and flash attention kernels, against finite
// differences at awkward shapes (1, 7, 33 along dims), broadcasting and keepdim included.
#include <algorithm>
#include <numeric>
#include <random>

#include "tests/nn/nn_testing.hpp"

using namespace topo;
using namespace topo::nn;
using topo::nn::testing::leaf;
using topo::nn::testing::leaf_away_from_zero;

namespace {
using Inputs = std::vector<Var>;

// Values that are pairwise at least 0.01 apart (a shuffled arithmetic sequence), so central differences
// with eps = 1e-3 never swap the arg-max.
Var distinct_leaf(const Shape& shape, std::uint64_t seed) {
  std::vector<float> v(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.01f * static_cast<float>(i) - 0.005f * v.size();
  std::shuffle(v.begin(), v.end(), std::mt19937(static_cast<unsigned>(seed)));
  return Var(Tensor::from_vector(v, shape), true);
}
}  // namespace

TEST_CASE("add/sub/mul/div: gradcheck with broadcasting") {
  const std::pair<Shape, Shape> cases[] = {
      {{7, 33}, {7, 33}}, {{7, 33}, {33}}, {{33}, {7, 33}}, {{1, 33}, {7, 1}},
      {{33, 1, 7}, {7}},  {{1}, {7, 1}},   {{7, 1, 1}, {1, 7, 33}},
  };
  for (const auto& [sa, sb] : cases) {
    TOPO_CAPTURE(shape_str(sa));
    TOPO_CAPTURE(shape_str(sb));
    Var a = leaf(sa, 31), b = leaf(sb, 32);
    Var positive_b = leaf(sb, 33, 0.5f, 2.f);
    TOPO_GRADCHECK([](const Inputs& x) { return add(x[0], x[1]); }, {a, b});
    TOPO_GRADCHECK([](const Inputs& x) { return sub(x[0], x[1]); }, {a, b});
    TOPO_GRADCHECK([](const Inputs& x) { return mul(x[0], x[1]); }, {a, b});
    TOPO_GRADCHECK([](const Inputs& x) { return div(x[0], x[1]); }, {a, positive_b});
    // Broadcast gradients have their input's shape.
    Var y = mul(a, b);
    y.backward(Tensor::full(y.shape(), 1.f));
    CHECK(a.grad().shape() == sa);
    CHECK(b.grad().shape() == sb);
  }
  CHECK_THROWS_AS(add(leaf({7, 3}, 1), leaf({7, 4}, 2)), Error);
}

TEST_CASE("binary ops with one side constant, and a Var multiplied by itself") {
  Var a = leaf({7, 33}, 34);
  Var c(topo::testing::random_uniform({33}, 35, 0.5f, 2.f));  // not requiring grad: held constant
  TOPO_GRADCHECK([](const Inputs& x) { return div(x[1], x[0]); }, {c, leaf({7, 33}, 36, 0.5f, 2.f)});
  TOPO_GRADCHECK([](const Inputs& x) { return mul(x[0], x[1]); }, {a, c});
  TOPO_GRADCHECK([](const Inputs& x) { return x[0] * x[0] * x[0]; }, {leaf({7}, 37)});
}

TEST_CASE("scalar operators: gradcheck") {
  using Fn = Var (*)(const Var&);
  const std::pair<const char*, Fn> ops[] = {
      {"add_scalar", [](const Var& x) { return add_scalar(x, 0.7f); }},
      {"x+c", [](const Var& x) { return x + 2.f; }},
      {"c+x", [](const Var& x) { return 2.f + x; }},
      {"x-c", [](const Var& x) { return x - 1.f; }},
      {"c-x", [](const Var& x) { return 1.f - x; }},
      {"c/x", [](const Var& x) { return 2.f / x; }},
  };
  for (const auto& [name, op] : ops) {
    TOPO_CAPTURE(name);
    TOPO_GRADCHECK([op = op](const Inputs& x) { return op(x[0]); }, {leaf({7, 33}, 38, 0.5f, 2.f)});
  }
  TOPO_GRADCHECK([](const Inputs& x) { return (x[0] + x[1]) * x[0] - x[1] / x[0]; },
                 {leaf({33}, 39, 0.5f, 2.f), leaf({33}, 40)});
}

TEST_CASE("matmul: gradcheck, 2-D with every transpose combination, batched and shared b") {
  const std::int64_t M = 7, K = 33, N = 1;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      CAPTURE(ta);
      CAPTURE(tb);
      Var a = leaf(ta ? Shape{K, M} : Shape{M, K}, 41), b = leaf(tb ? Shape{N, K} : Shape{K, N}, 42);
      TOPO_GRADCHECK([ta, tb](const Inputs& x) { return matmul(x[0], x[1], ta, tb); }, {a, b});
      Var ba = leaf(ta ? Shape{3, 5, 7} : Shape{3, 7, 5}, 43), bb = leaf(tb ? Shape{3, 4, 5} : Shape{3, 5, 4}, 44);
      TOPO_GRADCHECK([ta, tb](const Inputs& x) { return matmul(x[0], x[1], ta, tb); }, {ba, bb});
    }
    // Batched a against a shared 2-D b.
    Var a3 = leaf({3, 7, 5}, 45), b2 = leaf(ta ? Shape{4, 5} : Shape{5, 4}, 46);
    TOPO_GRADCHECK([ta](const Inputs& x) { return matmul(x[0], x[1], false, ta); }, {a3, b2});
  }
  CHECK_THROWS_AS(matmul(leaf({3, 5, 7}, 1), leaf({5, 4}, 2), true, false), Error);
  CHECK_THROWS_AS(matmul(leaf({7, 5}, 1), leaf({4, 3}, 2)), Error);
}

TEST_CASE("linear: gradcheck of x, weight and bias, and the same values as matmul + add") {
  Var x = leaf({7, 33}, 47), w = leaf({5, 33}, 48), b = leaf({5}, 49);
  TOPO_GRADCHECK([](const Inputs& v) { return linear(v[0], v[1], v[2]); }, {x, w, b});
  const std::vector<float> fused = linear(x, w, b).data().to_vector<float>();
  const std::vector<float> composed = add(matmul(x, w, false, true), b).data().to_vector<float>();
  REQUIRE(fused.size() == composed.size());
  for (std::size_t i = 0; i < fused.size(); ++i) CHECK(fused[i] == doctest::Approx(composed[i]).epsilon(1e-5));
}

TEST_CASE("linear_rows: linear of the parts' concatenation without it, values and every gradient; gradcheck") {
  // Parts of 7, 0 and 3 rows (an empty node type), with and without a bias.
  for (bool biased : {true, false}) {
    CAPTURE(biased);
    Var x0 = leaf({7, 33}, 71), x1 = leaf({0, 33}, 72), x2 = leaf({3, 33}, 73), w = leaf({5, 33}, 74);
    Var b = biased ? leaf({5}, 75) : Var();
    const Var rows = linear_rows({x0, x1, x2}, w, b);
    const Var cat = concat({x0, x1, x2}, 0);
    const Var want = biased ? linear(cat, w, b) : matmul(cat, w, false, true);
    TOPO_CHECK_CLOSE(rows.data().to_vector<float>(), want.data().to_vector<float>(), 1e-6, 1e-5);
    const Tensor seed = topo::testing::random_uniform({10, 5}, 76);
    rows.backward(seed);
    std::vector<std::vector<float>> first;
    for (Var* v : {&x0, &x2, &w}) first.push_back(v->grad().to_vector<float>());
    if (biased) first.push_back(b.grad().to_vector<float>());
    for (Var* v : {&x0, &x1, &x2, &w, &b})
      if (v->defined()) v->zero_grad();
    want.backward(seed);
    std::size_t i = 0;
    for (Var* v : {&x0, &x2, &w}) TOPO_CHECK_CLOSE(v->grad().to_vector<float>(), first[i++], 1e-5, 1e-5);
    if (biased) TOPO_CHECK_CLOSE(b.grad().to_vector<float>(), first[i], 1e-5, 1e-5);
  }
  TOPO_GRADCHECK([](const Inputs& v) { return linear_rows({v[0], v[1]}, v[2], v[3]); },
                 {leaf({4, 6}, 77), leaf({3, 6}, 78), leaf({5, 6}, 79), leaf({5}, 80)});
  // An empty first part: the weight's gradient starts at the first part with rows.
  TOPO_GRADCHECK([](const Inputs& v) { return linear_rows({v[0], v[1]}, v[2], v[3]); },
                 {leaf({0, 6}, 81), leaf({3, 6}, 82), leaf({5, 6}, 83), leaf({5}, 84)});
}

TEST_CASE("flash_attention: gradcheck, full and banded (per-sequence and per-head radii, both band schedules)") {
  // Sequences of 1, 7 and 33 rows, 2 heads of 5 (dk = dv); the kernel's own tests cover the sizes at scale.
  const std::vector<std::int64_t> lengths = {1, 7, 33};
  const std::vector<std::vector<std::int64_t>> radii_cases = {
      {}, {0, 1, 4}, {0, 2, 10}, {0, 0, 1, 3, 20, 9}};  // 10, 20: masked tiles; 0..4: per-row
  for (const auto& radii : radii_cases) {
    CAPTURE(radii.size());
    TOPO_GRADCHECK([&](const Inputs& x) { return flash_attention(x[0], x[1], x[2], lengths, 0.4f, radii); },
                   {leaf({41, 2, 5}, 51, -1.5f, 1.5f), leaf({41, 2, 5}, 52, -1.5f, 1.5f), leaf({41, 2, 5}, 53)});
  }
}

TEST_CASE("sum/mean/max along a dim: gradcheck with keepdim and negative dims") {
  for (const Shape& shape : {Shape{7, 33}, Shape{1, 7}, Shape{7, 1, 33}}) {
    for (int dim = -1; dim < static_cast<int>(shape.size()); ++dim) {
      for (bool keepdim : {false, true}) {
        CAPTURE(shape_str(shape));
        CAPTURE(dim);
        CAPTURE(keepdim);
        Var x = leaf(shape, 47);
        TOPO_GRADCHECK([dim, keepdim](const Inputs& v) { return sum(v[0], dim, keepdim); }, {x});
        TOPO_GRADCHECK([dim, keepdim](const Inputs& v) { return mean(v[0], dim, keepdim); }, {x});
        TOPO_GRADCHECK([dim, keepdim](const Inputs& v) { return max(v[0], dim, keepdim); },
                       {distinct_leaf(shape, 48)});
        Var y = sum(x, dim, keepdim);
        CHECK(y.ndim() == x.ndim() - (keepdim ? 0 : 1));
      }
    }
  }
}

TEST_CASE("sum_all and mean_all: gradcheck, 0-d results") {
  for (const Shape& shape : {Shape{1}, Shape{7, 33}, Shape{33, 1, 7}}) {
    CAPTURE(shape_str(shape));
    Var x = leaf(shape, 49);
    Var s = sum_all(x);
    CHECK(s.shape() == Shape{});
    TOPO_GRADCHECK([](const Inputs& v) { return sum_all(v[0]); }, {x});
    TOPO_GRADCHECK([](const Inputs& v) { return mean_all(v[0]); }, {x});
    // A 0-d loss seeds itself.
    mean_all(x).backward();
    std::vector<float> expected(static_cast<std::size_t>(x.numel()), 1.f / static_cast<float>(x.numel()));
    TOPO_CHECK_CLOSE(x.grad().to_vector<float>(), expected, 1e-7, 1e-6);
  }
}

TEST_CASE("softmax and log_softmax: gradcheck along the last dim") {
  for (const Shape& shape : {Shape{1, 1}, Shape{7, 33}, Shape{33, 7}, Shape{3, 7, 5}, Shape{7}}) {
    CAPTURE(shape_str(shape));
    Var x = leaf(shape, 50, -3.f, 3.f);
    TOPO_GRADCHECK([](const Inputs& v) { return softmax(v[0]); }, {x});
    TOPO_GRADCHECK([](const Inputs& v) { return log_softmax(v[0]); }, {x});
  }
}

TEST_CASE("layer_norm: gradcheck for x, gamma and beta, with and without affine parameters") {
  for (const Shape& shape : {Shape{7, 33}, Shape{3, 7, 5}, Shape{1, 7}}) {
    CAPTURE(shape_str(shape));
    const std::int64_t d = shape.back();
    Var x = leaf(shape, 51, -2.f, 2.f), gamma = leaf({d}, 52, 0.5f, 1.5f), beta = leaf({d}, 53);
    TOPO_GRADCHECK([](const Inputs& v) { return layer_norm(v[0], v[1], v[2]); }, {x, gamma, beta});
    TOPO_GRADCHECK([](const Inputs& v) { return layer_norm(v[0], Var(), Var()); }, {x});
    TOPO_GRADCHECK([](const Inputs& v) { return layer_norm(v[0], v[1], Var()); }, {x, gamma});
    // Constant affine parameters receive nothing.
    Var g0 = gamma.detach();
    Var y = layer_norm(x, g0, Var());
    y.backward(Tensor::full(y.shape(), 1.f));
    CHECK_FALSE(g0.grad().defined());
  }
}

TEST_CASE("residual_relu_layer_norm: gradcheck for h, x, gamma and beta") {
  for (const Shape& shape : {Shape{7, 33}, Shape{3, 2, 5}}) {
    CAPTURE(shape_str(shape));
    const std::int64_t d = shape.back();
    // x away from relu's kink, so central differences stay on one side of it.
    Var h = leaf(shape, 61, -2.f, 2.f), x = leaf_away_from_zero(shape, 62);
    Var gamma = leaf({d}, 63, 0.5f, 1.5f), beta = leaf({d}, 64);
    TOPO_GRADCHECK([](const Inputs& v) { return residual_relu_layer_norm(v[0], v[1], v[2], v[3]); }, {h, x, gamma, beta});
    TOPO_GRADCHECK([](const Inputs& v) { return residual_relu_layer_norm(v[0], v[1], Var(), Var()); }, {h, x});
  }
}

TEST_CASE("a small MLP: gradcheck through matmul, bias, gelu, layer_norm and a mean") {
  auto mlp = [](const Inputs& v) {
    Var h = gelu(add(matmul(v[0], v[1]), v[2]));
    return mean_all(mul(layer_norm(h, Var(), Var()), v[3]));
  };
  TOPO_GRADCHECK(mlp, {leaf({7, 5}, 56), leaf({5, 33}, 57), leaf({33}, 58), leaf({7, 33}, 59)});
}
