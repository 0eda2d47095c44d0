#include <cmath>
#include <string>

#include "kernels/dense/reduce.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using topo::testing::random_uniform;

using topo::testing::error_of;

namespace {

struct ReduceRef {
  std::vector<float> values;
  std::vector<std::int64_t> argmax;
};

// Naive reduction of dim `dim` of a row-major tensor shaped `s`, accumulating in double.
ReduceRef reduce_reference(ReduceOp op, const std::vector<float>& x, const Shape& s, int dim) {
  std::int64_t outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d) outer *= s[d];
  for (std::size_t d = dim + 1; d < s.size(); ++d) inner *= s[d];
  const std::int64_t n = s[dim];
  ReduceRef r;
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      double acc = op == ReduceOp::Max ? -INFINITY : 0.0;
      std::int64_t arg = 0;
      for (std::int64_t k = 0; k < n; ++k) {
        const double v = x[(o * n + k) * inner + i];
        if (op == ReduceOp::Max) {
          if (v > acc) {
            acc = v;
            arg = k;
          }
        } else {
          acc += v;
        }
      }
      if (op == ReduceOp::Mean) acc /= static_cast<double>(n);
      r.values.push_back(static_cast<float>(acc));
      r.argmax.push_back(arg);
    }
  return r;
}

Shape reduced_shape(Shape s, int dim, bool keepdim) {
  if (keepdim)
    s[dim] = 1;
  else
    s.erase(s.begin() + dim);
  return s;
}

const ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max};

std::vector<Shape> test_shapes() {
  std::vector<Shape> shapes;
  for (std::int64_t a : {1, 7, 33})
    for (std::int64_t b : {1, 7, 33})
      for (std::int64_t c : {1, 7, 33}) shapes.push_back({a, b, c});
  shapes.push_back({257, 7, 1});
  shapes.push_back({1, 257, 33});
  shapes.push_back({7, 31, 257});
  shapes.push_back({31, 257});
  shapes.push_back({257});
  shapes.push_back({128, 128, 300});  // the benchmark batch: exercises the threaded paths
  shapes.push_back({2, 200000});      // few long rows: each row split across threads
  return shapes;
}

}  // namespace

TEST_CASE("reduce matches a naive loop over every dim, with and without keepdim, argmax included") {
  std::uint64_t seed = 7;
  for (const Shape& s : test_shapes()) {
    Tensor x = random_uniform(s, seed++, -2.f, 2.f);
    const std::vector<float> xv = x.to_vector<float>();
    const int nd = static_cast<int>(s.size());
    for (int dim = -1; dim < nd; ++dim) {
      const int d = dim < 0 ? dim + nd : dim;
      for (ReduceOp op : kOps) {
        const ReduceRef ref = reduce_reference(op, xv, s, d);
        for (bool keepdim : {false, true}) {
          CAPTURE(shape_str(s));
          CAPTURE(dim);
          CAPTURE(keepdim);
          CAPTURE(static_cast<int>(op));
          Tensor argmax;
          Tensor y = reduce(op, x, dim, keepdim, op == ReduceOp::Max ? &argmax : nullptr);
          REQUIRE(y.shape() == reduced_shape(s, d, keepdim));
          TOPO_CHECK_CLOSE(y.to_vector<float>(), ref.values, 1e-5, 1e-5);
          if (op == ReduceOp::Max) {
            REQUIRE(argmax.shape() == y.shape());
            CHECK(argmax.to_vector<std::int64_t>() == ref.argmax);
            CHECK(reduce(op, x, dim, keepdim).to_vector<float>() == y.to_vector<float>());  // no argmax asked
          }
        }
      }
    }
  }
}

TEST_CASE("max keeps the first of tied maxima; sum of an empty dim is 0; bad dims are errors") {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 5, 5, 2, 3, 3, 3, 0}, {2, 4});
  Tensor argmax;
  Tensor m = max(x, 1, false, &argmax);
  CHECK(m.to_vector<float>() == std::vector<float>{5, 3});
  CHECK(argmax.to_vector<std::int64_t>() == std::vector<std::int64_t>{1, 0});
  Tensor col = Tensor::from_vector(std::vector<float>{2, 1, 2, 4}, {2, 2});
  max(col, 0, false, &argmax);
  CHECK(argmax.to_vector<std::int64_t>() == std::vector<std::int64_t>{0, 1});

  CHECK(sum(Tensor::zeros({3, 0}), 1).to_vector<float>() == std::vector<float>{0, 0, 0});
  const std::string empty_max = error_of([] { max(Tensor::zeros({3, 0}), 1); });
  CHECK(empty_max.find("[3, 0]") != std::string::npos);
  const std::string bad_dim = error_of([] { sum(Tensor::zeros({3, 4}), 2); });
  CHECK(bad_dim.find("[3, 4]") != std::string::npos);
  CHECK(bad_dim.find('2') != std::string::npos);
  CHECK_THROWS_AS(sum(Tensor::zeros({3, 4}), -3), topo::Error);
}

