// Gradients of dropout, embedding, index_select, concat and split against finite
// differences; ids repeat so scatter-adds are exercised.
#include "tests/nn/nn_testing.hpp"

using namespace topo;
using namespace topo::nn;
using topo::nn::testing::leaf;

namespace {
using Inputs = std::vector<Var>;
}

TEST_CASE("dropout: gradcheck with a fixed mask, identity when not training, masks never repeat") {
  for (const Shape& shape : {Shape{1}, Shape{7, 33}}) {
    CAPTURE(shape_str(shape));
    // A fresh generator inside f: every evaluation draws the same mask.
    TOPO_GRADCHECK(
        [](const Inputs& v) {
          Generator gen(7);
          return dropout(v[0], 0.3f, true, gen);
        },
        {leaf(shape, 61)});
  }
  Var x = leaf({7, 33}, 62);
  Generator gen(11);
  CHECK(dropout(x, 0.5f, false, gen).same(x));
  CHECK(dropout(x, 0.f, true, gen).same(x));
  CHECK(gen.offset() == 0);
  Var y1 = dropout(x, 0.5f, true, gen);
  CHECK(gen.offset() == static_cast<std::uint64_t>(x.numel()));
  Var y2 = dropout(x, 0.5f, true, gen);
  // Each element is dropped (0) or scaled by 1/(1-p); the two masks differ.
  const std::vector<float> xs = x.data().to_vector<float>(), a = y1.data().to_vector<float>(),
                           b = y2.data().to_vector<float>();
  int differ = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    CHECK((a[i] == 0.f || a[i] == doctest::Approx(2.f * xs[i])));
    differ += (a[i] == 0.f) != (b[i] == 0.f);
  }
  CHECK(differ > 0);
  CHECK_THROWS_AS(dropout(x, 1.f, true, gen), Error);
  CHECK_THROWS_AS(dropout(x, -0.1f, true, gen), Error);
  set_seed(5);
  CHECK(default_generator().seed() == 5);
  CHECK(default_generator().offset() == 0);
}

TEST_CASE("embedding: gradcheck with repeated ids of several shapes") {
  Var weight = leaf({7, 33}, 63);
  const Tensor ids = Tensor::from_vector(std::vector<std::int64_t>{3, 0, 3, 6, 3, 1}, {2, 3});
  TOPO_GRADCHECK([ids](const Inputs& v) { return embedding(v[0], ids); }, {weight});
  CHECK(embedding(weight, ids).shape() == Shape{2, 3, 33});
  const Tensor one = Tensor::from_vector(std::vector<std::int32_t>{6}, {1});
  TOPO_GRADCHECK([one](const Inputs& v) { return embedding(v[0], one); }, {leaf({7, 1}, 64)});
}

TEST_CASE("embedding_sum: gradcheck per table with repeated and skipped ids; a frozen table gets no gradient") {
  const Tensor a_ids = Tensor::from_vector(std::vector<std::int64_t>{3, -1, 3, 6, 0, -1}, {6});
  const Tensor b_ids = Tensor::from_vector(std::vector<std::int32_t>{0, 0, -1, 1, -1, -1}, {6});
  TOPO_GRADCHECK([a_ids, b_ids](const Inputs& v) { return embedding_sum({v[0], v[1]}, {a_ids, b_ids}); },
                 {leaf({7, 5}, 70), leaf({2, 5}, 71)});
  Var frozen(topo::testing::random_uniform({7, 5}, 72));  // requires_grad false
  Var b = leaf({2, 5}, 73);
  sum_all(embedding_sum({frozen, b}, {a_ids, b_ids})).backward();
  CHECK_FALSE(frozen.grad().defined());
  // Row 5 is left out by both tables: b's gradient counts rows 0, 1 (id 0) and 3 (id 1) only.
  const std::vector<float> gb = b.grad().to_vector<float>();
  CHECK(gb == std::vector<float>{2, 2, 2, 2, 2, 1, 1, 1, 1, 1});
}

TEST_CASE("index_select: gradcheck with repeated and missing rows, int32 and int64 indices") {
  Var x = leaf({7, 5}, 65);
  const Tensor i64 = Tensor::from_vector(std::vector<std::int64_t>{6, 0, 0, 2, 6, 6, 1, 3, 0}, {9});
  const Tensor i32 = Tensor::from_vector(std::vector<std::int32_t>{4, 4}, {2});
  TOPO_GRADCHECK([i64](const Inputs& v) { return index_select(v[0], i64); }, {x});
  TOPO_GRADCHECK([i32](const Inputs& v) { return index_select(v[0], i32); }, {x});
  TOPO_GRADCHECK([i32](const Inputs& v) { return index_select(v[0], i32); }, {leaf({7, 3, 2}, 66)});
}

TEST_CASE("concat: gradcheck along each dim, with a constant input") {
  for (int dim : {0, 1, -1}) {
    CAPTURE(dim);
    Shape sa{7, 5}, sb{7, 5}, sc{7, 5};
    const int d = dim < 0 ? 1 : dim;
    sa[d] = 1;
    sb[d] = 7;
    sc[d] = 3;
    Var c(topo::testing::random_uniform(sc, 67));  // constant
    TOPO_GRADCHECK([dim](const Inputs& v) { return concat({v[0], v[1], v[2]}, dim); }, {leaf(sa, 68), leaf(sb, 69), c});
  }
}

TEST_CASE("split: gradcheck through every piece and with unused pieces") {
  TOPO_GRADCHECK(
      [](const Inputs& v) {
        std::vector<Var> p = split(v[0], {1, 7, 25}, 1);
        REQUIRE(p.size() == 3);
        CHECK(p[2].shape() == Shape{7, 25});
        return concat({mul_scalar(p[2], 2.f), p[0], tanh(p[1])}, 1);
      },
      {leaf({7, 33}, 70)});
  // Only the middle piece is used: the others get zero gradient.
  TOPO_GRADCHECK([](const Inputs& v) { return tanh(split(v[0], {2, 3, 2}, 0)[1]); }, {leaf({7, 4}, 71)});
  TOPO_GRADCHECK([](const Inputs& v) { return split(v[0], {4, 3}, -1)[0]; }, {leaf({2, 3, 7}, 72)});
}

TEST_CASE("indexing ops reject bad input with topo::Error") {
  Var x = leaf({7, 5}, 77);
  CHECK_THROWS_AS(index_select(x, Tensor::from_vector(std::vector<std::int64_t>{7}, {1})), Error);
  CHECK_THROWS_AS(embedding(x, Tensor::from_vector(std::vector<std::int64_t>{-1}, {1})), Error);
  CHECK_THROWS_AS(concat({x, leaf({7, 4}, 78)}, 0), Error);
  CHECK_THROWS_AS(concat({}, 0), Error);
  CHECK_THROWS_AS(split(x, {3, 3}, 0), Error);
}
