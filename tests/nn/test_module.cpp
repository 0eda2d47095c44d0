// Module bookkeeping: hierarchical names, counts, mode propagation, zero_grad, seeded reset.
#include <doctest/doctest.h>

#include "nn/layers.hpp"
#include "tests/nn/nn_testing.hpp"

namespace nn = topo::nn;
using topo::Tensor;

namespace {

struct Attn : nn::Module {
  std::shared_ptr<nn::Linear> q, k;
  Attn() {
    q = register_module("q", std::make_shared<nn::Linear>(4, 4));
    k = register_module("k", std::make_shared<nn::Linear>(4, 4, false));
  }
};

struct Net : nn::Module {
  std::shared_ptr<nn::Embedding> emb;
  std::shared_ptr<nn::ModuleList> layers;
  nn::Var scale;
  Net() {
    emb = register_module("emb", std::make_shared<nn::Embedding>(10, 4));
    layers = register_module("layers", std::make_shared<nn::ModuleList>());
    layers->push_back(std::make_shared<Attn>());
    layers->push_back(std::make_shared<Attn>());
    scale = register_parameter("scale", {4}, nn::init::InitSpec::ones());
  }
};

}  // namespace

TEST_CASE("module: hierarchical names in registration order, counts") {
  Net net;
  std::vector<std::string> names;
  for (const auto& [n, v] : net.named_parameters()) names.push_back(n);
  const std::vector<std::string> expected = {"scale",           "emb.weight",       "layers.0.q.weight",
                                             "layers.0.q.bias", "layers.0.k.weight", "layers.1.q.weight",
                                             "layers.1.q.bias", "layers.1.k.weight"};
  CHECK(names == expected);
  CHECK(net.parameters().size() == expected.size());
  CHECK(net.parameters()[2].same(net.layers->at<Attn>(0)->q->weight));
  CHECK(net.num_parameters() == 4 + 40 + 2 * (16 + 4 + 16));
  std::vector<std::string> modules;
  for (const auto& [n, m] : net.named_modules()) modules.push_back(n);
  CHECK(modules == std::vector<std::string>{"emb", "layers", "layers.0", "layers.0.q", "layers.0.k", "layers.1",
                                            "layers.1.q", "layers.1.k"});
  CHECK_THROWS_AS(net.layers->at<nn::Linear>(0), topo::Error);
  CHECK(net.init_spec("layers.1.q.weight").kind == nn::init::InitSpec::Kind::KaimingUniform);
  CHECK_THROWS_AS(net.init_spec("nope"), topo::Error);
}

TEST_CASE("module: duplicate or dotted names are errors") {
  struct Bad : nn::Module {
    explicit Bad(int which) {
      register_parameter("w", {2}, nn::init::InitSpec::zeros());
      if (which == 0) register_parameter("w", {2}, nn::init::InitSpec::zeros());
      if (which == 1) register_module("w", std::make_shared<nn::Linear>(2, 2));
      if (which == 2) register_parameter("a.b", {2}, nn::init::InitSpec::zeros());
      if (which == 3) register_parameter("k", {2}, nn::init::InitSpec::keep());
    }
  };
  for (int which = 0; which < 4; ++which) CHECK_THROWS_AS(Bad{which}, topo::Error);
}

TEST_CASE("module: train/eval reach every descendant, also ones added later") {
  Net net;
  net.eval();
  for (const auto& [n, m] : net.named_modules()) CHECK_FALSE(m->is_training());
  auto extra = net.layers->push_back(std::make_shared<Attn>());
  CHECK_FALSE(extra->q->is_training());  // a child adopts its parent's mode
  net.train();
  for (const auto& [n, m] : net.named_modules()) CHECK(m->is_training());
}

TEST_CASE("module: zero_grad, trainable counts, to(cpu) keeps data") {
  Net net;
  nn::Var ids_loss = nn::sum_all(net.layers->at<Attn>(0)->q->forward(net.emb->forward(Tensor::arange(3))));
  ids_loss.backward();
  CHECK(net.emb->weight.grad().defined());
  net.zero_grad();
  for (const auto& v : net.parameters()) CHECK_FALSE(v.grad().defined());
  const auto before = net.emb->weight.data().to_vector<float>();
  net.to(topo::Device::cpu());
  CHECK(net.emb->weight.data().to_vector<float>() == before);
  nn::Embedding frozen(5, 3, true);
  CHECK(frozen.num_parameters() == 15);
  CHECK(frozen.num_parameters(true) == 0);
}

TEST_CASE("module: reset_parameters is deterministic by seed and keeps Keep specs") {
  Net a, b;
  a.reset_parameters(42);
  b.reset_parameters(42);
  const auto pa = a.named_parameters(), pb = b.named_parameters();
  for (std::size_t i = 0; i < pa.size(); ++i) {
    INFO(pa[i].first);
    CHECK(pa[i].second.data().to_vector<float>() == pb[i].second.data().to_vector<float>());
  }
  b.reset_parameters(43);
  CHECK(a.emb->weight.data().to_vector<float>() != b.emb->weight.data().to_vector<float>());
  // Two parameters of one shape in one model draw different values (seed per index).
  CHECK(a.layers->at<Attn>(0)->q->weight.data().to_vector<float>() !=
        a.layers->at<Attn>(1)->q->weight.data().to_vector<float>());
  CHECK(a.scale.data().to_vector<float>() == std::vector<float>(4, 1.f));

  const Tensor pre = topo::testing::random_uniform({6, 3}, 5);
  auto emb = nn::Embedding::from_pretrained(pre, false);
  emb->reset_parameters(7);
  CHECK(emb->weight.data().to_vector<float>() == pre.to_vector<float>());
  CHECK(emb->weight.requires_grad());
}

TEST_CASE("module: a submodule shared under two names (tied weights) is listed and reset once") {
  struct Tied : nn::Module {
    std::shared_ptr<nn::Linear> shared;
    Tied() {
      shared = register_module("encoder", std::make_shared<nn::Linear>(3, 3));
      register_module("decoder", shared);
    }
  } tied;
  std::vector<std::string> names;
  for (const auto& [n, v] : tied.named_parameters()) names.push_back(n);
  CHECK(names == std::vector<std::string>{"encoder.weight", "encoder.bias"});
  CHECK(tied.num_parameters() == 12);
  CHECK(tied.named_modules().size() == 2);  // both names still reach the module (for train/eval)
  tied.reset_parameters(3);
  nn::Linear fresh(3, 3);
  fresh.reset_parameters(3);  // same indices 0 and 1 => same draws
  CHECK(tied.shared->weight.data().to_vector<float>() == fresh.weight.data().to_vector<float>());
}
