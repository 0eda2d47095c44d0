// DGL verbs (nn/verbs.hpp) and per-graph readouts: forwards against host loops over the COO pairs,
// gradients by finite differences (gradcheck), on a graph with multi-edges, self loops and isolated nodes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "graph/graph.hpp"
#include "nn/readout.hpp"
#include "nn/verbs.hpp"
#include "tests/nn/nn_testing.hpp"

using namespace topo;
using namespace topo::nn;
using topo::nn::testing::leaf;
using topo::testing::error_of;
using Ids = std::vector<std::int64_t>;

namespace {

constexpr std::int64_t kN = 8, kD = 3;

// 8 nodes; node 7 isolated, node 6 only a source; multi-edge 0->1 twice, self loops 2->2 and 4->4.
HeteroGraph test_graph(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::pair<std::int64_t, std::int64_t>> p = {{0, 1}, {0, 1}, {2, 2}, {4, 4}, {6, 3}};
  for (int i = 0; i < 12; ++i) p.emplace_back(rng() % 6, rng() % 6);
  return HeteroGraph::from_edges(EdgeList::from_pairs(p), kN);
}

// h [N, D], out [N, D] (the value rows keep), w [E, 1] (positive) on the edges.
GraphFeatures make_features(const HeteroGraph& g, const Var& h, const Var& out, const Var& w) {
  GraphFeatures f(g);
  f.set_ndata("_N", "h", h);
  if (out.defined()) f.set_ndata("_N", "out", out);
  f.set_edata("_E", "w", w);
  return f;
}

std::vector<float> rows_of(const Var& v) { return v.data().to_vector<float>(); }

// sum over the chosen edges of h[src] * w[e] at each destination; rows not in `written` from `keep`.
std::vector<float> reference(const HeteroGraph& g, const std::vector<float>& h, const std::vector<float>& w,
                             const std::vector<float>& keep, const std::set<std::int64_t>& edges,
                             const std::set<std::int64_t>& written) {
  std::vector<float> out(static_cast<std::size_t>(kN * kD), 0.f);
  const auto pairs = g.edges(0).pairs();
  for (const std::int64_t e : edges)
    for (std::int64_t k = 0; k < kD; ++k) out[pairs[e].second * kD + k] += h[pairs[e].first * kD + k] * w[e];
  for (std::int64_t v = 0; v < kN; ++v)
    if (!written.count(v))
      for (std::int64_t k = 0; k < kD; ++k) out[v * kD + k] = keep.empty() ? 0.f : keep[v * kD + k];
  return out;
}

}  // namespace

TEST_CASE("apply_nodes over every node and over a subset (other rows kept or zero)") {
  const HeteroGraph g = test_graph(1);
  const Var h = leaf({kN, kD}, 11), keep = leaf({kN, kD}, 12), w = leaf({g.num_edges(0), 1}, 13, 0.5f, 1.5f);
  const NodeUdf f = [](const NodeBatch& nodes) { return mul_scalar(tanh(nodes.data("h")), 2.f); };
  const auto all = rows_of(apply_nodes(make_features(g, h, keep, w), "_N", f));
  const auto hv = rows_of(h), kv = rows_of(keep);
  for (std::size_t i = 0; i < all.size(); ++i) CHECK(all[i] == doctest::Approx(2 * std::tanh(hv[i])));

  const Ids nodes = {5, 0, 7};
  const auto part = rows_of(apply_nodes(make_features(g, h, keep, w), "_N", f, nodes, "out"));
  const auto zero = rows_of(apply_nodes(make_features(g, h, Var(), w), "_N", f, nodes, "out"));
  for (std::int64_t v = 0; v < kN; ++v)
    for (std::int64_t k = 0; k < kD; ++k) {
      const bool chosen = std::find(nodes.begin(), nodes.end(), v) != nodes.end();
      const std::size_t i = static_cast<std::size_t>(v * kD + k);
      CHECK(part[i] == doctest::Approx(chosen ? 2 * std::tanh(hv[i]) : kv[i]));
      CHECK(zero[i] == doctest::Approx(chosen ? 2 * std::tanh(hv[i]) : 0.f));
    }
  TOPO_GRADCHECK([&](const std::vector<Var>& x) { return apply_nodes(make_features(g, x[0], x[1], w), "_N", f, nodes, "out"); },
                 {h, keep});
  CHECK(error_of([&] { apply_nodes(make_features(g, h, keep, w), "_N", f, {1, 1}, "out"); }).find("repeated") !=
        std::string::npos);
  CHECK(error_of([&] { apply_nodes(make_features(g, h, keep, w), "_N", f, {kN}, "out"); }).find("not a valid") !=
        std::string::npos);
}

