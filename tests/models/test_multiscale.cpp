// Multi-Scale Transformer: the α head distribution, scale parsing and widths, the [CLS]-extended window
// topology, an MS layer's attention against the dense double reference on random lengths, and the encoder's
// batch independence.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "models/multiscale_transformer/multiscale_transformer.hpp"
#include "tests/support/dense_attention_reference.hpp"

using namespace topo;
using namespace topo::models;

TEST_CASE("head_distribution: the alpha rule, rounding that always sums to the head count") {
  using Rows = std::vector<std::vector<std::int64_t>>;
  // The paper's worked example setting (α = 0.5, 10 heads, 3 layers, 5 scales): what our formula gives.
  CHECK(head_distribution(0.5, 3, 5, 10) == Rows{{7, 2, 1, 0, 0}, {4, 3, 1, 1, 1}, {2, 2, 2, 2, 2}});
  // α = 0: uniform in every layer (ties of the remainder go to the smaller scales).
  CHECK(head_distribution(0.0, 2, 5, 10) == Rows{{2, 2, 2, 2, 2}, {2, 2, 2, 2, 2}});
  CHECK(head_distribution(0.0, 1, 3, 7) == Rows{{3, 2, 2}});
  CHECK(head_distribution(1.0, 1, 5, 10) == Rows{{2, 2, 2, 2, 2}});  // one layer = the top layer: uniform
  for (double alpha : {1.0, 0.5, 0.0, -0.5, -1.0})
    for (std::int64_t layers = 1; layers <= 6; ++layers)
      for (std::int64_t k = 1; k <= 6; ++k)
        for (std::int64_t heads = 1; heads <= 12; ++heads) {
          const Rows rows = head_distribution(alpha, layers, k, heads);
          REQUIRE(rows.size() == static_cast<std::size_t>(layers));
          for (std::size_t l = 0; l < rows.size(); ++l) {
            INFO("alpha " << alpha << " layers " << layers << " scales " << k << " heads " << heads << " layer " << l);
            CHECK(std::accumulate(rows[l].begin(), rows[l].end(), std::int64_t{0}) == heads);
            CHECK(*std::min_element(rows[l].begin(), rows[l].end()) >= 0);
            if (alpha > 0) CHECK(std::is_sorted(rows[l].rbegin(), rows[l].rend()));  // small scales first
            // Largest remainder: every count is within 1 of its exact share softmax(z)_k * heads.
            double z_sum = 0;
            std::vector<double> z(static_cast<std::size_t>(k));
            for (std::int64_t i = 0; i < k; ++i)
              z_sum += z[static_cast<std::size_t>(i)] = std::exp(alpha * static_cast<double>(layers - 1 - static_cast<std::int64_t>(l)) * static_cast<double>(k - 1 - i));
            for (std::int64_t i = 0; i < k; ++i)
              CHECK(std::abs(static_cast<double>(rows[l][static_cast<std::size_t>(i)]) - z[static_cast<std::size_t>(i)] / z_sum * static_cast<double>(heads)) < 1.0);
          }
          const auto& top = rows.back();
          CHECK(*std::max_element(top.begin(), top.end()) - *std::min_element(top.begin(), top.end()) <= 1);
        }
  CHECK_THROWS_AS(head_distribution(0.5, 0, 5, 10), Error);
}

TEST_CASE("scales: parsing, per-sentence widths") {
  const auto s = parse_scales("1, 3,N/16,N/8,N/4");
  REQUIRE(s.size() == 5);
  CHECK(scales_str(s) == "1,3,N/16,N/8,N/4");
  CHECK(s[1].width_for(100) == 3);
  CHECK(s[2].width_for(1) == 1);
  CHECK(s[2].width_for(100) == 7);   // ceil(100/16) = 7
  CHECK(s[3].width_for(16) == 3);    // ceil(16/8) = 2 -> odd 3
  CHECK(s[4].width_for(9) == 3);     // ceil(9/4) = 3
  CHECK_THROWS_WITH_AS(parse_scales("1,2"), doctest::Contains("must be odd"), Error);
  CHECK_THROWS_WITH_AS(parse_scales("1,N/0"), doctest::Contains("positive"), Error);
  CHECK_THROWS_WITH_AS(parse_scales("3,3"), doctest::Contains("named twice"), Error);
  CHECK_THROWS_WITH_AS(parse_scales("1,,3"), doctest::Contains("empty entry"), Error);
  CHECK_THROWS_WITH_AS(parse_scales("x"), doctest::Contains("'x' is not a whole number"), Error);
}

