// Per-sentence readouts against host loops (equal and ragged lengths) with finite-difference gradients, the
// DeepSets encoder against a hand-computed forward, and the task heads' shapes and pair features.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "kernels/dense/indexing.hpp"
#include "kernels/error.hpp"
#include "models/baselines/deepsets.hpp"
#include "models/heads.hpp"
#include "nn/gradcheck.hpp"
#include "nn/ops.hpp"
#include "nn/readout.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::models;

namespace {

std::vector<float> reference_pool(const std::vector<float>& x, std::int64_t hidden, const std::vector<std::int64_t>& lengths,
                                  nn::Readout pooling) {
  std::vector<float> out;
  std::int64_t row = 0;
  for (std::int64_t len : lengths) {
    for (std::int64_t h = 0; h < hidden; ++h) {
      double acc = pooling == nn::Readout::Max ? -std::numeric_limits<double>::infinity() : 0.0;
      for (std::int64_t i = 0; i < len; ++i) {
        const double v = x[static_cast<std::size_t>((row + i) * hidden + h)];
        acc = pooling == nn::Readout::Max ? std::max(acc, v) : acc + v;
      }
      if (pooling == nn::Readout::Mean) acc /= static_cast<double>(len);
      if (len == 0) acc = 0.0;  // an example without rows reads 0
      out.push_back(static_cast<float>(acc));
    }
    row += len;
  }
  return out;
}

}  // namespace

TEST_CASE("readout_nodes matches host loops and finite differences") {
  const std::vector<std::vector<std::int64_t>> cases = {{1}, {7, 7, 7}, {1, 7, 31, 2}, {33, 1}, {0, 3, 0, 2}};
  for (const auto& lengths : cases) {
    const std::int64_t total = std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0});
    for (std::int64_t hidden : {1, 7}) {
      const Tensor x = testing::random_uniform({total, hidden}, 11 + total * 3 + hidden);
      for (nn::Readout p : {nn::Readout::Sum, nn::Readout::Mean, nn::Readout::Max}) {
        INFO("lengths " << lengths.size() << " total " << total << " hidden " << hidden << " " << nn::readout_name(p));
        const nn::Var out = nn::readout_nodes(nn::Var(x), lengths, p);
        REQUIRE(out.shape() == Shape{static_cast<std::int64_t>(lengths.size()), hidden});
        TOPO_CHECK_CLOSE(out.data().to_vector<float>(), reference_pool(x.to_vector<float>(), hidden, lengths, p), 1e-5,
                         1e-5);
        if (total <= 40) {
          const auto r = nn::gradcheck([&](const std::vector<nn::Var>& in) { return nn::readout_nodes(in[0], lengths, p); },
                                       {nn::Var(x, true)});
          INFO(r.message);
          CHECK(r.ok);
        }
      }
    }
  }
  CHECK_THROWS_AS(nn::readout_nodes(nn::Var(Tensor::zeros({5, 2})), {2, 2}, nn::Readout::Sum), Error);
  CHECK_THROWS_AS(nn::readout_nodes(nn::Var(Tensor::zeros({2, 2})), {3, -1}, nn::Readout::Sum), Error);
  CHECK_THROWS_AS(nn::parse_readout("median"), Error);
}

