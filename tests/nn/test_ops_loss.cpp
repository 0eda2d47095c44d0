// Gradients of the losses against finite differences: cross_entropy with ignored rows, mse on both sides.
#include "tests/nn/nn_testing.hpp"

using namespace topo;
using namespace topo::nn;
using topo::nn::testing::leaf;

namespace {
using Inputs = std::vector<Var>;
}

TEST_CASE("cross_entropy: gradcheck with ignored rows, a custom ignore_index, and all rows ignored") {
  Var logits = leaf({7, 5}, 73, -2.f, 2.f);
  const Tensor targets = Tensor::from_vector(std::vector<std::int64_t>{0, -100, 4, 2, -100, 2, 1}, {7});
  TOPO_GRADCHECK([targets](const Inputs& v) { return cross_entropy(v[0], targets); }, {logits});
  const Tensor custom = Tensor::from_vector(std::vector<std::int64_t>{3, 3, 0, 1, 4, 2, 3}, {7});
  TOPO_GRADCHECK([custom](const Inputs& v) { return cross_entropy(v[0], custom, 3); }, {logits});
  TOPO_GRADCHECK([](const Inputs& v) { return cross_entropy(v[0], Tensor::from_vector(std::vector<std::int64_t>{0}, {1})); },
                 {leaf({1, 33}, 74)});
  const Tensor many = topo::testing::random_ids({33}, 7, 79);
  TOPO_GRADCHECK([many](const Inputs& v) { return cross_entropy(v[0], many); }, {leaf({33, 7}, 80, -3.f, 3.f)});
  // Ignored rows receive exactly zero gradient.
  Var l2 = leaf({7, 5}, 75);
  cross_entropy(l2, targets).backward();
  const std::vector<float> g = l2.grad().to_vector<float>();
  for (int row : {1, 4})
    for (int c = 0; c < 5; ++c) CHECK(g[row * 5 + c] == 0.f);
  const Tensor all_ignored = Tensor::from_vector(std::vector<std::int64_t>(7, -100), {7});
  Var l3 = leaf({7, 5}, 76);
  Var loss = cross_entropy(l3, all_ignored);
  CHECK(loss.item() == 0.f);
  loss.backward();
  for (float v : l3.grad().to_vector<float>()) CHECK(v == 0.f);
  CHECK_THROWS_AS(cross_entropy(l3, Tensor::from_vector(std::vector<std::int64_t>(7, 5), {7})), Error);
}

TEST_CASE("mse: gradcheck for prediction and target") {
  for (const Shape& shape : {Shape{1}, Shape{7, 33}}) {
    CAPTURE(shape_str(shape));
    TOPO_GRADCHECK([](const Inputs& v) { return mse(v[0], v[1]); }, {leaf(shape, 54), leaf(shape, 55)});
  }
}
