// Layers against direct loops, and their gradients against finite differences.
#include <doctest/doctest.h>

#include <cmath>

#include "nn/layers.hpp"
#include "tests/nn/nn_testing.hpp"

namespace nn = topo::nn;
using topo::Tensor;
using nn::testing::leaf;

namespace {

// y[r, o] = sum_i x[r, i] * w[o, i] + b[o], in double.
std::vector<float> naive_linear(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>* b,
                                std::int64_t rows, std::int64_t in, std::int64_t out) {
  std::vector<float> y(static_cast<std::size_t>(rows * out));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t o = 0; o < out; ++o) {
      double s = b ? (*b)[o] : 0.0;
      for (std::int64_t i = 0; i < in; ++i) s += double(x[r * in + i]) * w[o * in + i];
      y[r * out + o] = static_cast<float>(s);
    }
  return y;
}

}  // namespace

TEST_CASE("Linear: forward over [..., in] matches x W^T + b at awkward sizes") {
  for (std::int64_t in : topo::testing::kAwkwardSizes) {
    for (std::int64_t out : {std::int64_t{1}, std::int64_t{33}}) {
      for (bool bias : {true, false}) {
        CAPTURE(in);
        CAPTURE(out);
        CAPTURE(bias);
        nn::Linear lin(in, out, bias);
        lin.reset_parameters(static_cast<std::uint64_t>(in * 100 + out));
        const Tensor x = topo::testing::random_uniform({2, 3, in}, 11);
        const nn::Var y = lin(nn::Var(x));
        CHECK(y.shape() == topo::Shape{2, 3, out});
        const auto bv = bias ? lin.bias.data().to_vector<float>() : std::vector<float>{};
        TOPO_CHECK_CLOSE(y.data().to_vector<float>(),
                         naive_linear(x.to_vector<float>(), lin.weight.data().to_vector<float>(),
                                      bias ? &bv : nullptr, 6, in, out),
                         1e-5, 1e-5);
        CHECK(lin.weight.shape() == topo::Shape{out, in});
      }
    }
  }
  nn::Linear lin(3, 2);
  CHECK(lin(nn::Var(Tensor::full({3}, 1.f))).shape() == topo::Shape{2});  // a single vector works
  CHECK_THROWS_AS(lin(nn::Var(Tensor::zeros({4, 5}))), topo::Error);
  CHECK_THROWS_AS(nn::Linear(0, 3), topo::Error);
}

TEST_CASE("Linear: default init bounds are PyTorch's U(+-1/sqrt(in))") {
  nn::Linear lin(64, 32);
  lin.reset_parameters(3);
  const float bound = 1.f / 8.f;
  float wmax = 0.f, bmax = 0.f;
  for (float v : lin.weight.data().to_vector<float>()) wmax = std::max(wmax, std::abs(v));
  for (float v : lin.bias.data().to_vector<float>()) bmax = std::max(bmax, std::abs(v));
  CHECK(wmax <= bound);
  CHECK(wmax > 0.9f * bound);  // 2048 draws fill the interval
  CHECK(bmax <= bound);
}

TEST_CASE("Linear: gradients match finite differences") {
  nn::Linear lin(7, 5);
  TOPO_GRADCHECK(
      [&](const std::vector<nn::Var>& v) {
        lin.weight = v[1];
        lin.bias = v[2];
        return lin(v[0]);
      },
      {leaf({2, 3, 7}, 1), leaf({5, 7}, 2), leaf({5}, 3)});
}