TEST_CASE("DeepSets: phi per token, then pooling per sentence") {
  DeepSetsOptions o;
  o.in_dim = 3;
  o.hidden = 4;
  o.layers = 1;
  o.pooling = nn::Readout::Sum;
  auto enc = std::make_shared<DeepSetsEncoder>(o);
  enc->reset_parameters(5);
  SequenceBatch batch;
  batch.lengths = {2, 1};
  batch.features = testing::random_uniform({3, 3}, 3);
  const Encoding e = enc->encode(batch);
  REQUIRE(e.tokens.shape() == Shape{3, 4});
  REQUIRE(e.sentences.shape() == Shape{2, 4});
  // Host reference: relu(x W^T + b), then per-sentence sums.
  const auto named = enc->named_parameters();
  REQUIRE(named.size() == 2u);
  CHECK(named[0].first == "phi.0.weight");
  const auto w = named[0].second.data().to_vector<float>(), b = named[1].second.data().to_vector<float>(),
             x = batch.features.to_vector<float>();
  std::vector<float> tokens;
  for (int t = 0; t < 3; ++t)
    for (int h = 0; h < 4; ++h) {
      double acc = b[static_cast<std::size_t>(h)];
      for (int i = 0; i < 3; ++i) acc += double(x[static_cast<std::size_t>(t * 3 + i)]) * w[static_cast<std::size_t>(h * 3 + i)];
      tokens.push_back(static_cast<float>(std::max(acc, 0.0)));
    }
  TOPO_CHECK_CLOSE(e.tokens.data().to_vector<float>(), tokens, 1e-5, 1e-5);
  TOPO_CHECK_CLOSE(e.sentences.data().to_vector<float>(), reference_pool(tokens, 4, {2, 1}, nn::Readout::Sum), 1e-5, 1e-5);

  SequenceBatch wrong;
  wrong.lengths = {3};
  wrong.features = Tensor::zeros({3, 5});
  CHECK_THROWS_AS(enc->encode(wrong), Error);
  o.layers = 0;
  CHECK_THROWS_AS(DeepSetsEncoder{o}, Error);
}

TEST_CASE("heads: output shapes, parameter names, pair features") {
  DeepSetsOptions o;
  o.in_dim = 2;
  o.hidden = 6;
  o.layers = 1;
  o.pooling = nn::Readout::Mean;
  auto make = [&] { return std::make_shared<DeepSetsEncoder>(o); };
  SequenceBatch batch;
  batch.lengths = {3, 1, 2};
  batch.features = testing::random_uniform({6, 2}, 8);
  HeadOptions head;
  head.hidden = {5};

  SequenceRegressor reg(make(), 4, head);
  CHECK(reg.forward(batch).shape() == Shape{3, 4});
  CHECK(reg.named_parameters().front().first == "encoder.phi.0.weight");
  CHECK(reg.named_parameters().back().first == "head.layers.1.bias");
  SequenceClassifier cls(make(), 5);
  CHECK(cls.forward(batch).shape() == Shape{3, 5});
  TokenTagger tag(make(), 7, head);
  CHECK(tag.forward(batch).shape() == Shape{6, 7});

  // The pair classifier with a one-Linear head: logits = [r1; r2; |r1-r2|; r1*r2] W^T + b, checked on the host.
  PairClassifier pair(make(), 3);
  pair.reset_parameters(2);
  SequenceBatch other;
  other.lengths = {1, 1, 4};
  other.features = testing::random_uniform({6, 2}, 9);
  // One batch of both: the 3 premises, then the 3 hypotheses (one pass, one graph).
  SequenceBatch pairs;
  pairs.lengths = {3, 1, 2, 1, 1, 4};
  pairs.features = topo::concat({batch.features, other.features}, 0);
  const auto logits = pair.forward(pairs).data().to_vector<float>();
  CHECK_THROWS_AS(pair.forward(batch), Error);  // an odd number of sequences is no batch of pairs
  const auto r1 = pair.encoder()->encode(batch).sentences.data().to_vector<float>();
  const auto r2 = pair.encoder()->encode(other).sentences.data().to_vector<float>();
  const auto named = pair.named_parameters();
  const auto w = named[named.size() - 2].second.data().to_vector<float>(), b = named.back().second.data().to_vector<float>();
  std::vector<float> expected;
  for (int s = 0; s < 3; ++s)
    for (int c = 0; c < 3; ++c) {
      double acc = b[static_cast<std::size_t>(c)];
      for (int h = 0; h < 6; ++h) {
        const double a = r1[static_cast<std::size_t>(s * 6 + h)], z = r2[static_cast<std::size_t>(s * 6 + h)];
        const double feats[4] = {a, z, std::abs(a - z), a * z};
        for (int f = 0; f < 4; ++f) acc += feats[f] * w[static_cast<std::size_t>(c * 24 + f * 6 + h)];
      }
      expected.push_back(static_cast<float>(acc));
    }
  TOPO_CHECK_CLOSE(logits, expected, 1e-5, 1e-5);
  CHECK_THROWS_AS(SequenceRegressor(nullptr, 2), Error);
}