TEST_CASE("update_all with an apply_node_func sees the reduced messages and the stored features") {
  const HeteroGraph g = test_graph(2);
  const Var h = leaf({kN, kD}, 21), w = leaf({g.num_edges(0), 1}, 22, 0.5f, 1.5f);
  auto run = [&](const std::vector<Var>& x) {
    const GraphFeatures f = make_features(g, x[0], Var(), x[1]);
    return update_all(f, "_E", fn::u_mul_e("h", "w", "m"), fn::sum("m", "agg"),
                      [](const NodeBatch& n) { return tanh(add(n.data("agg"), n.data("h"))); });
  };
  const auto got = rows_of(run({h, w}));
  std::set<std::int64_t> every;
  for (std::int64_t e = 0; e < g.num_edges(0); ++e) every.insert(e);
  std::set<std::int64_t> nodes;
  for (std::int64_t v = 0; v < kN; ++v) nodes.insert(v);
  const auto agg = reference(g, rows_of(h), rows_of(w), {}, every, nodes);
  const auto hv = rows_of(h);
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(std::tanh(agg[i] + hv[i])).epsilon(1e-5));
  TOPO_GRADCHECK(run, {h, w});
}

TEST_CASE("send_and_recv / pull / push write exactly DGL's rows, differentiably") {
  for (std::uint64_t seed = 3; seed <= 5; ++seed) {
    const HeteroGraph g = test_graph(seed);
    const auto pairs = g.edges(0).pairs();
    const Var h = leaf({kN, kD}, seed * 10 + 1), keep = leaf({kN, kD}, seed * 10 + 2);
    const Var w = leaf({g.num_edges(0), 1}, seed * 10 + 3, 0.5f, 1.5f);
    const auto hv = rows_of(h), kv = rows_of(keep), wv = rows_of(w);
    const MessageFn msg = fn::u_mul_e("h", "w", "m");
    const ReduceFn red = fn::sum("m", "out");

    // send_and_recv on every third edge, in a scrambled order.
    Ids eids;
    for (std::int64_t e = g.num_edges(0) - 1; e >= 0; e -= 3) eids.push_back(e);
    std::set<std::int64_t> dsts;
    for (const auto e : eids) dsts.insert(pairs[e].second);
    auto sr = [&](const std::vector<Var>& x) {
      return send_and_recv(make_features(g, x[0], x[1], x[2]), "_E", eids, msg, red);
    };
    TOPO_CHECK_CLOSE(rows_of(sr({h, keep, w})),
                     reference(g, hv, wv, kv, std::set<std::int64_t>(eids.begin(), eids.end()), dsts), 1e-5, 1e-5);
    TOPO_GRADCHECK(sr, {h, keep, w});
    // A message UDF sees only the chosen edges.
    std::int64_t seen = -1;
    send_and_recv(make_features(g, h, keep, w), "_E", eids,
                  fn::message_udf([&](const EdgeBatch& e) {
                    seen = e.num_edges();
                    return mul(e.src("h"), e.data("w"));
                  }),
                  red);
    CHECK(seen == static_cast<std::int64_t>(eids.size()));

    // pull on nodes incl. 6 (no in-edges: written as 0) and a duplicate.
    const Ids pulled = {1, 6, 3, 1};
    std::set<std::int64_t> in_e;
    for (std::size_t e = 0; e < pairs.size(); ++e)
      if (pairs[e].second == 1 || pairs[e].second == 3 || pairs[e].second == 6) in_e.insert(static_cast<std::int64_t>(e));
    auto pl = [&](const std::vector<Var>& x) { return pull(make_features(g, x[0], x[1], x[2]), "_E", pulled, msg, red); };
    TOPO_CHECK_CLOSE(rows_of(pl({h, keep, w})), reference(g, hv, wv, kv, in_e, {1, 3, 6}), 1e-5, 1e-5);
    TOPO_GRADCHECK(pl, {h, keep, w});

    // push from sources 0 and 2.
    std::set<std::int64_t> out_e, pushed_to;
    for (std::size_t e = 0; e < pairs.size(); ++e)
      if (pairs[e].first == 0 || pairs[e].first == 2) {
        out_e.insert(static_cast<std::int64_t>(e));
        pushed_to.insert(pairs[e].second);
      }
    auto ps = [&](const std::vector<Var>& x) { return push(make_features(g, x[0], x[1], x[2]), "_E", {0, 2}, msg, red); };
    TOPO_CHECK_CLOSE(rows_of(ps({h, keep, w})), reference(g, hv, wv, kv, out_e, pushed_to), 1e-5, 1e-5);
    TOPO_GRADCHECK(ps, {h, keep, w});
  }
}

