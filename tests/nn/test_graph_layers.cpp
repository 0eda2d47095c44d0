// GraphConv / GATConv / SAGEConv against dense references in double precision written from the papers'
// formulas (loops over the edge list, no engine code): the forward element by element and every gradient
// (inputs, edge weights, all parameters) element by element against central differences of the double
// reference. Random graphs with multi-edges, self loops and isolated nodes; GAT and SAGE also on a bipartite
// relation (a -> b, DGL's pair of source / destination features).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>

#include "graph/graph.hpp"
#include "nn/graph_layers.hpp"
#include "nn/message_passing.hpp"
#include "tests/nn/nn_testing.hpp"
#include "tests/support/dense_attention_reference.hpp"  // to_double, linear

using namespace topo;
using namespace topo::nn;
using topo::nn::testing::leaf;
using topo::testing::error_of;
using topo::testing::linear;
using topo::testing::to_double;
using Values = std::map<std::string, std::vector<double>>;
using Pairs = std::vector<std::pair<std::int64_t, std::int64_t>>;
using Reference = std::function<std::vector<double>(const Values&)>;

namespace {

constexpr std::int64_t kN = 9, kIn = 4;

// Nodes 7 and 8 are isolated (8 only when `isolated`, else it has a self loop); multi-edge 0->1 twice,
// self loops on 2 and 5.
Pairs random_pairs(std::uint64_t seed, bool isolated) {
  std::mt19937_64 rng(seed);
  Pairs p = {{0, 1}, {0, 1}, {2, 2}, {5, 5}};
  for (int i = 0; i < 14; ++i) p.emplace_back(rng() % 7, rng() % 7);
  for (std::int64_t v = 0; v < 7; ++v) p.emplace_back((v + 1) % 7, v);  // every node 0..6 has an in-edge
  p.emplace_back(7, 3);  // 7: a source only
  if (!isolated) {
    p.emplace_back(8, 8);
    p.emplace_back(7, 7);
  }
  return p;
}

// Runs `run` (inputs as leaves requiring grad), compares the forward with `ref` and every gradient with
// central differences of `ref` along the loss sum(out * R).
void check_against_reference(Module& layer, const std::map<std::string, Var>& inputs,
                             const std::function<Var()>& run, const Reference& ref, std::uint64_t seed) {
  Values values;
  for (const auto& [name, v] : inputs) values[name] = to_double(v.data());
  for (const auto& [name, p] : layer.named_parameters()) values[name] = to_double(p.data());
  layer.zero_grad();
  const Var out = run();
  const std::vector<double> expected = ref(values);
  const auto got = out.data().to_vector<float>();
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("output element " << i);
    CHECK(std::abs(got[i] - expected[i]) <= 1e-4 * (1 + std::abs(expected[i])));
  }
  const Tensor weights_t = topo::testing::random_uniform(out.shape(), seed);
  const std::vector<double> weights = to_double(weights_t);
  sum_all(mul(out, Var(weights_t))).backward();
  auto loss = [&](const Values& v) {
    const auto o = ref(v);
    double l = 0;
    for (std::size_t i = 0; i < o.size(); ++i) l += o[i] * weights[i];
    return l;
  };
  std::map<std::string, Tensor> grads;
  for (const auto& [name, v] : inputs) grads[name] = v.grad();
  for (const auto& [name, p] : layer.named_parameters()) grads[name] = p.grad();
  for (const auto& [name, grad] : grads) {
    TOPO_CAPTURE(name);  // the gradient checked
    REQUIRE(grad.defined());
    const auto g = to_double(grad);
    REQUIRE(g.size() == values.at(name).size());
    for (std::size_t i = 0; i < g.size(); ++i) {
      const double eps = 1e-6;
      Values plus = values, minus = values;
      plus[name][i] += eps;
      minus[name][i] -= eps;
      const double numeric = (loss(plus) - loss(minus)) / (2 * eps);
      INFO("element " << i << ": analytic " << g[i] << ", numeric " << numeric);
      CHECK(std::abs(g[i] - numeric) <= 2e-3 * (1 + std::abs(numeric)));
    }
  }
}

