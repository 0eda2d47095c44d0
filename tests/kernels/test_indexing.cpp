#include <cstdint>
#include <string>
#include <vector>

#include "kernels/dense/indexing.hpp"
#include "kernels/dense/reference.hpp"
#include "kernels/threads.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using topo::testing::kAwkwardSizes;

using topo::testing::error_of;

namespace {

Tensor ids_as(const Tensor& ids64, DType dtype) {
  if (dtype == DType::I64) return ids64;
  std::vector<std::int32_t> v;
  for (std::int64_t x : ids64.to_vector<std::int64_t>()) v.push_back(std::int32_t(x));
  return Tensor::from_vector(v, ids64.shape());
}

using topo::testing::contains;

}  // namespace

TEST_CASE("index_select matches a reference gather for int32/int64 indices and every dtype") {
  for (std::int64_t n : kAwkwardSizes) {
    for (std::int64_t m : {std::int64_t{0}, std::int64_t{1}, std::int64_t{33}, n * 2 + 1}) {
      for (DType idt : {DType::I32, DType::I64}) {
        CAPTURE(n);
        CAPTURE(m);
        const std::int64_t d = 7;
        Tensor x = topo::testing::random_uniform({n, d}, n);
        Tensor idx = ids_as(topo::testing::random_ids({m}, n, m + 5), idt);
        const std::vector<std::int64_t> iv = topo::testing::random_ids({m}, n, m + 5).to_vector<std::int64_t>();
        const std::vector<float> xv = x.to_vector<float>();
        std::vector<float> expected;
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t c = 0; c < d; ++c) expected.push_back(xv[iv[i] * d + c]);
        Tensor y = index_select(x, idx);
        CHECK(y.shape() == Shape{m, d});
        CHECK(y.to_vector<float>() == expected);

        // Integer payloads go through the same row copy (int64 rows are 8-byte words).
        Tensor xl = topo::testing::random_ids({n, 3}, 1000000007, n);
        const std::vector<std::int64_t> xlv = xl.to_vector<std::int64_t>();
        std::vector<std::int64_t> expected_l;
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t c = 0; c < 3; ++c) expected_l.push_back(xlv[iv[i] * 3 + c]);
        CHECK(index_select(xl, idx).to_vector<std::int64_t>() == expected_l);
      }
    }
  }
  // Higher-rank rows and int32 payloads.
  std::vector<std::int32_t> vals(4 * 2 * 3);
  for (std::size_t i = 0; i < vals.size(); ++i) vals[i] = std::int32_t(i * 7 - 20);
  Tensor x3 = Tensor::from_vector(vals, {4, 2, 3});
  Tensor y3 = index_select(x3, Tensor::from_vector(std::vector<std::int64_t>{3, 0, 3}, {3}));
  CHECK(y3.shape() == Shape{3, 2, 3});
  std::vector<std::int32_t> e3;
  for (std::int64_t r : {3, 0, 3})
    for (int c = 0; c < 6; ++c) e3.push_back(vals[r * 6 + c]);
  CHECK(y3.to_vector<std::int32_t>() == e3);
}

TEST_CASE("index_add matches an in-order reference loop bit for bit, narrow and wide rows, any thread count") {
  const int saved = num_threads();
  for (std::int64_t rows : kAwkwardSizes) {
    for (std::int64_t d : {std::int64_t{1}, std::int64_t{7}, std::int64_t{33}, std::int64_t{64 * 8 + 3}}) {
      for (DType idt : {DType::I32, DType::I64}) {
        CAPTURE(rows);
        CAPTURE(d);
        const std::int64_t m = rows * 3 + 2;  // duplicates guaranteed
        Tensor src = topo::testing::random_uniform({m, d}, rows * d);
        const std::vector<std::int64_t> iv = topo::testing::random_ids({m}, rows, rows + d).to_vector<std::int64_t>();
        Tensor idx = ids_as(topo::testing::random_ids({m}, rows, rows + d), idt);
        const std::vector<float> sv = src.to_vector<float>();
        std::vector<float> expected(rows * d, 0.f);
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t c = 0; c < d; ++c) expected[iv[i] * d + c] += sv[i * d + c];
        for (int threads : {1, 2, 5}) {
          set_num_threads(threads);
          Tensor y = index_add(rows, idx, src);
          CHECK(y.shape() == Shape{rows, d});
          CHECK(y.to_vector<float>() == expected);
        }
      }
    }
  }
  set_num_threads(saved);
  // Rows no index points at stay zero; zero sources give zeros.
  CHECK(index_add(3, Tensor::from_vector(std::vector<std::int64_t>{}, {0}), Tensor::empty({0, 4})).to_vector<float>() ==
        std::vector<float>(12, 0.f));
}

