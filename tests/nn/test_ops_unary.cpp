// Gradients of the unary ops, scalar arithmetic and reshape against finite differences.
#include "tests/nn/nn_testing.hpp"

using namespace topo;
using namespace topo::nn;
using topo::nn::testing::leaf;
using topo::nn::testing::leaf_away_from_zero;

TEST_CASE("unary ops: gradcheck at awkward shapes") {
  using Fn = Var (*)(const Var&);
  const std::pair<const char*, Fn> ops[] = {
      {"relu", [](const Var& x) { return relu(x); }},
      {"leaky_relu", [](const Var& x) { return leaky_relu(x, 0.2f); }},
      {"gelu", [](const Var& x) { return gelu(x); }},
      {"exp", [](const Var& x) { return exp(x); }},
      {"tanh", [](const Var& x) { return tanh(x); }},
      {"sigmoid", [](const Var& x) { return sigmoid(x); }},
      {"elu", [](const Var& x) { return elu(x, 0.7f); }},
      {"neg", [](const Var& x) { return neg(x); }},
      {"-x", [](const Var& x) { return -x; }},
      {"mul_scalar", [](const Var& x) { return mul_scalar(x, -1.7f); }},
      {"x*c", [](const Var& x) { return x * 0.3f; }},
      {"c*x", [](const Var& x) { return 2.5f * x; }},
      {"x/c", [](const Var& x) { return x / 4.f; }},
  };
  for (const Shape& shape : {Shape{1}, Shape{7, 33}, Shape{33, 1, 7}}) {
    for (const auto& [name, op] : ops) {
      TOPO_CAPTURE(name);
      CAPTURE(shape_str(shape));
      TOPO_GRADCHECK([op = op](const std::vector<Var>& x) { return op(x[0]); }, {leaf_away_from_zero(shape, 21)});
    }
    CAPTURE(shape_str(shape));
    TOPO_GRADCHECK([](const std::vector<Var>& x) { return log(x[0]); }, {leaf(shape, 22, 0.2f, 3.f)});
  }
}

TEST_CASE("composed unary ops: chain rule through several nodes") {
  TOPO_GRADCHECK([](const std::vector<Var>& x) { return tanh(gelu(mul_scalar(sigmoid(x[0]), 3.f))); },
                 {leaf({7, 7}, 23, -2.f, 2.f)});
}

TEST_CASE("reshape is a zero-copy view whose gradient is reshaped back") {
  Var x = leaf({7, 6}, 24);
  Var y = reshape(x, {3, -1, 2});
  CHECK(y.shape() == Shape{3, 7, 2});
  CHECK(y.data().shares_storage_with(x.data()));
  CHECK_THROWS_AS(reshape(x, {5, 8}), Error);
  TOPO_GRADCHECK([](const std::vector<Var>& in) { return tanh(reshape(in[0], {2, 21})); }, {x});
}
