// GraphMultiHeadAttention over head groups (each group its own block) and over typed sources (characters
// attending over words and a sentence node), against a dense masked reference in double precision: the
// forward element by element, and every gradient (inputs of every node type and all eight parameters) as
// directional derivatives of the double reference by central differences.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <random>

#include "graph/graph.hpp"
#include "nn/attention.hpp"
#include "nn/ops.hpp"
#include "tests/support/testing.hpp"

using namespace topo;

namespace {

using Values = std::map<std::string, std::vector<double>>;  // every input of the layer by name, row-major

std::vector<double> to_double(const Tensor& t) {
  const auto v = t.to_vector<float>();
  return std::vector<double>(v.begin(), v.end());
}

// Allowed (destination, block source) pairs of a block, from its in-CSR.
std::vector<char> block_mask(const Block& b) {
  std::vector<char> mask(static_cast<std::size_t>(b.num_dst * b.num_src), 0);
  const auto indptr = b.in.indptr.to_vector<std::int32_t>(), indices = b.in.indices.to_vector<std::int32_t>();
  for (std::int64_t i = 0; i < b.num_dst; ++i)
    for (std::int32_t k = indptr[i]; k < indptr[i + 1]; ++k) mask[static_cast<std::size_t>(i * b.num_src + indices[k])] = 1;
  return mask;
}

// y = x W^T + b: x [n, d], W [d, d].
std::vector<double> linear(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& b,
                           std::int64_t n, std::int64_t d) {
  std::vector<double> y(static_cast<std::size_t>(n * d));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t o = 0; o < d; ++o) {
      double acc = b[static_cast<std::size_t>(o)];
      for (std::int64_t c = 0; c < d; ++c) acc += x[static_cast<std::size_t>(i * d + c)] * w[static_cast<std::size_t>(o * d + c)];
      y[static_cast<std::size_t>(i * d + o)] = acc;
    }
  return y;
}

struct DenseProblem {
  std::int64_t dim = 0, heads = 0, num_dst = 0, num_src = 0;
  std::vector<std::string> src_types;      // block source order
  std::vector<std::int64_t> src_offsets;
  std::vector<std::vector<char>> masks;    // per head: [num_dst, num_src]

  // out [num_dst, dim] of the layer in double precision; a destination with no allowed source reads 0
  // before W_O (as the sparse kernel).
  std::vector<double> forward(const Values& v) const {
    std::vector<double> xs;
    for (const std::string& t : src_types) {
      const auto& part = v.at("src:" + t);
      xs.insert(xs.end(), part.begin(), part.end());
    }
    const auto q = linear(v.at("dst"), v.at("q.weight"), v.at("q.bias"), num_dst, dim);
    const auto k = linear(xs, v.at("k.weight"), v.at("k.bias"), num_src, dim);
    const auto val = linear(xs, v.at("v.weight"), v.at("v.bias"), num_src, dim);
    const std::int64_t dh = dim / heads;
    const double scale = 1.0 / std::sqrt(static_cast<double>(dh));
    std::vector<double> att(static_cast<std::size_t>(num_dst * dim), 0.0), score(static_cast<std::size_t>(num_src));
    for (std::int64_t h = 0; h < heads; ++h)
      for (std::int64_t i = 0; i < num_dst; ++i) {
        const char* allowed = masks[static_cast<std::size_t>(h)].data() + i * num_src;
        double top = -INFINITY;
        for (std::int64_t j = 0; j < num_src; ++j) {
          if (!allowed[j]) continue;
          double s = 0;
          for (std::int64_t c = 0; c < dh; ++c)
            s += q[static_cast<std::size_t>(i * dim + h * dh + c)] * k[static_cast<std::size_t>(j * dim + h * dh + c)];
          score[static_cast<std::size_t>(j)] = s * scale;
          top = std::max(top, s * scale);
        }
        if (top == -INFINITY) continue;
        double z = 0;
        for (std::int64_t j = 0; j < num_src; ++j)
          if (allowed[j]) z += std::exp(score[static_cast<std::size_t>(j)] - top);
        for (std::int64_t j = 0; j < num_src; ++j) {
          if (!allowed[j]) continue;
          const double p = std::exp(score[static_cast<std::size_t>(j)] - top) / z;
          for (std::int64_t c = 0; c < dh; ++c)
            att[static_cast<std::size_t>(i * dim + h * dh + c)] += p * val[static_cast<std::size_t>(j * dim + h * dh + c)];
        }
      }
    return linear(att, v.at("o.weight"), v.at("o.bias"), num_dst, dim);
  }
  double loss(const Values& v, const std::vector<double>& weights) const {
    const auto out = forward(v);
    double l = 0;
    for (std::size_t i = 0; i < out.size(); ++i) l += out[i] * weights[i];
    return l;
  }
};