TEST_CASE("LayerNorm: forward matches the direct formula; gradients check") {
  for (std::int64_t d : topo::testing::kAwkwardSizes) {
    CAPTURE(d);
    nn::LayerNorm ln(d, 1e-5f);
    // Non-trivial affine parameters so a swapped gamma/beta would show.
    ln.weight.set_data(topo::testing::random_uniform({d}, 21, 0.5f, 1.5f));
    ln.bias.set_data(topo::testing::random_uniform({d}, 22));
    const Tensor x = topo::testing::random_uniform({3, d}, 23, -2.f, 2.f);
    const auto y = ln(nn::Var(x)).data().to_vector<float>();
    const auto xv = x.to_vector<float>(), g = ln.weight.data().to_vector<float>();
    const auto b = ln.bias.data().to_vector<float>();
    std::vector<float> ref(xv.size());
    for (std::int64_t r = 0; r < 3; ++r) {
      double mu = 0, var = 0;
      for (std::int64_t i = 0; i < d; ++i) mu += xv[r * d + i];
      mu /= d;
      for (std::int64_t i = 0; i < d; ++i) var += (xv[r * d + i] - mu) * (xv[r * d + i] - mu);
      var /= d;
      for (std::int64_t i = 0; i < d; ++i)
        ref[r * d + i] = static_cast<float>((xv[r * d + i] - mu) / std::sqrt(var + 1e-5) * g[i] + b[i]);
    }
    TOPO_CHECK_CLOSE(y, ref, 1e-4, 1e-4);
  }
  nn::LayerNorm plain(6, 1e-5f, false);
  CHECK(plain.parameters().empty());
  nn::LayerNorm ln(6);
  TOPO_GRADCHECK(
      [&](const std::vector<nn::Var>& v) {
        ln.weight = v[1];
        ln.bias = v[2];
        return ln(v[0]);
      },
      {leaf({4, 6}, 31), leaf({6}, 32), leaf({6}, 33)});
  CHECK_THROWS_AS(ln(nn::Var(Tensor::zeros({2, 5}))), topo::Error);
}

TEST_CASE("Embedding: rows of the table, frozen tables get no gradient") {
  nn::Embedding emb(13, 5);
  emb.reset_parameters(9);
  const Tensor ids = topo::testing::random_ids({2, 7}, 13, 4);
  const auto y = emb(ids).data().to_vector<float>();
  const auto w = emb.weight.data().to_vector<float>();
  const auto idv = ids.to_vector<std::int64_t>();
  std::vector<float> ref;
  for (auto id : idv)
    for (int j = 0; j < 5; ++j) ref.push_back(w[id * 5 + j]);
  CHECK(y == ref);
  TOPO_GRADCHECK([&](const std::vector<nn::Var>& v) {
    emb.weight = v[0];
    return emb(ids);
  }, {leaf({13, 5}, 41)});

  auto frozen = nn::Embedding::from_pretrained(topo::testing::random_uniform({4, 3}, 42));
  const nn::Var out = frozen->forward(Tensor::arange(4));
  CHECK_FALSE(out.requires_grad());
  CHECK(out.data().to_vector<float>() == frozen->weight.data().to_vector<float>());
  CHECK_THROWS_AS(nn::Embedding::from_pretrained(Tensor::zeros({4})), topo::Error);
}

TEST_CASE("Embedding::with_pretrained_rows: covered rows are the vectors after every reset, the rest the usual draw") {
  const Tensor vectors = topo::testing::random_uniform({5, 3}, 7);
  auto partial = nn::Embedding::with_pretrained_rows(vectors, {0, 1, 0, 1, 0});
  nn::Embedding plain(5, 3);
  const std::vector<float> v = vectors.to_vector<float>();
  for (std::uint64_t seed : {1u, 2u}) {
    partial->reset_parameters(seed);
    plain.reset_parameters(seed);
    const std::vector<float> a = partial->weight.data().to_vector<float>(), b = plain.weight.data().to_vector<float>();
    for (std::size_t r = 0; r < 5; ++r)
      for (std::size_t k = 0; k < 3; ++k)
        CHECK(a[r * 3 + k] == (r % 2 ? v[r * 3 + k] : b[r * 3 + k]));
  }
  CHECK(partial->weight.requires_grad());
  CHECK_FALSE(nn::Embedding::with_pretrained_rows(vectors, {1, 1, 1, 1, 1}, true)->weight.requires_grad());
  CHECK_THROWS_AS(nn::Embedding::with_pretrained_rows(vectors, {1, 0}), topo::Error);
}