std::vector<std::int64_t> degrees(const Pairs& p, bool in) {
  std::vector<std::int64_t> d(kN, 0);
  for (const auto& [s, t] : p) ++d[in ? t : s];
  return d;
}

}  // namespace

TEST_CASE("GraphConv equals the dense reference for every norm, with and without edge weights") {
  for (const GraphNorm norm : {GraphNorm::Both, GraphNorm::Left, GraphNorm::Right, GraphNorm::None})
    for (const bool weighted : {false, true})
      for (const std::int64_t out_dim : {std::int64_t{3}, std::int64_t{6}}) {  // W after / before aggregation
        CAPTURE(static_cast<int>(norm));
        CAPTURE(weighted);
        CAPTURE(out_dim);
        const Pairs p = random_pairs(11 + out_dim, true);
        const HeteroGraph g = HeteroGraph::from_edges(EdgeList::from_pairs(p), kN);
        const auto E = static_cast<std::int64_t>(p.size());
        GraphConvOptions opt;
        opt.norm = norm;
        opt.allow_zero_in_degree = true;
        GraphConv conv(kIn, out_dim, opt);
        conv.reset_parameters(5);
        conv.bias.set_data(topo::testing::random_uniform({out_dim}, 6));  // a non-zero bias is checked too
        std::map<std::string, Var> inputs = {{"x", leaf({kN, kIn}, 7)}};
        if (weighted) inputs["ew"] = leaf({E}, 8, 0.5f, 1.5f);
        const auto din = degrees(p, true), dout = degrees(p, false);
        const Reference ref = [&](const Values& v) {
          std::vector<double> agg(static_cast<std::size_t>(kN * kIn), 0.0);
          for (std::int64_t e = 0; e < E; ++e) {
            const auto [u, t] = p[e];
            double c = weighted ? v.at("ew")[e] : 1.0;
            const double du = static_cast<double>(std::max<std::int64_t>(dout[u], 1));
            if (norm == GraphNorm::Left) c /= du;
            if (norm == GraphNorm::Both) c /= std::sqrt(du);
            for (std::int64_t k = 0; k < kIn; ++k) agg[t * kIn + k] += c * v.at("x")[u * kIn + k];
          }
          std::vector<double> out(static_cast<std::size_t>(kN * out_dim));
          for (std::int64_t t = 0; t < kN; ++t) {
            const double dt = static_cast<double>(std::max<std::int64_t>(din[t], 1));
            const double s = norm == GraphNorm::Right ? 1 / dt : norm == GraphNorm::Both ? 1 / std::sqrt(dt) : 1.0;
            for (std::int64_t o = 0; o < out_dim; ++o) {
              double acc = 0;
              for (std::int64_t k = 0; k < kIn; ++k) acc += agg[t * kIn + k] * v.at("weight")[k * out_dim + o];
              out[t * out_dim + o] = s * acc + v.at("bias")[o];
            }
          }
          return out;
        };
        check_against_reference(conv, inputs, [&] {
          return conv.forward(g, "_E", inputs.at("x"), weighted ? inputs.at("ew") : Var()); }, ref, 9);
      }
}