// Runs the layer on `groups` with the given per-type states, checks the forward against the dense problem
// and every gradient as a directional derivative (random direction per input, central differences).
void check_against_dense(const nn::GraphMultiHeadAttention& layer, const std::vector<nn::HeadGroup>& groups,
                         const Tensor& dst, const std::map<std::string, Tensor>& src, std::uint64_t seed) {
  const Block& block = groups[0].block;
  DenseProblem p;
  p.dim = layer.dim();
  p.heads = layer.heads();
  p.num_dst = block.num_dst;
  p.num_src = block.num_src;
  p.src_types = block.src_types;
  for (const nn::HeadGroup& g : groups) {
    const auto mask = block_mask(g.block);
    for (std::int64_t h = 0; h < g.heads; ++h) p.masks.push_back(mask);
  }
  // Inputs as leaves that require grad; the layer's parameters keep their own leaves.
  nn::Var dst_var(dst, true);
  nn::NodeStates states;
  std::map<std::string, nn::Var> src_vars;
  for (const auto& [type, t] : src) src_vars.emplace(type, nn::Var(t, true));
  for (const auto& [type, var] : src_vars) states.emplace(type, type == block.dst_type ? dst_var : var);
  Values values{{"dst", to_double(dst)}};
  for (const std::string& t : block.src_types)
    values["src:" + t] = to_double(t == block.dst_type ? dst : src.at(t));
  const std::map<std::string, nn::Linear*> linears = {
      {"q", layer.q.get()}, {"k", layer.k.get()}, {"v", layer.v.get()}, {"o", layer.o.get()}};
  for (const auto& [name, lin] : linears) {
    values[name + ".weight"] = to_double(lin->weight.data());
    values[name + ".bias"] = to_double(lin->bias.data());
    lin->weight.zero_grad();
    lin->bias.zero_grad();
  }
  const nn::Var out = layer.forward(groups, dst_var, states);
  const auto expected = p.forward(values);
  TOPO_CHECK_CLOSE(out.data().to_vector<float>(), std::vector<float>(expected.begin(), expected.end()), 1e-4, 1e-4);

  const Tensor weights_t = testing::random_uniform(out.shape(), seed);
  const auto weights = to_double(weights_t);
  nn::sum(nn::mul(out, nn::Var(weights_t)), 0).backward(Tensor::full({p.dim}, 1.f));
  std::map<std::string, Tensor> grads = {{"dst", dst_var.grad()}};
  for (const std::string& t : block.src_types)
    if (t != block.dst_type) grads["src:" + t] = src_vars.at(t).grad();
  for (const auto& [name, lin] : linears) {
    grads[name + ".weight"] = lin->weight.grad();
    grads[name + ".bias"] = lin->bias.grad();
  }
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  for (const auto& [name, grad] : grads) {
    INFO("gradient of " << name);
    REQUIRE(grad.defined());
    const auto g = to_double(grad);
    Values plus = values, minus = values;
    std::vector<double>& xp = plus.at(name);
    std::vector<double>& xm = minus.at(name);
    REQUIRE(xp.size() == g.size());
    double analytic = 0;
    const double eps = 1e-5;
    for (std::size_t i = 0; i < g.size(); ++i) {
      const double u = normal(rng);
      analytic += g[i] * u;
      xp[i] += eps * u;
      xm[i] -= eps * u;
    }
    // The destination states are also a source type when the block reads its own type.
    if (name == "dst" && plus.count("src:" + block.dst_type)) {
      plus["src:" + block.dst_type] = xp;
      minus["src:" + block.dst_type] = xm;
    }
    const double numeric = (p.loss(plus, weights) - p.loss(minus, weights)) / (2 * eps);
    CHECK(std::abs(analytic - numeric) <= 1e-3 * (1.0 + std::abs(numeric)));
  }
}

}  // namespace

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