TEST_CASE("Embedding with trained_rows: rows past it are a frozen tail the look-ups reach and gradients do not") {
  const Tensor vectors = topo::testing::random_uniform({6, 3}, 11);
  const std::vector<float> v = vectors.to_vector<float>();
  auto emb = nn::Embedding::with_pretrained_rows(vectors, {1, 0, 1, 1, 1, 0}, false, 4);
  emb->reset_parameters(3);
  CHECK(emb->num_embeddings() == 6);
  CHECK(emb->weight.shape() == topo::Shape{4, 3});
  CHECK(emb->tail.shape() == topo::Shape{2, 3});
  CHECK(emb->weight.requires_grad());
  CHECK_FALSE(emb->tail.requires_grad());
  const std::vector<float> head = emb->weight.data().to_vector<float>(), tail = emb->tail.data().to_vector<float>();
  std::vector<float> table = head;
  table.insert(table.end(), tail.begin(), tail.end());
  for (std::size_t r : {0u, 2u, 3u, 4u})  // covered rows hold the vectors in either table
    for (std::size_t k = 0; k < 3; ++k) CHECK(table[r * 3 + k] == v[r * 3 + k]);
  CHECK(table[5 * 3] != v[5 * 3]);  // an uncovered tail row keeps its draw

  // ids of any shape and either integer type read the row of their id, whichever table holds it.
  for (const Tensor& ids : {Tensor::from_vector(std::vector<std::int64_t>{0, 5, 3, 4, 1, 4}, {2, 3}),
                            Tensor::from_vector(std::vector<std::int32_t>{0, 5, 3, 4, 1, 4}, {2, 3})}) {
    const nn::Var y = emb->forward(ids);
    CHECK(y.shape() == topo::Shape{2, 3, 3});
    std::vector<float> ref;
    for (int id : {0, 5, 3, 4, 1, 4})
      for (int k = 0; k < 3; ++k) ref.push_back(table[static_cast<std::size_t>(id * 3 + k)]);
    CHECK(y.data().to_vector<float>() == ref);
    // The gradient reaches the head's rows its ids read, never the tail.
    nn::sum_all(y).backward();
    const std::vector<float> g = emb->weight.grad().to_vector<float>();
    for (std::size_t r = 0; r < 4; ++r) CHECK(g[r * 3] == (r == 0 || r == 1 || r == 3 ? 1.f : 0.f));
    CHECK_FALSE(emb->tail.grad().defined());
    emb->zero_grad();
  }
  // Training's ids (all below trained_rows) take the one-table look-up and its gradient check.
  const Tensor train_ids = Tensor::from_vector(std::vector<std::int64_t>{3, 0, 2}, {3});
  TOPO_GRADCHECK([&](const std::vector<nn::Var>& p) {
    emb->weight = p[0];
    return emb->forward(train_ids);
  }, {leaf({4, 3}, 5)});
  CHECK_THROWS_AS(emb->forward(Tensor::from_vector(std::vector<std::int64_t>{6}, {1})), topo::Error);
  CHECK_THROWS_AS(emb->forward(Tensor::from_vector(std::vector<std::int64_t>{-1}, {1})), topo::Error);
  CHECK_THROWS_AS(nn::Embedding(6, 3, false, 7), topo::Error);
  nn::Embedding one(6, 3, false, 6);  // trained_rows = num: one table
  CHECK_FALSE(one.tail.defined());
}

TEST_CASE("Embedding with trained_rows: the split table draws what the whole one would, and so do later parameters") {
  // A table split into its trained rows and a frozen tail is a storage choice: the same seed must give the same
  // model, so a run with the tail (a vocabulary grown by vectors) repeats the run without it.
  struct TableThenLinear : nn::Module {
    TableThenLinear(std::int64_t trained_rows) {
      table = register_module("table", std::make_shared<nn::Embedding>(7, 3, false, trained_rows));
      after = register_module("after", std::make_shared<nn::Linear>(3, 2));
    }
    std::shared_ptr<nn::Embedding> table;
    std::shared_ptr<nn::Linear> after;
  };
  TableThenLinear whole(0), split(5);
  REQUIRE(split.table->tail.defined());
  auto rows_of = [](const nn::Embedding& e) {
    std::vector<float> v = e.weight.data().to_vector<float>();
    if (e.tail.defined())
      for (const float x : e.tail.data().to_vector<float>()) v.push_back(x);
    return v;
  };
  CHECK(rows_of(*split.table) == rows_of(*whole.table));  // at construction too
  for (std::uint64_t seed : {1u, 9u}) {
    whole.reset_parameters(seed);
    split.reset_parameters(seed);
    CHECK(rows_of(*split.table) == rows_of(*whole.table));
    CHECK(split.after->weight.data().to_vector<float>() == whole.after->weight.data().to_vector<float>());
    CHECK(split.after->bias.data().to_vector<float>() == whole.after->bias.data().to_vector<float>());
  }
  CHECK(split.named_parameters().size() == whole.named_parameters().size() + 1);
  CHECK(split.num_parameters(true) == whole.num_parameters(true) - 2 * 3);
}