TEST_CASE("GATConv equals the dense reference: heads, LeakyReLU(0.2) scores, edge softmax, residual") {
  for (const bool bipartite : {false, true})
    for (const int residual : {0, 1, 2}) {  // none, identity (in == H * F), res_fc
      CAPTURE(bipartite);
      CAPTURE(residual);
      const std::int64_t heads = 2, out_dim = residual == 1 ? 2 : 3;
      // Homogeneous: random_pairs on kN nodes. Bipartite (a -> b, DGL's pair of features): kN sources,
      // 5 destinations, destination 4 without in-edges.
      const std::int64_t ns = kN, nd = bipartite ? 5 : kN;
      Pairs p = random_pairs(21 + residual, true);
      if (bipartite)
        for (auto& [u, t] : p) t %= 4;
      const HeteroGraph g = bipartite ? HeteroGraph({{"a", ns}, {"b", nd}}, {{{"a", "r", "b"}, EdgeList::from_pairs(p)}})
                                      : HeteroGraph::from_edges(EdgeList::from_pairs(p), kN, "_N", "r");
      const auto E = static_cast<std::int64_t>(p.size());
      GATConvOptions opt;
      opt.residual = residual > 0;
      opt.allow_zero_in_degree = true;
      opt.attn_drop = 0.5f;  // eval mode: off (training mode is checked below)
      GATConv conv(kIn, out_dim, heads, opt);
      conv.reset_parameters(31);
      conv.bias.set_data(topo::testing::random_uniform({heads * out_dim}, 32));
      conv.eval();
      CHECK((residual == 2) == static_cast<bool>(conv.res_fc));
      std::map<std::string, Var> inputs = {{"xs", leaf({ns, kIn}, 33, -2.f, 2.f)}};
      if (bipartite) inputs["xd"] = leaf({nd, kIn}, 35, -2.f, 2.f);
      const std::string xd_name = bipartite ? "xd" : "xs";
      const std::int64_t hf = heads * out_dim;
      const Reference ref = [&](const Values& v) {
        const auto& xs = v.at("xs");
        const auto& xd = v.at(xd_name);
        const auto zs = linear(xs, v.at("fc.weight"), nullptr, ns, kIn, hf);  // [Ns, H * F]
        const auto zd = linear(xd, v.at("fc.weight"), nullptr, nd, kIn, hf);  // [Nd, H * F]
        std::vector<double> el(static_cast<std::size_t>(ns * heads), 0.0), er(static_cast<std::size_t>(nd * heads), 0.0);
        for (std::int64_t h = 0; h < heads; ++h)
          for (std::int64_t f = 0; f < out_dim; ++f) {
            for (std::int64_t n = 0; n < ns; ++n)
              el[n * heads + h] += zs[n * hf + h * out_dim + f] * v.at("attn_l")[h * out_dim + f];
            for (std::int64_t n = 0; n < nd; ++n)
              er[n * heads + h] += zd[n * hf + h * out_dim + f] * v.at("attn_r")[h * out_dim + f];
          }
        std::vector<double> out(static_cast<std::size_t>(nd * hf), 0.0);
        for (std::int64_t t = 0; t < nd; ++t)
          for (std::int64_t h = 0; h < heads; ++h) {
            std::vector<double> s;
            std::vector<std::int64_t> src;
            for (std::int64_t e = 0; e < E; ++e)
              if (p[e].second == t) {
                const double a = el[p[e].first * heads + h] + er[t * heads + h];
                s.push_back(a > 0 ? a : 0.2 * a);
                src.push_back(p[e].first);
              }
            if (s.empty()) continue;
            const double top = *std::max_element(s.begin(), s.end());
            double zsum = 0;
            for (const double a : s) zsum += std::exp(a - top);
            for (std::size_t k = 0; k < s.size(); ++k)
              for (std::int64_t f = 0; f < out_dim; ++f)
                out[t * hf + h * out_dim + f] += std::exp(s[k] - top) / zsum * zs[src[k] * hf + h * out_dim + f];
          }
        const auto res = residual == 2 ? linear(xd, v.at("res_fc.weight"), nullptr, nd, kIn, hf) : xd;
        for (std::int64_t t = 0; t < nd; ++t)
          for (std::int64_t c = 0; c < hf; ++c)
            out[t * hf + c] += (residual ? res[t * hf + c] : 0.0) + v.at("bias")[c];
        return out;
      };
      check_against_reference(conv, inputs, [&] { return conv.forward(g, "r", inputs.at("xs"), inputs.at(xd_name)); },
                              ref, 34);
    }
}