TEST_CASE("sum_all is a 0-d tensor equal to a double-precision sum") {
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{7}, std::int64_t{257}, std::int64_t{65537},
                         std::int64_t{1} << 20}) {
    Tensor x = random_uniform({n}, n, -1.f, 1.f);
    double expected = 0;
    for (float v : x.to_vector<float>()) expected += v;
    Tensor s = sum_all(x.reshape({1, n}));
    CHECK(s.shape().empty());
    CHECK(s.item() == doctest::Approx(expected).epsilon(1e-5).scale(1.0));
  }
  CHECK(sum_all(Tensor::full({}, 3.f)).item() == 3.f);
  CHECK(sum_all(Tensor::zeros({0})).item() == 0.f);
}

TEST_CASE("reduce_backward matches the analytic gradient and central differences") {
  std::uint64_t seed = 300;
  // Analytic reference at every test shape: each input element receives its output's grad (sum), divided
  // by n (mean), or only at the argmax position (max).
  for (const Shape& s : test_shapes()) {
    if (shape_numel(s) > 100000) continue;
    Tensor x = random_uniform(s, seed++);
    const int nd = static_cast<int>(s.size());
    for (int d = 0; d < nd; ++d)
      for (ReduceOp op : kOps)
        for (bool keepdim : {false, true}) {
          CAPTURE(shape_str(s));
          CAPTURE(d);
          CAPTURE(static_cast<int>(op));
          Tensor argmax;
          Tensor y = reduce(op, x, d, keepdim, &argmax);
          Tensor g = random_uniform(y.shape(), seed++);
          const std::vector<float> gv = g.to_vector<float>();
          const std::vector<std::int64_t> av = op == ReduceOp::Max ? argmax.to_vector<std::int64_t>()
                                                                   : std::vector<std::int64_t>();
          std::int64_t outer = 1, inner = 1;
          for (int e = 0; e < d; ++e) outer *= s[e];
          for (int e = d + 1; e < nd; ++e) inner *= s[e];
          const std::int64_t n = s[d];
          std::vector<float> expected(static_cast<std::size_t>(shape_numel(s)));
          for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t k = 0; k < n; ++k)
              for (std::int64_t i = 0; i < inner; ++i) {
                const float gi = gv[o * inner + i];
                float v = gi;
                if (op == ReduceOp::Mean) v = gi / static_cast<float>(n);
                if (op == ReduceOp::Max) v = av[o * inner + i] == k ? gi : 0.f;
                expected[(o * n + k) * inner + i] = v;
              }
          Tensor dx = reduce_backward(op, g, s, d, keepdim, op == ReduceOp::Max ? argmax : Tensor());
          REQUIRE(dx.shape() == s);
          TOPO_CHECK_CLOSE(dx.to_vector<float>(), expected, 1e-6, 1e-6);
        }
  }
  // Central differences of L = sum(w * reduce(x)) through the naive reference, on small shapes.
  for (const Shape& s : {Shape{7, 5, 3}, Shape{1, 7}, Shape{31}}) {
    Tensor x = random_uniform(s, seed++);
    std::vector<float> xv = x.to_vector<float>();
    const int nd = static_cast<int>(s.size());
    for (int d = 0; d < nd; ++d)
      for (ReduceOp op : kOps) {
        CAPTURE(shape_str(s));
        CAPTURE(d);
        CAPTURE(static_cast<int>(op));
        Tensor argmax;
        Tensor y = reduce(op, x, d, false, &argmax);
        Tensor w = random_uniform(y.shape(), seed++);
        const std::vector<float> wv = w.to_vector<float>();
        const auto loss = [&](const std::vector<float>& v) {
          const ReduceRef r = reduce_reference(op, v, s, d);
          double l = 0;
          for (std::size_t i = 0; i < r.values.size(); ++i) l += double(wv[i]) * r.values[i];
          return l;
        };
        std::vector<float> numeric(xv.size());
        const float h = 1e-3f;
        for (std::size_t i = 0; i < xv.size(); ++i) {
          std::vector<float> p = xv, m = xv;
          p[i] += h;
          m[i] -= h;
          numeric[i] = static_cast<float>((loss(p) - loss(m)) / (2 * h));
        }
        Tensor dx = reduce_backward(op, w, s, d, false, op == ReduceOp::Max ? argmax : Tensor());
        TOPO_CHECK_CLOSE(dx.to_vector<float>(), numeric, 1e-3, 1e-2);
      }
  }
  const std::string msg = error_of([] { reduce_backward(ReduceOp::Sum, Tensor::zeros({3}), {4, 5}, 0, false); });
  CHECK(msg.find("[4, 5]") != std::string::npos);
  CHECK_THROWS_AS(reduce_backward(ReduceOp::Max, Tensor::zeros({5}), {4, 5}, 0, false), topo::Error);
}
