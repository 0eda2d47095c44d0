// Multi-Scale Transformer: the α head distribution, scale parsing and widths, the [CLS]-extended window
// topology, an MS layer's attention against the dense double reference on random lengths, the encoder's
// batch independence, and the band path (fused banded attention) against the graph path: its radii are
// exactly the window graph's edges, its outputs and every parameter gradient equal the graph path's.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

#include "models/multiscale_transformer/multiscale_transformer.hpp"
#include "tests/support/dense_attention_reference.hpp"

using namespace topo;
using namespace topo::models;

namespace {

// Two layers of 4 heads of 6 over the scales 1, 3, N/4, a vocabulary of 20: the small text encoder of the tests
// below.
MultiScaleConfig small_text_config() {
  MultiScaleConfig cfg;
  cfg.encoder.vocab_size = 20;
  cfg.encoder.heads = 4;
  cfg.encoder.hidden = 24;
  cfg.encoder.layers = 2;
  cfg.scales = parse_scales("1,3,N/4");
  return cfg;
}

// Sentences of 3, 1 and 8 tokens; token i is (i * stride + shift) % 20.
SequenceBatch three_sentences(std::int64_t stride, std::int64_t shift) {
  SequenceBatch batch;
  batch.lengths = {3, 1, 8};
  std::vector<std::int64_t> ids(12);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = (static_cast<std::int64_t>(i) * stride + shift) % 20;
  batch.token_ids = Tensor::from_vector(ids, {12});
  return batch;
}

}  // namespace

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
  cfg.encoder.input_dim = 3;
  cfg.encoder.heads = 5;
  cfg.encoder.hidden = 35;  // 5 heads of 7
  cfg.encoder.layers = 2;
  cfg.alpha = 0.5;  // layer 0: {3,1,1,0,0}-like groups with a 0-head scale
  MultiScaleTransformer model(cfg);
  model.reset_parameters(11);
  const std::vector<std::int64_t> lengths = {1, 2, 13, 6, 30};
  const auto topology = multiscale_topology(lengths, cfg.scales);
  for (std::size_t l = 0; l < 2; ++l) {
    std::vector<nn::HeadGroup> groups;
    for (std::size_t k = 0; k < topology.scales.size(); ++k) groups.push_back({model.head_counts()[l][k], topology.scales[k]});
    const Tensor x = testing::random_uniform({topology.num_positions(), cfg.encoder.hidden}, 40 + l);
    testing::check_against_dense(*model.layer(l).attention, groups, x, {{"pos", x}}, 9 + l);
  }
}