TEST_CASE("index_add is the gradient of index_select (central differences of the reference loss)") {
  const std::int64_t n = 7, d = 5, m = 31;
  Tensor x = topo::testing::random_uniform({n, d}, 1);
  Tensor w = topo::testing::random_uniform({m, d}, 2);
  const std::vector<std::int64_t> iv = topo::testing::random_ids({m}, n, 3).to_vector<std::int64_t>();
  Tensor idx = Tensor::from_vector(iv, {m});
  const std::vector<float> wv = w.to_vector<float>();
  // Reference loss: L(x) = sum_i sum_c w[i, c] * x[idx[i], c].
  auto loss = [&](const std::vector<float>& xv) {
    double l = 0;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t c = 0; c < d; ++c) l += double(wv[i * d + c]) * xv[iv[i] * d + c];
    return l;
  };
  std::vector<float> xv = x.to_vector<float>(), numeric(xv.size());
  const float h = 1e-2f;
  for (std::size_t j = 0; j < xv.size(); ++j) {
    const float keep = xv[j];
    xv[j] = keep + h;
    const double up = loss(xv);
    xv[j] = keep - h;
    const double down = loss(xv);
    xv[j] = keep;
    numeric[j] = float((up - down) / (2 * h));
  }
  TOPO_CHECK_CLOSE(index_add(n, idx, w).to_vector<float>(), numeric, 1e-3, 1e-3);
}

TEST_CASE("embedding and embedding_backward wrap the gather and scatter with ids of any shape") {
  for (std::int64_t v : kAwkwardSizes) {
    CAPTURE(v);
    const std::int64_t d = 33;
    Tensor weight = topo::testing::random_uniform({v, d}, v);
    Tensor ids = topo::testing::random_ids({3, 7}, v, v + 1);
    const std::vector<std::int64_t> iv = ids.to_vector<std::int64_t>();
    const std::vector<float> wv = weight.to_vector<float>();
    Tensor y = embedding(weight, ids);
    CHECK(y.shape() == Shape{3, 7, d});
    std::vector<float> expected;
    for (std::int64_t id : iv)
      for (std::int64_t c = 0; c < d; ++c) expected.push_back(wv[id * d + c]);
    CHECK(y.to_vector<float>() == expected);

    Tensor grad = topo::testing::random_uniform({3, 7, d}, v + 2);
    const std::vector<float> gv = grad.to_vector<float>();
    std::vector<float> expected_dw(v * d, 0.f);
    for (std::size_t i = 0; i < iv.size(); ++i)
      for (std::int64_t c = 0; c < d; ++c) expected_dw[iv[i] * d + c] += gv[i * d + c];
    Tensor dw = embedding_backward(grad, ids_as(ids, DType::I32), v);
    CHECK(dw.shape() == Shape{v, d});
    CHECK(dw.to_vector<float>() == expected_dw);
  }
}

