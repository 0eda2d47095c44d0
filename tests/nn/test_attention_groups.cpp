// GraphMultiHeadAttention over head groups (each group its own block) and over typed sources (characters
// attending over words and a sentence node), against the dense masked reference in double precision
// (tests/support/dense_attention_reference.hpp).
#include <doctest/doctest.h>

#include "tests/support/dense_attention_reference.hpp"

using namespace topo;
using testing::check_against_dense;


TEST_CASE("head groups on different windows equal a dense masked reference (forward and every gradient)") {
  // Random lengths in one batch, including 1 and 2; windows 1, 3, wider than every sentence, and a width
  // per sentence (ceil(n/4) rounded up to odd); a group of 0 heads.
  const std::vector<std::int64_t> lengths = {1, 2, 9, 5, 17, 4};
  const auto fractional = builders::fractional_widths(lengths, 4);
  HeteroGraph g({builders::node_type("tok", lengths)},
                {{{"tok", "w1", "tok"}, builders::window_batch(lengths, 1)},
                 {{"tok", "w3", "tok"}, builders::window_batch(lengths, 3)},
                 {{"tok", "wide", "tok"}, builders::window_batch(lengths, 41)},
                 {{"tok", "quarter", "tok"}, builders::window_batch(lengths, fractional)}});
  const std::int64_t n = g.num_nodes("tok");
  struct Case {
    std::int64_t head_dim;
    std::vector<std::int64_t> group_heads;  // on w1, w3, wide, quarter, and w3 again
  };
  for (const Case& c : {Case{7, {2, 1, 0, 1, 2}}, Case{64, {1, 0, 1, 1, 1}}, Case{7, {0, 0, 3, 0, 0}}}) {
    std::int64_t heads = 0;
    for (std::int64_t h : c.group_heads) heads += h;
    const std::int64_t dim = heads * c.head_dim;
    INFO("head dim " << c.head_dim << ", heads " << heads);
    nn::GraphMultiHeadAttention layer(dim, heads);
    layer.reset_parameters(static_cast<std::uint64_t>(dim));
    const std::vector<std::string> names = {"w1", "w3", "wide", "quarter", "w3"};
    std::vector<nn::HeadGroup> groups;
    for (std::size_t i = 0; i < names.size(); ++i) groups.push_back({c.group_heads[i], relation_block(g, names[i])});
    const Tensor x = testing::random_uniform({n, dim}, 17 + static_cast<std::uint64_t>(dim));
    check_against_dense(layer, groups, x, {{"tok", x}}, 5);
  }
}

TEST_CASE("head groups: counts must add up to the layer's heads and blocks must share their nodes") {
  HeteroGraph g({builders::node_type("tok", {3, 2})},
                {{{"tok", "w1", "tok"}, builders::window_batch({3, 2}, 1)},
                 {{"tok", "w3", "tok"}, builders::window_batch({3, 2}, 3)}});
  HeteroGraph other({builders::node_type("tok", {4})}, {{{"tok", "w1", "tok"}, builders::window_batch({4}, 1)}});
  nn::GraphMultiHeadAttention layer(6, 3);
  const nn::Var x(testing::random_uniform({5, 6}, 1));
  CHECK_THROWS_WITH_AS(layer.forward({{1, relation_block(g, "w1")}, {1, relation_block(g, "w3")}}, x),
                       doctest::Contains("hold 2 heads, the layer has 3"), Error);
  CHECK_THROWS_WITH_AS(layer.forward({{2, relation_block(g, "w1")}, {1, relation_block(other, "w1")}}, x),
                       doctest::Contains("head group 1 attends over other nodes"), Error);
  CHECK(layer.forward({{3, relation_block(g, "w3")}, {0, relation_block(g, "w1")}}, x).shape() == Shape{5, 6});
}