TEST_CASE("the MS encoder encodes each sentence of a batch as if it were alone") {
  MultiScaleTransformer model(small_text_config());
  model.reset_parameters(5);
  const SequenceBatch batch = three_sentences(7, 0);
  const auto ids = batch.token_ids.to_vector<std::int64_t>();
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

TEST_CASE("the MS sentence feature: [CLS] + max over tokens, or with summary Mean the tokens' mean + their max") {
  MultiScaleConfig cfg = small_text_config();
  const SequenceBatch batch = three_sentences(5, 3);
  MultiScaleTransformer paper(cfg);
  paper.reset_parameters(8);
  cfg.summary = SentenceSummary::Mean;
  MultiScaleTransformer mean(cfg);
  mean.reset_parameters(8);  // the same parameters: the summary adds none
  const Encoding a = paper.encode(batch), b = mean.encode(batch);
  const auto tokens = b.tokens.data().to_vector<float>(), sentences = b.sentences.data().to_vector<float>();
  CHECK(a.tokens.data().to_vector<float>() == tokens);  // the layers are the same; only the sentence feature differs
  std::vector<float> expected;
  std::int64_t offset = 0;
  for (std::int64_t n : batch.lengths) {
    for (std::int64_t c = 0; c < 24; ++c) {
      float sum = 0.f, max = -std::numeric_limits<float>::infinity();
      for (std::int64_t i = offset; i < offset + n; ++i) {
        sum += tokens[static_cast<std::size_t>(i * 24 + c)];
        max = std::max(max, tokens[static_cast<std::size_t>(i * 24 + c)]);
      }
      expected.push_back(sum / static_cast<float>(n) + max);
    }
    offset += n;
  }
  TOPO_CHECK_CLOSE(sentences, expected, 1e-5, 1e-5);
  const auto paper_sentences = a.sentences.data().to_vector<float>();
  float largest_difference = 0.f;  // [CLS] + max differs from mean + max
  for (std::size_t i = 0; i < expected.size(); ++i)
    largest_difference = std::max(largest_difference, std::abs(paper_sentences[i] - expected[i]));
  CHECK(largest_difference > 1e-2f);
  nn::sum_all(b.sentences).backward();
  CHECK(mean.cls.grad().defined());  // [CLS] is still a position the tokens' windows read
}

TEST_CASE("band radii are exactly the window graph: [CLS] first, widths from the token count, clipped ends") {
  MultiScaleConfig cfg;
  cfg.encoder.input_dim = 3;
  cfg.encoder.heads = 10;
  cfg.encoder.hidden = 30;
  cfg.encoder.layers = 2;  // alpha 0.5: layer 0 {4,3,2,1,0}-like (a 0-head scale), layer 1 {2,2,2,2,2}
  const MultiScaleTransformer model(cfg);
  const std::vector<std::int64_t> lengths = {1, 2, 4, 15, 16, 17, 33, 63, 64, 65, 130};
  const auto topology = multiscale_topology(lengths, cfg.scales);
  for (std::size_t l = 0; l < 2; ++l) {
    const auto radii = model.band_radii(l, lengths);
    REQUIRE(radii.size() == lengths.size() * 10);
    std::int64_t head = 0;
    for (std::size_t k = 0; k < cfg.scales.size(); ++k) {
      const auto indptr = topology.scales[k].in.indptr.to_vector<std::int32_t>();
      const auto indices = topology.scales[k].in.indices.to_vector<std::int32_t>();
      for (std::int64_t g = 0; g < model.head_counts()[l][k]; ++g, ++head) {
        std::int64_t begin = 0;  // first position of sentence b
        for (std::size_t b = 0; b < lengths.size(); ++b) {
          const std::int64_t r = radii[b * 10 + static_cast<std::size_t>(head)], positions = lengths[b] + 1;
          for (std::int64_t i = begin; i < begin + positions; ++i) {
            std::vector<std::int32_t> band;  // what the band kernel lets position i see
            for (std::int64_t j = begin; j < begin + positions; ++j)
              if (std::abs(i - j) <= r) band.push_back(static_cast<std::int32_t>(j));
            std::vector<std::int32_t> graph(indices.begin() + indptr[i], indices.begin() + indptr[i + 1]);
            std::sort(graph.begin(), graph.end());
            INFO("layer " << l << " scale " << cfg.scales[k].str() << " sentence " << b << " position " << i - begin);
            REQUIRE(band == graph);
          }
          begin += positions;
        }
      }
    }
    CHECK(head == 10);
  }
}

TEST_CASE("the MS band path equals the graph path: outputs and every parameter gradient, random lengths") {
  for (const char* scales : {"1,3,N/16,N/8,N/4", "3,N/2,N/1"}) {  // N/1: windows wider than the sentence
    CAPTURE(scales);
    MultiScaleConfig cfg;
    cfg.encoder.vocab_size = 50;
    cfg.encoder.heads = 5;
    cfg.encoder.hidden = 35;  // 5 heads of 7
    cfg.encoder.layers = 2;
    cfg.alpha = 0.5;
    cfg.scales = parse_scales(scales);
    cfg.encoder.max_length = 256;
    MultiScaleTransformer model(cfg);
    model.reset_parameters(17);
    std::mt19937 rng(5);
    SequenceBatch batch;
    batch.lengths = {1, 2, 130};  // plus random lengths: fractional widths of every parity
    for (int i = 0; i < 6; ++i) batch.lengths.push_back(std::uniform_int_distribution<std::int64_t>(3, 90)(rng));
    std::vector<std::int64_t> ids(static_cast<std::size_t>(std::accumulate(batch.lengths.begin(), batch.lengths.end(), std::int64_t{0})));
    for (auto& id : ids) id = std::uniform_int_distribution<std::int64_t>(0, 49)(rng);
    batch.token_ids = Tensor::from_vector(ids, {static_cast<std::int64_t>(ids.size())});
    const Tensor rt = testing::random_uniform({static_cast<std::int64_t>(ids.size()), 35}, 3);
    const Tensor rs = testing::random_uniform({static_cast<std::int64_t>(batch.lengths.size()), 35}, 4);
    // One loss over tokens and sentence features; returns the encoding and every parameter's gradient.
    auto run = [&](const std::function<Encoding()>& encode) {
      model.zero_grad();
      const Encoding e = encode();
      (nn::sum_all(e.tokens * nn::Var(rt)) + nn::sum_all(e.sentences * nn::Var(rs))).backward();
      std::vector<std::vector<float>> grads;
      for (const auto& [name, p] : model.named_parameters())
        grads.push_back(p.grad().defined() ? p.grad().to_vector<float>() : std::vector<float>{});
      return std::pair{e, grads};
    };
    const auto [band, band_grads] = run([&] { return model.encode_band(batch); });
    const auto [graph, graph_grads] = run([&] { return model.encode(batch, multiscale_topology(batch.lengths, cfg.scales)); });
    TOPO_CHECK_CLOSE(band.tokens.data().to_vector<float>(), graph.tokens.data().to_vector<float>(), 1e-5, 1e-4);
    TOPO_CHECK_CLOSE(band.sentences.data().to_vector<float>(), graph.sentences.data().to_vector<float>(), 1e-5, 1e-4);
    const auto named = model.named_parameters();
    for (std::size_t i = 0; i < named.size(); ++i) {
      INFO("gradient of " << named[i].first);
      REQUIRE(band_grads[i].size() == graph_grads[i].size());
      TOPO_CHECK_CLOSE(band_grads[i], graph_grads[i], 1e-4, 1e-3);
    }
    CHECK(model.config().band);  // encode() takes the band path by default
    const Encoding by_default = model.encode(batch);
    CHECK(by_default.tokens.data().to_vector<float>() == band.tokens.data().to_vector<float>());
  }
}
