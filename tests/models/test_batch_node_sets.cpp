// Typed node sets in a batch: counts, offsets and rows per type, checked at the boundary; per-type readouts
// through the one readout_nodes API.
#include <doctest/doctest.h>

#include "models/model.hpp"
#include "nn/readout.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::models;

TEST_CASE("a batch carries node sets per example beside its tokens") {
  SequenceBatch batch;
  batch.lengths = {3, 4, 6};
  batch.token_ids = Tensor::from_vector(std::vector<std::int64_t>(13, 1), {13});
  NodeSet words;
  words.counts = {0, 1, 5};
  words.ids = Tensor::from_vector(std::vector<std::int64_t>{7, 8, 9, 10, 11, 12}, {6});
  words.spans = Tensor::from_vector(std::vector<std::int64_t>{1, 2, 0, 2, 1, 1, 1, 4, 4, 5, 0, 5}, {6, 2});
  batch.node_sets["word"] = words;
  batch.node_sets["sent"] = NodeSet{{1, 1, 1}};
  batch.validate();
  CHECK(batch.node_set("word").offsets() == std::vector<std::int64_t>{0, 0, 1, 6});
  CHECK(batch.node_set("sent").total() == 3);
  CHECK(batch.tokens().counts == batch.lengths);
  CHECK_THROWS_WITH_AS(batch.node_set("radical"), doctest::Contains("token, sent, word"), Error);
  const SequenceBatch moved = batch.to(Device::cpu());
  CHECK(moved.node_set("word").spans.to_vector<std::int64_t>() == words.spans.to_vector<std::int64_t>());

  // Per-type readout: the mean word state per sentence (0 for the sentence without words).
  const Tensor states = testing::random_uniform({6, 2}, 4);
  const auto x = states.to_vector<float>();
  const auto mean = nn::readout_nodes(nn::Var(states), batch.node_set("word").counts, nn::Readout::Mean).data().to_vector<float>();
  CHECK(mean[0] == 0.f);
  CHECK(mean[1] == 0.f);
  CHECK(mean[2] == doctest::Approx(x[0]));
  CHECK(mean[4] == doctest::Approx((x[2] + x[4] + x[6] + x[8] + x[10]) / 5));

  SequenceBatch bad = batch;
  bad.node_sets["word"].counts = {0, 1};
  CHECK_THROWS_WITH_AS(bad.validate(), doctest::Contains("node set 'word' has counts for 2 examples"), Error);
  bad = batch;
  bad.node_sets["word"].ids = Tensor::from_vector(std::vector<std::int64_t>{1, 2}, {2});
  CHECK_THROWS_WITH_AS(bad.validate(), doctest::Contains("node set 'word' has 6 nodes but ids"), Error);
  bad = batch;
  bad.node_sets["word"].spans = Tensor::from_vector(std::vector<std::int64_t>{1, 2}, {1, 2});
  CHECK_THROWS_WITH_AS(bad.validate(), doctest::Contains("spans"), Error);
  bad = batch;
  bad.node_sets["token"] = NodeSet{{1, 1, 1}};
  CHECK_THROWS_AS(bad.validate(), Error);
}