TEST_CASE("multiscale_topology: [CLS] is an ordinary first position of every window") {
  const auto t = multiscale_topology({1, 4}, parse_scales("1,3,N/2"));
  CHECK(t.num_positions() == 7);
  const auto in = t.scales[1].in;  // width 3
  const auto indptr = in.indptr.to_vector<std::int32_t>(), indices = in.indices.to_vector<std::int32_t>();
  auto context = [&](std::int64_t i) {
    return std::vector<std::int32_t>(indices.begin() + indptr[i], indices.begin() + indptr[i + 1]);
  };
  CHECK(context(0) == std::vector<std::int32_t>{0, 1});     // sentence 0: [CLS] and its one token
  CHECK(context(2) == std::vector<std::int32_t>{2, 3});     // sentence 1's [CLS]
  CHECK(context(3) == std::vector<std::int32_t>{2, 3, 4});  // its first token sees [CLS]
  // N/2 for n = 4 tokens: ceil(4/2) = 2 -> width 3; for n = 1: width 1.
  CHECK(t.scales[2].in.indptr.to_vector<std::int32_t>() == std::vector<std::int32_t>{0, 1, 2, 4, 7, 10, 13, 15});
}

TEST_CASE("an MS layer's attention equals the dense masked reference on random lengths") {
  MultiScaleConfig cfg;
  cfg.input_dim = 3;
  cfg.heads = 5;
  cfg.hidden = 35;  // 5 heads of 7
  cfg.layers = 2;
  cfg.alpha = 0.5;  // layer 0: {3,1,1,0,0}-like groups with a 0-head scale
  MultiScaleTransformer model(cfg);
  model.reset_parameters(11);
  const std::vector<std::int64_t> lengths = {1, 2, 13, 6, 30};
  const auto topology = multiscale_topology(lengths, cfg.scales);
  for (std::size_t l = 0; l < 2; ++l) {
    std::vector<nn::HeadGroup> groups;
    for (std::size_t k = 0; k < topology.scales.size(); ++k) groups.push_back({model.head_counts()[l][k], topology.scales[k]});
    const Tensor x = testing::random_uniform({topology.num_positions(), cfg.hidden}, 40 + l);
    testing::check_against_dense(*model.layer(l).attention, groups, x, {{"pos", x}}, 9 + l);
  }
}

TEST_CASE("the MS encoder encodes each sentence of a batch as if it were alone") {
  MultiScaleConfig cfg;
  cfg.vocab_size = 20;
  cfg.heads = 4;
  cfg.hidden = 24;  // 4 heads of 6
  cfg.layers = 2;
  cfg.scales = parse_scales("1,3,N/4");
  MultiScaleTransformer model(cfg);
  model.reset_parameters(5);
  SequenceBatch batch;
  batch.lengths = {3, 1, 8};
  std::vector<std::int64_t> ids(12);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>((i * 7) % 20);
  batch.token_ids = Tensor::from_vector(ids, {12});
  const Encoding all = model.encode(batch);
  REQUIRE(all.tokens.shape() == Shape{12, 24});
  REQUIRE(all.sentences.shape() == Shape{3, 24});
  std::int64_t offset = 0;
  for (std::size_t b = 0; b < 3; ++b) {
    SequenceBatch one;
    one.lengths = {batch.lengths[b]};
    one.token_ids = Tensor::from_vector(std::vector<std::int64_t>(ids.begin() + offset, ids.begin() + offset + batch.lengths[b]),
                                        {batch.lengths[b]});
    const Encoding alone = model.encode(one);
    const auto all_tokens = all.tokens.data().to_vector<float>(), all_sent = all.sentences.data().to_vector<float>();
    TOPO_CHECK_CLOSE(alone.tokens.data().to_vector<float>(),
                     std::vector<float>(all_tokens.begin() + offset * 24, all_tokens.begin() + (offset + batch.lengths[b]) * 24),
                     1e-5, 1e-5);
    TOPO_CHECK_CLOSE(alone.sentences.data().to_vector<float>(),
                     std::vector<float>(all_sent.begin() + static_cast<std::int64_t>(b) * 24, all_sent.begin() + (static_cast<std::int64_t>(b) + 1) * 24),
                     1e-5, 1e-5);
    offset += batch.lengths[b];
  }
  nn::sum_all(all.sentences).backward();
  CHECK(model.cls.grad().defined());
}