TEST_CASE("embedding_sum adds each table's row per output row, skipping -1, and its backward scatters per table") {
  for (std::int64_t m : kAwkwardSizes) {
    CAPTURE(m);
    const std::int64_t d = 33;
    const std::vector<std::int64_t> vocab = {7, 257, 1};
    std::vector<Tensor> tables, ids;
    std::vector<std::vector<float>> tv;
    std::vector<std::vector<std::int64_t>> iv;
    for (std::size_t t = 0; t < vocab.size(); ++t) {
      tables.push_back(topo::testing::random_uniform({vocab[t], d}, m * 10 + t));
      tv.push_back(tables.back().to_vector<float>());
      std::vector<std::int64_t> v = topo::testing::random_ids({m}, vocab[t], m * 10 + t + 5).to_vector<std::int64_t>();
      for (std::int64_t i = 0; i < m; ++i)
        if ((i + static_cast<std::int64_t>(t)) % 3 == 0) v[static_cast<std::size_t>(i)] = kNoRow;  // rows 0, 3, ... every table
      iv.push_back(v);
      const Tensor i64 = Tensor::from_vector(v, {m});
      ids.push_back(t == 1 ? ids_as(i64, DType::I32) : i64);
    }
    std::vector<float> expected(static_cast<std::size_t>(m * d), 0.f);
    for (std::size_t t = 0; t < vocab.size(); ++t)
      for (std::int64_t i = 0; i < m; ++i)
        if (iv[t][i] >= 0)
          for (std::int64_t c = 0; c < d; ++c) expected[i * d + c] += tv[t][iv[t][i] * d + c];
    const Tensor y = embedding_sum(tables, ids);
    CHECK(y.shape() == Shape{m, d});
    TOPO_CHECK_CLOSE(y.to_vector<float>(), expected, 1e-6, 1e-6);
    const Tensor grad = topo::testing::random_uniform({m, d}, m + 3);
    const std::vector<float> gv = grad.to_vector<float>();
    for (std::size_t t = 0; t < vocab.size(); ++t) {
      std::vector<float> dw(static_cast<std::size_t>(vocab[t] * d), 0.f);
      for (std::int64_t i = 0; i < m; ++i)
        if (iv[t][i] >= 0)
          for (std::int64_t c = 0; c < d; ++c) dw[iv[t][i] * d + c] += gv[i * d + c];
      CHECK(embedding_sum_backward(grad, ids[t], vocab[t]).to_vector<float>() == dw);
    }
  }
  // Wide rows (the column-range scatter) with a missing row, and every table left out of a row: zeros.
  const Tensor wide = topo::testing::random_uniform({3, 300}, 9);
  const Tensor none = Tensor::from_vector(std::vector<std::int64_t>{kNoRow, 2, kNoRow}, {3});
  const Tensor y = embedding_sum({wide}, {none});
  const std::vector<float> yv = y.to_vector<float>(), wv = wide.to_vector<float>();
  CHECK(std::vector<float>(yv.begin(), yv.begin() + 300) == std::vector<float>(300, 0.f));
  CHECK(std::vector<float>(yv.begin() + 300, yv.begin() + 600) == std::vector<float>(wv.begin() + 600, wv.end()));
  const std::vector<float> dw = embedding_sum_backward(y, none, 3).to_vector<float>();
  CHECK(std::vector<float>(dw.begin(), dw.begin() + 600) == std::vector<float>(600, 0.f));
  CHECK(std::vector<float>(dw.begin() + 600, dw.end()) == std::vector<float>(wv.begin() + 600, wv.end()));
}