TEST_CASE("Dropout: identity in eval, inverted-scaled mask in train, seeded by its generator") {
  const Tensor x = Tensor::full({1000}, 2.f);
  nn::Generator gen(123);
  nn::Dropout drop(0.25f, &gen);
  drop.eval();
  const nn::Var xv(x);
  CHECK(drop(xv).same(xv));
  drop.train();
  const auto y = drop(xv).data().to_vector<float>();
  int zeros = 0;
  for (float v : y) {
    CHECK((v == 0.f || std::abs(v - 2.f / 0.75f) < 1e-6f));
    zeros += v == 0.f;
  }
  // Binomial(1000, 0.25): mean 250, sd ~13.7.
  CHECK(zeros > 190);
  CHECK(zeros < 310);
  CHECK(gen.offset() == 1000);
  gen.set_seed(123);
  CHECK(drop(xv).data().to_vector<float>() == y);  // same generator state, same mask
  CHECK_THROWS_AS(nn::Dropout(1.f), topo::Error);
}

TEST_CASE("Activation: apply matches the ops, names parse") {
  const nn::Var x(topo::testing::random_uniform({17}, 51, -2.f, 2.f));
  CHECK(nn::apply(nn::Activation::Relu, x).data().to_vector<float>() == nn::relu(x).data().to_vector<float>());
  CHECK(nn::apply(nn::Activation::Gelu, x).data().to_vector<float>() == nn::gelu(x).data().to_vector<float>());
  CHECK(nn::apply(nn::Activation::Tanh, x).data().to_vector<float>() == nn::tanh(x).data().to_vector<float>());
  CHECK(nn::apply(nn::Activation::LeakyRelu, x, 0.2f).data().to_vector<float>() ==
        nn::leaky_relu(x, 0.2f).data().to_vector<float>());
  CHECK(nn::apply(nn::Activation::Elu, x).data().to_vector<float>() == nn::elu(x).data().to_vector<float>());
  CHECK(nn::apply(nn::Activation::Identity, x).same(x));
  for (auto a : {nn::Activation::Identity, nn::Activation::Relu, nn::Activation::Gelu, nn::Activation::Tanh,
                 nn::Activation::LeakyRelu, nn::Activation::Elu})
    CHECK(nn::parse_activation(nn::activation_name(a)) == a);
  CHECK_THROWS_AS(nn::parse_activation("swish"), topo::Error);
}

TEST_CASE("MLP: forward is the composition of its Linears; dropout only in training") {
  nn::Generator gen(7);
  nn::MLP mlp(6, {9, 4}, 3, nn::Activation::Tanh, 0.5f, &gen);
  mlp.reset_parameters(1);
  CHECK(mlp.num_linear() == 3);
  std::vector<std::string> names;
  for (const auto& [n, v] : mlp.named_parameters()) names.push_back(n);
  CHECK(names.front() == "layers.0.weight");
  CHECK(names.back() == "layers.2.bias");
  const Tensor x = topo::testing::random_uniform({5, 6}, 61);
  mlp.eval();
  const auto y = mlp(nn::Var(x)).data().to_vector<float>();
  std::vector<float> h = x.to_vector<float>();
  std::int64_t width = 6;
  for (std::size_t l = 0; l < 3; ++l) {
    const nn::Linear& lin = mlp.linear(l);
    const auto b = lin.bias.data().to_vector<float>();
    h = naive_linear(h, lin.weight.data().to_vector<float>(), &b, 5, width, lin.out_features());
    if (l < 2)
      for (float& v : h) v = std::tanh(v);
    width = lin.out_features();
  }
  TOPO_CHECK_CLOSE(y, h, 1e-5, 1e-5);
  mlp.train();
  CHECK(mlp(nn::Var(x)).data().to_vector<float>() != y);
  mlp.eval();
  TOPO_GRADCHECK([&](const std::vector<nn::Var>& v) { return mlp(v[0]); }, {leaf({5, 6}, 62)});
}