TEST_CASE("GATConv attention dropout: active in training only, differentiable with a fixed generator") {
  const HeteroGraph g = HeteroGraph::from_edges(EdgeList::from_pairs(random_pairs(41, false)), kN);
  GATConvOptions opt;
  opt.attn_drop = 0.5f;
  Generator gen(7);
  GATConv conv(kIn, 3, 2, opt, &gen);
  conv.reset_parameters(42);
  const Var x = leaf({kN, kIn}, 43);
  conv.eval();
  const auto eval_a = conv.forward(g, "_E", x, x).data().to_vector<float>();
  const auto eval_b = conv.forward(g, "_E", x, x).data().to_vector<float>();
  CHECK(eval_a == eval_b);
  conv.train();
  const auto train = conv.forward(g, "_E", x, x).data().to_vector<float>();
  CHECK(train != eval_a);
  TOPO_GRADCHECK(
      [&](const std::vector<Var>& in) {
        Generator local(99);
        GATConv c(kIn, 3, 2, opt, &local);
        c.reset_parameters(42);
        return c.forward(g, "_E", in[0], in[0]);
      },
      {x});
}

TEST_CASE("GATConv's fused attention equals its composition from the public verbs, dropout masks and gradients included") {
  // Training mode, feature and attention dropout on, two generators at the same seed: the layer (fused
  // nn::gat_attention) and the composition a user would write with apply_edges -> leaky_relu -> edge_softmax ->
  // dropout -> update_all draw the same masks, so outputs and every gradient agree to float rounding.
  const HeteroGraph g = HeteroGraph::from_edges(EdgeList::from_pairs(random_pairs(51, false)), kN);
  GATConvOptions opt;
  opt.feat_drop = 0.3f;
  opt.attn_drop = 0.5f;
  const std::int64_t heads = 3, out_dim = 4;
  Generator fused_gen(5), composed_gen(5);
  GATConv conv(kIn, out_dim, heads, opt, &fused_gen);
  conv.reset_parameters(52);
  conv.bias.set_data(topo::testing::random_uniform({heads * out_dim}, 53));
  conv.train();
  Var x = leaf({kN, kIn}, 54, -2.f, 2.f);
  const Tensor R = topo::testing::random_uniform({kN, heads, out_dim}, 55);
  std::vector<std::vector<float>> outs, grads;
  for (const bool fused : {true, false}) {
    conv.zero_grad();
    x.zero_grad();
    Var out;
    if (fused) {
      out = conv.forward(g, "_E", x, x);
    } else {
      const Var h = dropout(x, opt.feat_drop, true, composed_gen);
      const Var z = reshape(conv.fc->forward(h), {kN, heads, out_dim});
      GraphFeatures f(g);
      f.set_ndata("_N", "ft", z);
      f.set_ndata("_N", "el", sum(mul(z, conv.attn_l), -1, true));
      f.set_ndata("_N", "er", sum(mul(z, conv.attn_r), -1, true));
      const Var scores = leaky_relu(apply_edges(f, "_E", fn::u_add_v("el", "er", "e")), opt.negative_slope);
      f.set_edata("_E", "a", dropout(edge_softmax(g, "_E", scores), opt.attn_drop, true, composed_gen));
      out = add(update_all(f, "_E", fn::u_mul_e("ft", "a", "m"), fn::sum("m", "ft")),
                reshape(conv.bias, {heads, out_dim}));
    }
    sum_all(mul(out, Var(R))).backward();
    outs.push_back(out.data().to_vector<float>());
    std::vector<float> all = x.grad().to_vector<float>();
    for (const auto& [name, p] : conv.named_parameters()) {
      const auto v = p.grad().to_vector<float>();
      all.insert(all.end(), v.begin(), v.end());
    }
    grads.push_back(all);
  }
  CHECK(fused_gen.offset() == composed_gen.offset());  // the same draws consumed
  TOPO_CHECK_CLOSE(outs[0], outs[1], 1e-6, 1e-5);
  TOPO_CHECK_CLOSE(grads[0], grads[1], 1e-5, 1e-4);
}