TEST_CASE("embedding_sum errors name the table, the id's position and value, and the shapes") {
  const Tensor a = topo::testing::random_uniform({5, 3}, 1), b = topo::testing::random_uniform({4, 3}, 2);
  const Tensor ok = Tensor::from_vector(std::vector<std::int64_t>{0, kNoRow, 3}, {3});
  std::string e = error_of([&] { (void)embedding_sum({a, b}, {ok, Tensor::from_vector(std::vector<std::int64_t>{1, 4, 0}, {3})}); });
  CHECK(contains(e, "ids 1"));
  CHECK(contains(e, "position 1"));
  CHECK(contains(e, "is 4"));
  e = error_of([&] { (void)embedding_sum({a}, {Tensor::from_vector(std::vector<std::int32_t>{-2}, {1})}); });
  CHECK(contains(e, "-2"));
  e = error_of([&] { (void)embedding_sum({a, topo::testing::random_uniform({4, 2}, 3)}, {ok, ok}); });
  CHECK(contains(e, "table 1"));
  e = error_of([&] { (void)embedding_sum({a, b}, {ok, Tensor::from_vector(std::vector<std::int64_t>{1}, {1})}); });
  CHECK(contains(e, "3 entries"));
  CHECK_FALSE(error_of([&] { (void)embedding_sum({a, b}, {ok}); }).empty());
  CHECK_FALSE(error_of([&] { (void)embedding_sum({}, {}); }).empty());
  e = error_of([&] { (void)embedding_sum_backward(Tensor::empty({3, 3}), Tensor::from_vector(std::vector<std::int64_t>{0, 9, kNoRow}, {3}), 5); });
  CHECK(contains(e, "is 9"));
}

TEST_CASE("concat and split along every dim match coordinate references and invert each other") {
  for (std::int64_t s : kAwkwardSizes) {
    for (int dim : {0, 1, 2, -1, -3}) {
      CAPTURE(s);
      CAPTURE(dim);
      const int d = dim < 0 ? dim + 3 : dim;
      std::vector<Tensor> xs;
      std::vector<std::int64_t> sizes;
      for (std::int64_t k : {s, std::int64_t{0}, std::int64_t{3}, std::int64_t{1}}) {
        Shape shape = {2, 3, 4};
        shape[d] = k;
        xs.push_back(topo::testing::random_uniform(shape, s * 10 + k));
        sizes.push_back(k);
      }
      Shape expected_shape;
      const std::vector<float> expected = reference::concat(xs, d, expected_shape);
      Tensor y = concat(xs, dim);
      CHECK(y.shape() == expected_shape);
      CHECK(y.to_vector<float>() == expected);
      const std::vector<Tensor> parts = split(y, sizes, dim);
      REQUIRE(parts.size() == xs.size());
      for (std::size_t k = 0; k < xs.size(); ++k) {
        CHECK(parts[k].shape() == xs[k].shape());
        CHECK(parts[k].to_vector<float>() == xs[k].to_vector<float>());
        CHECK_FALSE(parts[k].shares_storage_with(y));
      }
    }
  }
  // int64 payload, large enough for the parallel path (1000 rows x 2 parts x 289 > kParallelGrain = 2^18).
  Tensor a = topo::testing::random_ids({1000, 257}, 1 << 30, 1), b = topo::testing::random_ids({1000, 31}, 1 << 30, 2);
  Tensor ab = concat({a, b}, 1);
  const std::vector<std::int64_t> av = a.to_vector<std::int64_t>(), bv = b.to_vector<std::int64_t>(),
                                  abv = ab.to_vector<std::int64_t>();
  bool ok = true;
  for (std::int64_t r = 0; r < 1000; ++r) {
    for (std::int64_t c = 0; c < 257; ++c) ok = ok && abv[r * 288 + c] == av[r * 257 + c];
    for (std::int64_t c = 0; c < 31; ++c) ok = ok && abv[r * 288 + 257 + c] == bv[r * 31 + c];
  }
  CHECK(ok);
  const std::vector<Tensor> back = split(ab, {257, 31}, -1);
  CHECK(back[0].to_vector<std::int64_t>() == av);
  CHECK(back[1].to_vector<std::int64_t>() == bv);
  // Runs of 32 and 64 bytes (copied at a constant size) beside a 12-byte one, on the parallel path.
  const std::int64_t rows = 20000;
  const std::vector<Tensor> narrow = {topo::testing::random_uniform({rows, 1, 8}, 3),
                                      topo::testing::random_uniform({rows, 1, 16}, 4),
                                      topo::testing::random_uniform({rows, 1, 3}, 5)};
  Shape narrow_shape;
  const std::vector<float> narrow_expected = reference::concat(narrow, 2, narrow_shape);
  const Tensor joined = concat(narrow, 2);
  CHECK(joined.to_vector<float>() == narrow_expected);
  const std::vector<Tensor> narrow_back = split(joined, {8, 16, 3}, 2);
  for (std::size_t k = 0; k < narrow.size(); ++k)
    CHECK(narrow_back[k].to_vector<float>() == narrow[k].to_vector<float>());
}

