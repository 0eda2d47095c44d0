#include <string>

#include "kernels/dense/binary.hpp"
#include "kernels/dense/reference.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using topo::testing::random_uniform;

using topo::testing::error_of;

namespace {

using reference::broadcast_source_index;
using reference::binary_op;

}  // namespace

TEST_CASE("broadcast_shape follows numpy and names both shapes on failure") {
  CHECK(broadcast_shape({7, 1, 33}, {31, 1}) == Shape{7, 31, 33});
  CHECK(broadcast_shape({}, {3, 4}) == Shape{3, 4});
  CHECK(broadcast_shape({0, 3}, {3}) == Shape{0, 3});
  CHECK(broadcast_shape({1}, {0}) == Shape{0});
  const std::string msg = error_of([] { broadcast_shape({3, 4}, {5}); });
  CHECK(msg.find("[3, 4]") != std::string::npos);
  CHECK(msg.find("[5]") != std::string::npos);
}

TEST_CASE("binary ops match a naive broadcasting loop") {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{7, 33}, {7, 33}},        {{257}, {257}},          {{1}, {1}},          {{31, 33}, {33}},
      {{7, 31, 33}, {31, 33}},   {{33, 7}, {33, 1}},      {{7, 31}, {}},       {{}, {7}},
      {{1}, {31, 7}},            {{7, 1, 33}, {31, 1}},   {{1, 31, 1}, {7, 1, 257}},
      {{2, 3, 1, 5}, {3, 4, 1}}, {{33}, {31, 33}},        {{31, 1}, {1, 33}},  {{0, 3}, {3}},
      {{128, 300}, {300}},       {{64, 1, 300}, {64, 20, 1}}, {{257, 129}, {257, 129}}, {{257, 1}, {257, 129}},
      {{1, 7, 1, 31, 1}, {7, 1, 33, 1, 5}}};
  const BinaryOp ops[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div};
  std::uint64_t seed = 1;
  for (const auto& [sa, sb] : cases) {
    Tensor a = random_uniform(sa, seed++, -2.f, 2.f);
    Tensor b = random_uniform(sb, seed++, 0.5f, 2.f);  // away from 0 for Div
    const std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>();
    for (BinaryOp op : ops) {
      TOPO_CAPTURE(shape_str(sa));
      TOPO_CAPTURE(shape_str(sb));
      CAPTURE(static_cast<int>(op));
      const Shape out = reference::broadcast_result_shape(sa, sb);
      Tensor c = binary(op, a, b);
      REQUIRE(c.shape() == out);
      std::vector<float> expected(static_cast<std::size_t>(shape_numel(out)));
      for (std::int64_t i = 0; i < shape_numel(out); ++i)
        expected[i] = binary_op(op, av[broadcast_source_index(out, sa, i)], bv[broadcast_source_index(out, sb, i)]);
      TOPO_CHECK_CLOSE(c.to_vector<float>(), expected, 1e-6, 1e-6);
      // The swapped operand order exercises the other broadcast side.
      Tensor c2 = binary(op, b, a);
      for (std::int64_t i = 0; i < shape_numel(out); ++i)
        expected[i] = binary_op(op, bv[broadcast_source_index(out, sb, i)], av[broadcast_source_index(out, sa, i)]);
      TOPO_CHECK_CLOSE(c2.to_vector<float>(), expected, 1e-6, 1e-6);
    }
  }
  CHECK(add(Tensor::full({2}, 1.f), Tensor::full({2}, 2.f)).to_vector<float>() == std::vector<float>{3.f, 3.f});
  CHECK(div(Tensor::full({1}, 1.f), Tensor::full({1}, 4.f)).item() == 0.25f);
}

TEST_CASE("binary ops reject shapes that do not broadcast, naming both") {
  Tensor a = Tensor::zeros({7, 31}), b = Tensor::zeros({33});
  const std::string msg = error_of([&] { mul(a, b); });
  CHECK(msg.find("[7, 31]") != std::string::npos);
  CHECK(msg.find("[33]") != std::string::npos);
  CHECK_THROWS_AS(add(Tensor::zeros({2, 3}), Tensor::zeros({3, 2})), topo::Error);
  CHECK_THROWS_AS(add(Tensor::zeros({2}), Tensor::zeros({2}, DType::I64)), topo::Error);
}

TEST_CASE("scalar ops, axpy_ and fill_ match loops") {
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{7}, std::int64_t{257}, std::int64_t{70001}}) {
    Tensor x = random_uniform({n}, n, -3.f, 3.f), s = random_uniform({n}, n + 1);
    const std::vector<float> xv = x.to_vector<float>(), sv = s.to_vector<float>();
    std::vector<float> plus(xv), times(xv), axpy(xv);
    for (std::size_t i = 0; i < xv.size(); ++i) {
      plus[i] = xv[i] + 0.75f;
      times[i] = xv[i] * -1.5f;
      axpy[i] = xv[i] + 0.3f * sv[i];
    }
    TOPO_CHECK_CLOSE(add_scalar(x, 0.75f).to_vector<float>(), plus, 1e-6, 1e-6);
    TOPO_CHECK_CLOSE(mul_scalar(x, -1.5f).to_vector<float>(), times, 1e-6, 1e-6);
    Tensor y = x.clone();
    axpy_(y, 0.3f, s);
    TOPO_CHECK_CLOSE(y.to_vector<float>(), axpy, 1e-6, 1e-6);
    fill_(y, 2.5f);
    CHECK(y.to_vector<float>() == std::vector<float>(xv.size(), 2.5f));
  }
  Tensor y = Tensor::zeros({3});
  CHECK_THROWS_AS(axpy_(y, 1.f, Tensor::zeros({4})), topo::Error);
}

TEST_CASE("sum_to_shape sums the broadcast dims (the backward of broadcasting)") {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{7, 31, 33}, {33}},    {{7, 31, 33}, {31, 1}}, {{7, 31, 33}, {7, 1, 33}}, {{7, 31, 33}, {1}},
      {{7, 31, 33}, {}},      {{7, 31, 33}, {7, 31, 33}}, {{31, 33}, {31, 1}},   {{257, 33}, {1, 33}},
      {{1, 7, 1, 33}, {7, 1, 1}}, {{128, 300}, {300}},   {{0, 5}, {5}},            {{5, 0}, {1, 0}}};
  std::uint64_t seed = 100;
  for (const auto& [gs, ts] : cases) {
    TOPO_CAPTURE(shape_str(gs));
    TOPO_CAPTURE(shape_str(ts));
    Tensor g = random_uniform(gs, seed++);
    const std::vector<float> gv = g.to_vector<float>();
    std::vector<double> acc(static_cast<std::size_t>(shape_numel(ts)), 0.0);
    for (std::int64_t i = 0; i < shape_numel(gs); ++i) acc[broadcast_source_index(gs, ts, i)] += gv[i];
    Tensor r = sum_to_shape(g, ts);
    REQUIRE(r.shape() == ts);
    TOPO_CHECK_CLOSE(r.to_vector<float>(), std::vector<float>(acc.begin(), acc.end()), 1e-5, 1e-5);
    if (gs == ts) CHECK_FALSE(r.shares_storage_with(g));
  }
  const std::string msg = error_of([] { sum_to_shape(Tensor::zeros({3, 4}), {5}); });
  CHECK(msg.find("[3, 4]") != std::string::npos);
  CHECK(msg.find("[5]") != std::string::npos);
  CHECK_THROWS_AS(sum_to_shape(Tensor::zeros({3}), {2, 3}), topo::Error);
}