TEST_CASE("send_and_recv: apply_node_func, empty edge set and errors") {
  const HeteroGraph g = test_graph(6);
  const Var h = leaf({kN, kD}, 61), keep = leaf({kN, kD}, 62), w = leaf({g.num_edges(0), 1}, 63, 0.5f, 1.5f);
  const GraphFeatures f = make_features(g, h, keep, w);
  // No edges: nothing written, every row kept.
  TOPO_CHECK_CLOSE(rows_of(send_and_recv(f, "_E", {}, fn::copy_u("h", "m"), fn::sum("m", "out"))), rows_of(keep), 1e-7, 1e-7);
  const auto pairs = g.edges(0).pairs();
  const Ids one = {0};
  const auto got = rows_of(send_and_recv(f, "_E", one, fn::copy_u("h", "m"), fn::sum("m", "out"),
                                         [](const NodeBatch& n) { return mul_scalar(n.data("out"), 3.f); }));
  const auto hv = rows_of(h), kv = rows_of(keep);
  for (std::int64_t v = 0; v < kN; ++v)
    for (std::int64_t k = 0; k < kD; ++k)
      CHECK(got[v * kD + k] == doctest::Approx(v == pairs[0].second ? 3 * hv[pairs[0].first * kD + k] : kv[v * kD + k]));
  CHECK(error_of([&] { send_and_recv(f, "_E", {g.num_edges(0)}, fn::copy_u("h", "m"), fn::sum("m", "out")); })
            .find("not an edge id") != std::string::npos);
  CHECK(error_of([&] { send_and_recv(f, "_E", {1, 1}, fn::copy_u("h", "m"), fn::sum("m", "out")); })
            .find("repeated") != std::string::npos);
  CHECK(error_of([&] { pull(f, "_E", {kN}, fn::copy_u("h", "m"), fn::sum("m", "out")); }).find("outside") !=
        std::string::npos);
  // Rows kept from a feature of another shape are refused, naming it.
  GraphFeatures bad = f;
  bad.set_ndata("_N", "out", leaf({kN, 2}, 64));
  CHECK(error_of([&] { pull(bad, "_E", {1}, fn::copy_u("h", "m"), fn::sum("m", "out")); }).find("keeps feature 'out'") !=
        std::string::npos);
}

TEST_CASE("multi_update_all with the stack cross reducer: [N, R, D] in the order given") {
  const HeteroGraph g({{"a", 4}, {"b", 3}}, {{{"a", "x", "b"}, EdgeList::from_pairs({{0, 0}, {1, 0}, {3, 2}})},
                                             {{"b", "y", "b"}, EdgeList::from_pairs({{1, 0}, {2, 2}, {2, 2}})}});
  const Var ha = leaf({4, 2}, 71), hb = leaf({3, 2}, 72);
  auto run = [&](const std::vector<Var>& x) {
    GraphFeatures f(g);
    f.set_ndata("a", "h", x[0]);
    f.set_ndata("b", "h", x[1]);
    return multi_update_all(f, {{"y", fn::copy_u("h", "m"), fn::max("m", "o")}, {"x", fn::copy_u("h", "m"), fn::sum("m", "o")}},
                            CrossReduce::Stack)
        .at("b");
  };
  const Var out = run({ha, hb});
  REQUIRE(out.shape() == Shape{3, 2, 2});
  GraphFeatures f(g);
  f.set_ndata("a", "h", ha);
  f.set_ndata("b", "h", hb);
  const auto y = rows_of(update_all(f, "y", fn::copy_u("h", "m"), fn::max("m", "o")));
  const auto x = rows_of(update_all(f, "x", fn::copy_u("h", "m"), fn::sum("m", "o")));
  const auto got = rows_of(out);
  for (std::int64_t v = 0; v < 3; ++v)
    for (std::int64_t k = 0; k < 2; ++k) {
      CHECK(got[v * 4 + k] == y[v * 2 + k]);
      CHECK(got[v * 4 + 2 + k] == x[v * 2 + k]);
    }
  TOPO_GRADCHECK(run, {ha, hb});
}