TEST_CASE("characters attend over the words containing them and their sentence node, in one softmax") {
  // Sentence 0: 3 chars, no word. Sentence 1: 4 chars, one word [1, 2]. Sentence 2: 6 chars, overlapping and
  // nested words [0, 2], [1, 1], [1, 4], [4, 5], [0, 5] (char 1 is in four words).
  const std::vector<std::int64_t> chars = {3, 4, 6};
  const std::vector<std::vector<builders::Span>> spans = {{}, {{1, 2}}, {{0, 2}, {1, 1}, {1, 4}, {4, 5}, {0, 5}}};
  const auto words = builders::span_counts(spans);
  const auto edges = builders::bipartite_spans_batch(chars, spans);
  HeteroGraph g({builders::node_type("char", chars), builders::node_type("word", words),
                 builders::node_type("sent", builders::ones(3))},
                {{{"word", "contains", "char"}, edges.contains},
                 {{"sent", "from_sent", "char"}, builders::from_one_batch(chars)}});
  const std::int64_t dim = 14, heads = 2;
  nn::GraphMultiHeadAttention layer(dim, heads);
  layer.reset_parameters(3);
  const Tensor h = testing::random_uniform({13, dim}, 1), w = testing::random_uniform({6, dim}, 2),
               s = testing::random_uniform({3, dim}, 3);
  SUBCASE("words and sentence") {
    const Block b = to_block(g, "char", {"contains", "from_sent"});
    CHECK(b.src_types == std::vector<std::string>{"word", "sent"});
    check_against_dense(layer, {{heads, b}}, h, {{"word", w}, {"sent", s}}, 7);
  }
  SUBCASE("words only: characters outside every word read nothing") {
    const Block b = to_block(g, "char", {"contains"});
    check_against_dense(layer, {{heads, b}}, h, {{"word", w}}, 8);
  }
  SUBCASE("a missing source type is named") {
    const Block b = to_block(g, "char", {"contains", "from_sent"});
    CHECK_THROWS_WITH_AS(layer.forward(b, nn::Var(h), {{"word", nn::Var(w)}}), doctest::Contains("'sent'"), Error);
  }
}

TEST_CASE("forward_packed: one stacked q/k/v projection equals three, in values and every parameter gradient") {
  const std::vector<std::int64_t> lengths = {5, 1, 12};
  const std::vector<std::int64_t> radii = {1, 0, 3};
  nn::GraphMultiHeadAttention layer(12, 3);
  nn::Var x(testing::random_uniform({18, 12}, 31), true);
  const nn::Var packed = layer.forward_packed(x, lengths, radii);
  const std::int64_t rows = 18, dh = 4;
  const nn::Var separate = layer.o->forward(nn::reshape(
      nn::flash_attention(nn::reshape(layer.q->forward(x), {rows, 3, dh}), nn::reshape(layer.k->forward(x), {rows, 3, dh}),
                          nn::reshape(layer.v->forward(x), {rows, 3, dh}), lengths, layer.scale(), radii),
      {rows, 12}));
  TOPO_CHECK_CLOSE(packed.data().to_vector<float>(), separate.data().to_vector<float>(), 1e-6, 1e-5);
  const Tensor seed = testing::random_uniform({rows, 12}, 32);
  packed.backward(seed);
  std::vector<std::vector<float>> first;
  for (const nn::Var& p : layer.parameters()) first.push_back(p.grad().to_vector<float>());
  first.push_back(x.grad().to_vector<float>());
  layer.zero_grad();
  x.zero_grad();
  separate.backward(seed);
  std::size_t i = 0;
  for (const nn::Var& p : layer.parameters()) TOPO_CHECK_CLOSE(p.grad().to_vector<float>(), first[i++], 1e-6, 1e-5);
  TOPO_CHECK_CLOSE(x.grad().to_vector<float>(), first[i], 1e-6, 1e-5);
  // The stacked projection needs the three to agree on having a bias.
  layer.k->bias = nn::Var();
  CHECK_THROWS_WITH_AS(layer.forward_packed(x, lengths, radii), doctest::Contains("all have a bias or none"), Error);
}