TEST_CASE("indexing errors name the offending position, value and shapes") {
  Tensor x = topo::testing::random_uniform({5, 3}, 1);
  std::string e = error_of([&] { (void)index_select(x, Tensor::from_vector(std::vector<std::int64_t>{0, 4, 5}, {3})); });
  CHECK(contains(e, "position 2"));
  CHECK(contains(e, "is 5"));
  e = error_of([&] { (void)index_select(x, Tensor::from_vector(std::vector<std::int32_t>{-7, 1}, {2})); });
  CHECK(contains(e, "position 0"));
  CHECK(contains(e, "-7"));
  e = error_of([&] { (void)index_add(4, Tensor::from_vector(std::vector<std::int64_t>{1, 9}, {2}), Tensor::empty({2, 3})); });
  CHECK(contains(e, "position 1"));
  CHECK(contains(e, "is 9"));
  e = error_of([&] { (void)embedding(x, Tensor::from_vector(std::vector<std::int64_t>{0, 1, 2, 123}, {2, 2})); });
  CHECK(contains(e, "embedding"));
  CHECK(contains(e, "123"));
  e = error_of([&] {
    (void)embedding_backward(Tensor::empty({2, 3}), Tensor::from_vector(std::vector<std::int64_t>{0, 77}, {2}), 5);
  });
  CHECK(contains(e, "77"));
  CHECK_FALSE(error_of([&] { (void)index_select(x, Tensor::empty({2})); }).empty());                  // float ids
  CHECK_FALSE(error_of([&] { (void)index_select(x, Tensor::arange(4).reshape({2, 2})); }).empty());  // 2-d ids
  CHECK_FALSE(error_of([&] { (void)index_add(3, Tensor::arange(2), Tensor::empty({3, 2})); }).empty());
  CHECK_FALSE(error_of([&] { (void)embedding_backward(Tensor::empty({3, 4}), Tensor::arange(2), 5); }).empty());
  e = error_of([&] { (void)concat({Tensor::empty({2, 3}), Tensor::empty({3, 4})}, 0); });
  CHECK(contains(e, "[3, 4]"));
  CHECK_FALSE(error_of([&] { (void)concat({Tensor::empty({2, 3}), Tensor::arange(3).reshape({1, 3})}, 0); }).empty());
  CHECK_FALSE(error_of([&] { (void)concat({}, 0); }).empty());
  e = error_of([&] { (void)concat({Tensor::empty({2, 3})}, 2); });
  CHECK(contains(e, "dim 2"));
  e = error_of([&] { (void)split(x, {2, 2}, 0); });
  CHECK(contains(e, "sum to 4"));
  e = error_of([&] { (void)split(x, {6, -1}, 0); });
  CHECK(contains(e, "-1"));
}

TEST_CASE("unpack_parts splits [rows, P, ...] into P [rows, ...] tensors and pack_parts joins them back") {
  const Tensor x = testing::random_uniform({5, 3, 2, 4}, 91);
  const std::vector<Tensor> parts = unpack_parts(x);
  REQUIRE(parts.size() == 3);
  const std::vector<float> all = x.to_vector<float>();
  for (std::int64_t p = 0; p < 3; ++p) {
    REQUIRE(parts[p].shape() == Shape{5, 2, 4});
    const std::vector<float> got = parts[p].to_vector<float>();
    for (std::int64_t r = 0; r < 5; ++r)
      for (std::int64_t i = 0; i < 8; ++i) CHECK(got[r * 8 + i] == all[(r * 3 + p) * 8 + i]);
  }
  const Tensor back = pack_parts(parts);
  CHECK(back.shape() == x.shape());
  CHECK(back.to_vector<float>() == all);
}