TEST_CASE("softmax_nodes and broadcast_nodes per graph of a batch, empty graphs included") {
  const Ids counts = {3, 0, 4, 1};
  const Var x = leaf({8, 2}, 81, -2.f, 2.f);
  const auto got = rows_of(softmax_nodes(x, counts));
  const auto xv = rows_of(x);
  std::int64_t at = 0;
  for (const std::int64_t c : counts) {
    for (std::int64_t k = 0; k < 2; ++k) {
      double z = 0;
      for (std::int64_t i = at; i < at + c; ++i) z += std::exp(xv[i * 2 + k]);
      for (std::int64_t i = at; i < at + c; ++i) CHECK(got[i * 2 + k] == doctest::Approx(std::exp(xv[i * 2 + k]) / z));
    }
    at += c;
  }
  TOPO_GRADCHECK([&](const std::vector<Var>& v) { return softmax_nodes(v[0], counts); }, {x});

  const Var feats = leaf({4, 3}, 82);
  const auto b = rows_of(broadcast_nodes(feats, counts));
  const auto fv = rows_of(feats);
  REQUIRE(b.size() == 8 * 3);
  at = 0;
  for (std::size_t g = 0; g < counts.size(); ++g)
    for (std::int64_t i = 0; i < counts[g]; ++i, ++at)
      for (std::int64_t k = 0; k < 3; ++k) CHECK(b[at * 3 + k] == fv[g * 3 + k]);
  TOPO_GRADCHECK([&](const std::vector<Var>& v) { return broadcast_nodes(v[0], counts); }, {feats});
  CHECK(error_of([&] { broadcast_nodes(feats, {1, 2}); }).find("[batch = 2") != std::string::npos);
  CHECK(error_of([&] { softmax_nodes(x, {3, 3}); }).find("counts sum to 6") != std::string::npos);
}

TEST_CASE("readout_nodes with leading rows: each example's rows read in place, equal to reading a gather of them") {
  // Examples of 3, 0 and 4 rows, each led by one row left out (Multi-Scale's [CLS]): 10 rows in all.
  const std::vector<std::int64_t> counts = {3, 0, 4};
  const Tensor rows = Tensor::from_vector(Ids{1, 2, 3, 6, 7, 8, 9}, {7});
  for (Readout op : {Readout::Sum, Readout::Mean, Readout::Max}) {
    CAPTURE(readout_name(op));
    Var h = leaf({10, 3}, 91);
    const Var in_place = readout_nodes(h, counts, op, 1);
    const Var gathered = readout_nodes(index_select(h, rows), counts, op);
    CHECK(in_place.data().to_vector<float>() == gathered.data().to_vector<float>());
    TOPO_GRADCHECK([&](const std::vector<Var>& x) { return readout_nodes(x[0], counts, op, 1); }, {h});
    const Tensor seed = topo::testing::random_uniform({3, 3}, 92);
    in_place.backward(seed);
    const std::vector<float> first = h.grad().to_vector<float>();
    CHECK(first[0] == 0.f);  // the leading rows get nothing
    CHECK(first[4 * 3] == 0.f);
    h.zero_grad();
    gathered.backward(seed);
    CHECK(h.grad().to_vector<float>() == first);
  }
  CHECK_THROWS_WITH_AS(readout_nodes(leaf({9, 3}, 93), counts, Readout::Max, 1),
                       doctest::Contains("with 1 leading rows per example"), Error);
}