TEST_CASE("SAGEConv equals the dense reference (mean and max-pool), homogeneous and bipartite") {
  for (const bool bipartite : {false, true})
    for (const SageAggregator agg : {SageAggregator::Mean, SageAggregator::Pool})
      for (const std::int64_t out_dim : {std::int64_t{3}, std::int64_t{6}}) {  // mean: projected before / after
      CAPTURE(bipartite);
      CAPTURE(static_cast<int>(agg));
      CAPTURE(out_dim);
      const std::int64_t ns = kN, nd = bipartite ? 5 : kN;
      Pairs p = random_pairs(51, true);
      if (bipartite)
        for (auto& [u, t] : p) t %= 4;  // destination 4: no in-edges
      const HeteroGraph g = bipartite ? HeteroGraph({{"a", ns}, {"b", nd}}, {{{"a", "r", "b"}, EdgeList::from_pairs(p)}})
                                      : HeteroGraph::from_edges(EdgeList::from_pairs(p), kN, "_N", "r");
      SAGEConv conv(kIn, out_dim, agg);
      conv.reset_parameters(52);
      conv.bias.set_data(topo::testing::random_uniform({out_dim}, 53));
      std::map<std::string, Var> inputs = {{"xs", leaf({ns, kIn}, 54)}};
      if (bipartite) inputs["xd"] = leaf({nd, kIn}, 56);
      const std::string xd_name = bipartite ? "xd" : "xs";
      const Reference ref = [&](const Values& v) {
        const auto& xs = v.at("xs");
        const auto& xd = v.at(xd_name);
        const bool pool = agg == SageAggregator::Pool;
        std::vector<double> h = xs;
        if (pool) {
          h = linear(xs, v.at("fc_pool.weight"), &v.at("fc_pool.bias"), ns, kIn, kIn);
          for (double& a : h) a = std::max(a, 0.0);
        }
        std::vector<double> neigh(static_cast<std::size_t>(nd * kIn), pool ? -INFINITY : 0.0);
        std::vector<std::int64_t> deg(static_cast<std::size_t>(nd), 0);
        for (const auto& [u, t] : p) {
          ++deg[t];
          for (std::int64_t k = 0; k < kIn; ++k)
            neigh[t * kIn + k] = pool ? std::max(neigh[t * kIn + k], h[u * kIn + k]) : neigh[t * kIn + k] + h[u * kIn + k];
        }
        for (std::int64_t t = 0; t < nd; ++t)
          for (std::int64_t k = 0; k < kIn; ++k)
            neigh[t * kIn + k] = deg[t] == 0 ? 0.0 : pool ? neigh[t * kIn + k] : neigh[t * kIn + k] / deg[t];
        const auto a = linear(xd, v.at("fc_self.weight"), &v.at("bias"), nd, kIn, out_dim);
        const auto b = linear(neigh, v.at("fc_neigh.weight"), nullptr, nd, kIn, out_dim);
        std::vector<double> out(a.size());
        for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] + b[i];
        return out;
      };
      check_against_reference(conv, inputs, [&] { return conv.forward(g, "r", inputs.at("xs"), inputs.at(xd_name)); },
                              ref, 55);
    }
}

TEST_CASE("zero in-degree: GraphConv and GATConv refuse by default (DGL's error), allow with the flag") {
  const HeteroGraph g = HeteroGraph::from_edges(EdgeList::from_pairs(random_pairs(61, true)), kN);
  const Var x = leaf({kN, kIn}, 62);
  GraphConv gc(kIn, 3);
  CHECK(error_of([&] { gc.forward(g, "_E", x); }).find("node 7 of type '_N' has no in-edges") != std::string::npos);
  GATConv gat(kIn, 3, 2);
  CHECK(error_of([&] { gat.forward(g, "_E", x, x); }).find("has no in-edges") != std::string::npos);
  // With self loops every node has an in-edge: accepted.
  CHECK(gc.forward(add_self_loop(g), "_E", x).shape() == Shape{kN, 3});
  GraphConvOptions allow;
  allow.allow_zero_in_degree = true;
  GraphConv gc_allow(kIn, 3, allow);
  gc_allow.bias.set_data(Tensor::full({3}, 0.25f));
  const auto out = gc_allow.forward(g, "_E", x).data().to_vector<float>();
  for (std::int64_t k = 0; k < 3; ++k) CHECK(out[8 * 3 + k] == 0.25f);  // the empty sum, then the bias
  CHECK(error_of([&] { gc.forward(g, "_E", leaf({kN, 5}, 63)); }).find("source features must be") !=
        std::string::npos);
  CHECK(error_of([] { parse_graph_norm("sym"); }).find("unknown GraphConv norm 'sym'") != std::string::npos);
}
