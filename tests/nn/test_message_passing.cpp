// The DGL-style API: update_all / apply_edges against direct loops over the host COO, gradients by
// gradcheck, UDFs against the built-ins, multi_update_all's cross reducers, errors, and a GAT layer.
#include <doctest/doctest.h>

#include "tests/support/testing.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "nn/gradcheck.hpp"
#include "nn/message_passing.hpp"
#include "nn/sparse_ops.hpp"
#include "tests/nn/nn_testing.hpp"
#include "tests/nn/test_sparse_ops_graphs.hpp"

using namespace topo;
using namespace topo::nn;
using topo::nn::testing::leaf;
using topo::nn::testing::make_graph;
using topo::nn::testing::TestGraph;
using topo::nn::testing::test_graphs;

using topo::testing::error_of;

namespace {

using Rows = std::vector<std::vector<float>>;  // host rows of a [rows, len] feature

Rows host_rows(const Var& v) {
  const std::vector<float> x = v.data().to_vector<float>();
  const std::int64_t n = v.size(0), len = n ? v.numel() / n : 0;
  Rows r(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) r[i].assign(x.begin() + i * len, x.begin() + (i + 1) * len);
  return r;
}

std::string src_type(const TestGraph& t) { return t.g.canonical_etype(0).src_type; }
std::string dst_type(const TestGraph& t) { return t.g.canonical_etype(0).dst_type; }

// Features of every test: h [Ns, 3] and p [Ns, 1] on sources, q [Nd, 3] and r [Nd, 3] (positive) on
// destinations, w [E, 1] and w3 [E, 3] (positive) on edges.
GraphFeatures features(const TestGraph& t, std::uint64_t seed) {
  GraphFeatures f(t.g);
  const bool same = src_type(t) == dst_type(t);
  f.set_ndata(src_type(t), "h", leaf({t.num_src, 3}, seed));
  f.set_ndata(src_type(t), "p", leaf({t.num_src, 1}, seed + 1));
  // On a homogeneous graph the destination features live on the same node type.
  f.set_ndata(dst_type(t), "q", leaf({t.num_dst, 3}, seed + 2));
  f.set_ndata(dst_type(t), "r", leaf({t.num_dst, 3}, seed + 3, 0.5f, 1.5f));
  (void)same;
  f.set_edata(t.etype, "w", leaf({t.num_edges(), 1}, seed + 4, 0.5f, 1.5f));
  f.set_edata(t.etype, "w3", leaf({t.num_edges(), 3}, seed + 5, 0.5f, 1.5f));
  return f;
}

// Per-edge message rows by direct evaluation of the descriptor (size-1 rows broadcast).
Rows reference_messages(const TestGraph& t, const GraphFeatures& f, const MessageFn& m) {
  auto side_rows = [&](Side s, const std::string& name) {
    if (s == Side::Edge) return host_rows(f.edata(t.etype, name));
    return host_rows(f.ndata(s == Side::Src ? src_type(t) : dst_type(t), name));
  };
  auto row_of = [&](Side s, const Rows& rows, std::int64_t id) {
    return rows[s == Side::Src ? t.src[id] : s == Side::Dst ? t.dst[id] : id];
  };
  const Rows L = side_rows(m.lhs, m.lhs_field);
  const Rows R = m.op == SddmmOp::CopyLhs ? Rows{} : side_rows(m.rhs, m.rhs_field);
  Rows out;
  for (std::int64_t id = 0; id < t.num_edges(); ++id) {
    const std::vector<float> a = row_of(m.lhs, L, id);
    if (m.op == SddmmOp::CopyLhs) {
      out.push_back(a);
      continue;
    }
    const std::vector<float> b = row_of(m.rhs, R, id);
    const std::size_t len = std::max(a.size(), b.size());
    std::vector<float> o;
    double dot = 0;
    for (std::size_t k = 0; k < len; ++k) {
      const float x = a[a.size() == 1 ? 0 : k], y = b[b.size() == 1 ? 0 : k];
      switch (m.op) {
        case SddmmOp::Add: o.push_back(x + y); break;
        case SddmmOp::Sub: o.push_back(x - y); break;
        case SddmmOp::Mul: o.push_back(x * y); break;
        case SddmmOp::Div: o.push_back(x / y); break;
        case SddmmOp::Dot: dot += static_cast<double>(x) * y; break;
        default: break;
      }
    }
    if (m.op == SddmmOp::Dot) o.push_back(static_cast<float>(dot));
    out.push_back(o);
  }
  return out;
}

std::vector<float> reference_reduce(const TestGraph& t, const Rows& msgs, SpmmReduce r, std::size_t len) {
  std::vector<float> out;
  for (std::int64_t v = 0; v < t.num_dst; ++v)
    for (std::size_t k = 0; k < len; ++k) {
      std::vector<float> xs;
      for (std::int64_t id = 0; id < t.num_edges(); ++id)
        if (t.dst[id] == v) xs.push_back(msgs[id][k]);
      float y = 0;
      if (!xs.empty()) {
        if (r == SpmmReduce::Max) y = *std::max_element(xs.begin(), xs.end());
        else if (r == SpmmReduce::Min) y = *std::min_element(xs.begin(), xs.end());
        else {
          double s = 0;
          for (float x : xs) s += x;
          y = static_cast<float>(r == SpmmReduce::Mean ? s / static_cast<double>(xs.size()) : s);
        }
      }
      out.push_back(y);
    }
  return out;
}

std::vector<float> flatten(const Rows& rows) {
  std::vector<float> v;
  for (const auto& r : rows) v.insert(v.end(), r.begin(), r.end());
  return v;
}

std::vector<std::pair<MessageFn, ReduceFn>> builtin_cases() {
  return {
      {fn::copy_u("h", "m"), fn::sum("m", "o")},        {fn::copy_u("p", "m"), fn::max("m", "o")},
      {fn::u_mul_e("h", "w", "m"), fn::mean("m", "o")},  // fused, [E, 1] broadcast
      {fn::e_mul_u("w3", "h", "m"), fn::max("m", "o")},  // fused after commuting
      {fn::u_div_e("h", "w3", "m"), fn::min("m", "o")},  {fn::u_sub_e("h", "w", "m"), fn::sum("m", "o")},
      {fn::copy_e("w3", "m"), fn::mean("m", "o")},       {fn::u_sub_v("h", "q", "m"), fn::min("m", "o")},
      {fn::e_sub_u("w3", "h", "m"), fn::max("m", "o")},  // not commutative: per-edge messages first
      {fn::v_dot_u("q", "h", "m"), fn::sum("m", "o")},   {fn::copy_v("q", "m"), fn::sum("m", "o")},
      {fn::e_div_v("w3", "r", "m"), fn::mean("m", "o")},
  };
}

}  // namespace

TEST_CASE("update_all and apply_edges match direct loops for built-in messages and reducers") {
  for (const TestGraph& t : test_graphs()) {
    const GraphFeatures f = features(t, 3);
    for (const auto& [m, r] : builtin_cases()) {
      CAPTURE(t.name);
      TOPO_CAPTURE(static_cast<int>(m.op));
      TOPO_CAPTURE(m.lhs_field);
      TOPO_CAPTURE(m.rhs_field);
      TOPO_CAPTURE(static_cast<int>(r.op));
      const Rows msgs = reference_messages(t, f, m);
      TOPO_CHECK_CLOSE(apply_edges(f, t.etype, m).data().to_vector<float>(), flatten(msgs), 1e-6, 1e-5);
      const Var out = update_all(f, t.etype, m, r);
      REQUIRE(out.size(0) == t.num_dst);
      REQUIRE(!msgs.empty());  // every test graph has edges
      TOPO_CHECK_CLOSE(out.data().to_vector<float>(), reference_reduce(t, msgs, r.op, msgs[0].size()), 1e-6, 1e-5);
    }
  }
}

TEST_CASE("update_all gradients pass gradcheck (sum and mean, fused and per-edge paths)") {
  for (const TestGraph& t : test_graphs()) {
    const GraphFeatures f0 = features(t, 7);
    const Var h = f0.ndata(src_type(t), "h"), q = f0.ndata(dst_type(t), "q"), w = f0.edata(t.etype, "w");
    const std::vector<std::pair<MessageFn, ReduceFn>> cases = {
        {fn::u_mul_e("h", "w", "m"), fn::sum("m", "o")},
        {fn::u_add_v("h", "q", "m"), fn::mean("m", "o")},
        {fn::e_sub_u("w", "h", "m"), fn::sum("m", "o")},
        {fn::u_dot_v("h", "q", "m"), fn::mean("m", "o")}};
    for (const auto& [m, r] : cases) {
      CAPTURE(t.name);
      TOPO_CAPTURE(static_cast<int>(m.op));
      const bool homo = src_type(t) == dst_type(t);
      TOPO_GRADCHECK(
          [&, m = m, r = r](const std::vector<Var>& x) {
            GraphFeatures f(t.g);
            if (homo) {
              // One node type: h and q must both have num_nodes rows (they do: num_src == num_dst).
              f.set_ndata(src_type(t), "h", x[0]);
              f.set_ndata(src_type(t), "q", x[1]);
            } else {
              f.set_ndata(src_type(t), "h", x[0]);
              f.set_ndata(dst_type(t), "q", x[1]);
            }
            f.set_edata(t.etype, "w", x[2]);
            return update_all(f, t.etype, m, r);
          },
          {h, q, w});
    }
  }
}

TEST_CASE("message and reduce UDFs equal the built-ins, forward and gradient") {
  for (const TestGraph& t : test_graphs())
    for (SpmmReduce red : {SpmmReduce::Sum, SpmmReduce::Mean}) {
      CAPTURE(t.name);
      CAPTURE(static_cast<int>(red));
      const GraphFeatures f = features(t, 9);
      const Var h = f.ndata(src_type(t), "h"), w = f.edata(t.etype, "w");
      const MessageFn udf_msg = fn::message_udf([](const EdgeBatch& eb) { return eb.src("h") * eb.data("w"); });
      const ReduceFn udf_red = fn::reduce_udf([red](const Mailbox& box) {
        Var s = sum(box.messages, 1);  // padding slots are 0
        if (red == SpmmReduce::Sum) return s;
        std::vector<float> inv(static_cast<std::size_t>(box.num_dst));
        const std::vector<float> mask = box.mask.to_vector<float>();
        for (std::int64_t v = 0; v < box.num_dst; ++v) {
          float deg = 0;
          for (std::int64_t k = 0; k < box.slots; ++k) deg += mask[v * box.slots + k];
          inv[v] = 1.f / std::max(deg, 1.f);
        }
        return s * Var(Tensor::from_vector(inv, {box.num_dst, 1}));
      });
      const ReduceFn builtin_red = red == SpmmReduce::Sum ? fn::sum("m", "h") : fn::mean("m", "h");
      const Tensor seed_grad = topo::testing::random_uniform({t.num_dst, 3}, 10);
      // Every pairing of UDF / built-in message and reducer gives the same values and gradients.
      std::vector<std::vector<float>> outs, ghs, gws;
      for (int pairing = 0; pairing < 4; ++pairing) {
        const MessageFn& m = pairing & 1 ? udf_msg : fn::u_mul_e("h", "w", "m");
        const ReduceFn& r = pairing & 2 ? udf_red : builtin_red;
        Var hh = h, ww = w;
        hh.zero_grad();
        ww.zero_grad();
        const Var out = update_all(f, t.etype, m, r);
        out.backward(seed_grad);
        outs.push_back(out.data().to_vector<float>());
        ghs.push_back(h.grad().to_vector<float>());
        gws.push_back(w.grad().to_vector<float>());
      }
      for (int pairing = 1; pairing < 4; ++pairing) {
        CAPTURE(pairing);
        TOPO_CHECK_CLOSE(outs[pairing], outs[0], 1e-6, 1e-5);
        TOPO_CHECK_CLOSE(ghs[pairing], ghs[0], 1e-6, 1e-5);
        TOPO_CHECK_CLOSE(gws[pairing], gws[0], 1e-6, 1e-5);
      }
    }
}

TEST_CASE("copy_u summed or averaged builds no edge ids; the same values and gradients as with them") {
  for (SpmmReduce red : {SpmmReduce::Sum, SpmmReduce::Mean}) {
    CAPTURE(static_cast<int>(red));
    const std::int64_t n = 37;
    const HeteroGraph g = HeteroGraph::from_edges(builders::window(n, 3), n);  // fresh: no format built yet
    const Var h = leaf({n, 5}, 3);
    GraphFeatures f(g);
    f.set_ndata(g.node_types()[0], "h", h);
    const ReduceFn r = red == SpmmReduce::Sum ? fn::sum("m", "o") : fn::mean("m", "o");
    const Tensor seed_grad = topo::testing::random_uniform({n, 5}, 4);
    const Var out = update_all(f, g.canonical_etype(0).etype, fn::copy_u("h", "m"), r);
    out.backward(seed_grad);
    const HeteroGraph::BuiltFormats built = g.built_formats(0);
    CHECK((built.csc && built.csr));  // forward by destination, backward by source
    CHECK_FALSE(built.csc_edge_ids);
    CHECK_FALSE(built.csr_edge_ids);
    // The same op on the full block (edge ids built) gives the same bits.
    Var h2 = h.detach();
    h2.set_requires_grad(true);
    const Var full = gspmm(relation_block(g, 0), MessageOp::CopyU, red, h2, Var());
    full.backward(seed_grad);
    CHECK(g.built_formats(0).csc_edge_ids);
    CHECK(out.data().to_vector<float>() == full.data().to_vector<float>());
    CHECK(h.grad().to_vector<float>() == h2.grad().to_vector<float>());
  }
  // What reads edge data refuses a structure-only view with a clear error, not a crash.
  const HeteroGraph g = HeteroGraph::from_edges(builders::window(9, 3), 9);
  const Var h = leaf({9, 2}, 5), w = leaf({g.num_edges(0), 1}, 6);
  CHECK(error_of([&] { (void)gspmm(relation_structure_block(g, 0), MessageOp::UMulE, SpmmReduce::Sum, h, w); })
            .find("no edge ids") != std::string::npos);
  CHECK(error_of([&] { (void)gspmm(relation_structure_block(g, 0), MessageOp::CopyU, SpmmReduce::Max, h, Var()); })
            .find("no edge ids") != std::string::npos);
}

TEST_CASE("sage_mean equals split -> mean -> add bit for bit, forward and gradient, and passes gradcheck") {
  // A window graph with one node left without in-edges (its output is its self half alone), int32 and int64 ids,
  // and widths F = 1, 5 (a masked vector), 8 (a half) and 16 (a whole one).
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  const std::int64_t n = 41;
  for (std::int64_t v = 0; v < n; ++v)
    for (std::int64_t d = -3; d <= 3; ++d)
      if (v != 7 && v + d >= 0 && v + d < n) pairs.emplace_back(v + d, v);
  for (const DType ids : {DType::I32, DType::I64}) {
    for (const std::int64_t f : {1, 5, 8, 16}) {
      CAPTURE(f);
      const HeteroGraph g = HeteroGraph::from_edges(EdgeList::from_pairs(pairs, ids), n);
      const Block b = gspmm_block(g, 0, MessageOp::CopyU, SpmmReduce::Mean);
      const Var y = leaf({n, 2 * f}, 11 + f);
      const Tensor seed_grad = topo::testing::random_uniform({n, f}, 12 + f);
      const Var fused = sage_mean(b, y);
      fused.backward(seed_grad);
      Var y2 = y.detach();
      y2.set_requires_grad(true);
      const std::vector<Var> halves = split(y2, {f, f}, 1);
      const Var composed = add(halves[1], gspmm(b, MessageOp::CopyU, SpmmReduce::Mean, halves[0], Var()));
      composed.backward(seed_grad);
      CHECK(fused.data().to_vector<float>() == composed.data().to_vector<float>());
      CHECK(y.grad().to_vector<float>() == y2.grad().to_vector<float>());
      if (f == 5)
        CHECK(gradcheck([&](const std::vector<Var>& in) { return sage_mean(b, in[0]); }, {leaf({n, 2 * f}, 13)}).ok);
    }
  }
  // Errors name the op and what was given: an odd width, a bipartite relation.
  const HeteroGraph g = HeteroGraph::from_edges(builders::window(9, 3), 9);
  const Block b = gspmm_block(g, 0, MessageOp::CopyU, SpmmReduce::Mean);
  CHECK(error_of([&] { (void)sage_mean(b, leaf({9, 3}, 1)); }).find("sage_mean: y must be float32 [9, 2F]") !=
        std::string::npos);
  CHECK(error_of([&] { (void)sage_mean(b, leaf({8, 4}, 1)); }).find("sage_mean") != std::string::npos);
  const TestGraph relay = make_graph("relay-in", builders::to_one(5), 5, 1, true);
  CHECK(error_of([&] { (void)sage_mean(relay.csr(), leaf({5, 4}, 1)); }).find("homogeneous") != std::string::npos);
}

TEST_CASE("multi_update_all combines relations per destination type with each cross reducer") {
  const std::vector<std::int64_t> lens = {5};
  HeteroGraph g({builders::node_type("sat", lens), builders::node_type("relay", builders::ones(1))},
                {{{"sat", "ring", "sat"}, builders::ring_batch(lens, true)},
                 {{"sat", "to_relay", "relay"}, builders::to_one_batch(lens)},
                 {{"relay", "from_relay", "sat"}, builders::from_one_batch(lens)}});
  const Var hs = leaf({5, 4}, 71), hr = leaf({1, 4}, 72);
  auto run = [&](const std::vector<Var>& x, CrossReduce cross) {
    GraphFeatures f(g);
    f.set_ndata("sat", "h", x[0]);
    f.set_ndata("relay", "h", x[1]);
    return multi_update_all(f,
                            {{"ring", fn::copy_u("h", "m"), fn::max("m", "h")},
                             {"from_relay", fn::copy_u("h", "m"), fn::sum("m", "h")},
                             {"to_relay", fn::copy_u("h", "m"), fn::mean("m", "h")}},
                            cross);
  };
  GraphFeatures f(g);
  f.set_ndata("sat", "h", hs);
  f.set_ndata("relay", "h", hr);
  auto single = [&](const std::string& etype, const ReduceFn& r) {
    return update_all(f, etype, fn::copy_u("h", "m"), r).data().to_vector<float>();
  };
  const std::vector<float> ring = single("ring", fn::max("m", "h")), relay = single("from_relay", fn::sum("m", "h")),
                           to_relay = single("to_relay", fn::mean("m", "h"));
  for (CrossReduce cross : {CrossReduce::Sum, CrossReduce::Mean, CrossReduce::Max, CrossReduce::Min}) {
    CAPTURE(static_cast<int>(cross));
    const auto out = run({hs, hr}, cross);
    REQUIRE(out.size() == 2);
    std::vector<float> expected(ring.size());
    for (std::size_t i = 0; i < ring.size(); ++i) {
      const float a = ring[i], b = relay[i];
      expected[i] = cross == CrossReduce::Sum    ? a + b
                    : cross == CrossReduce::Mean ? (a + b) / 2
                    : cross == CrossReduce::Max  ? std::max(a, b)
                                                 : std::min(a, b);
    }
    TOPO_CHECK_CLOSE(out.at("sat").data().to_vector<float>(), expected, 1e-6, 1e-6);
    TOPO_CHECK_CLOSE(out.at("relay").data().to_vector<float>(), to_relay, 1e-6, 1e-6);  // one relation: as is
  }
  for (CrossReduce cross : {CrossReduce::Sum, CrossReduce::Mean})
    TOPO_GRADCHECK([&](const std::vector<Var>& x) { return run(x, cross).at("sat"); }, {hs, hr});
  // Shapes that differ across relations into one type are named.
  GraphFeatures bad(g);
  bad.set_ndata("sat", "h", hs);
  bad.set_ndata("relay", "h", leaf({1, 2}, 73));
  CHECK_THROWS_AS(multi_update_all(bad,
                                   {{"ring", fn::copy_u("h", "m"), fn::sum("m", "h")},
                                    {"from_relay", fn::copy_u("h", "m"), fn::sum("m", "h")}},
                                   CrossReduce::Sum),
                  Error);
}

namespace {
using topo::testing::contains;
}  // namespace

TEST_CASE("message passing errors name the relation, the feature and the shapes") {
  const TestGraph t = test_graphs()[3];  // relay-in: (a, rel, b)
  const GraphFeatures f = features(t, 13);
  std::string e = error_of([&] { update_all(f, "nope", fn::copy_u("h", "m"), fn::sum("m", "h")); });
  CHECK(contains(e, "nope"));
  e = error_of([&] { update_all(f, t.etype, fn::copy_u("missing", "m"), fn::sum("m", "h")); });
  CHECK(contains(e, "missing"));
  CHECK(contains(e, "(a, rel, b)"));
  e = error_of([&] { update_all(f, t.etype, fn::copy_u("h", "m"), fn::sum("msg", "h")); });
  CHECK(contains(e, "msg"));
  GraphFeatures g = f;
  g.set_edata(t.etype, "w4", leaf({t.num_edges(), 4}, 1));
  e = error_of([&] { update_all(g, t.etype, fn::u_add_e("h", "w4", "m"), fn::sum("m", "h")); });
  CHECK(contains(e, "(a, rel, b)"));
  CHECK(contains(e, "4"));
  e = error_of([&] { g.set_ndata("a", "x", leaf({t.num_src + 1, 2}, 2)); });
  CHECK(contains(e, "'x'"));
  CHECK(contains(e, std::to_string(t.num_src)));
  e = error_of([&] { edge_softmax(t.g, t.etype, leaf({t.num_edges() + 2, 1}, 3)); });
  CHECK(contains(e, std::to_string(t.num_edges())));
  e = error_of([&] {
    update_all(f, t.etype, fn::message_udf([](const EdgeBatch& eb) { return eb.src("h").detach(); }),
               fn::reduce_udf([](const Mailbox& b) { return b.messages; }, "m", "h"));
  });
  CHECK(e.empty());  // a reduce UDF may return any [num_dst, ...] shape
  e = error_of([&] {
    update_all(f, t.etype, fn::message_udf([](const EdgeBatch& eb) { return eb.dst("q"); }),
               fn::reduce_udf([](const Mailbox& b) { return sum(b.messages, 0); }, "m", "h"));
  });
  CHECK(contains(e, "reduce UDF"));
}

TEST_CASE("a single-head GAT layer in a few lines passes gradcheck") {
  for (const TestGraph& t : {test_graphs()[5], test_graphs()[0]}) {  // window (self included), random
    CAPTURE(t.name);
    const Var x = leaf({t.num_src, 4}, 81), w = leaf({4, 3}, 82), al = leaf({3, 1}, 83), ar = leaf({3, 1}, 84);
    TOPO_GRADCHECK(
        [&](const std::vector<Var>& p) {
          GraphFeatures f(t.g);
          const Var h = matmul(p[0], p[1]);
          f.set_ndata("_N", "h", h);
          f.set_ndata("_N", "el", matmul(h, p[2]));
          f.set_ndata("_N", "er", matmul(h, p[3]));
          const Var score = leaky_relu(apply_edges(f, t.etype, fn::u_add_v("el", "er", "s")), 0.2f);
          f.set_edata(t.etype, "a", edge_softmax(t.g, t.etype, score));
          return update_all(f, t.etype, fn::u_mul_e("h", "a", "m"), fn::sum("m", "h"));
        },
        {x, w, al, ar});
  }
}

TEST_CASE("Transformer attention through the API equals the fused sparse_attention") {
  for (const TestGraph& t : test_graphs()) {
    CAPTURE(t.name);
    GraphFeatures f(t.g);
    const Var q = leaf({t.num_dst, 2, 4}, 91), k = leaf({t.num_src, 2, 4}, 92), v = leaf({t.num_src, 2, 3}, 93);
    f.set_ndata(dst_type(t), "q", q);
    f.set_ndata(src_type(t), "k", k);
    f.set_ndata(src_type(t), "v", v);
    if (src_type(t) == dst_type(t) && t.num_src != t.num_dst) continue;
    const Var s = apply_edges(f, t.etype, fn::v_dot_u("q", "k", "s")) * 0.5f;  // [E, 2, 1]
    f.set_edata(t.etype, "a", edge_softmax(t.g, t.etype, s));
    const Var out = update_all(f, t.etype, fn::u_mul_e("v", "a", "m"), fn::sum("m", "o"));
    TOPO_CHECK_CLOSE(out.data().to_vector<float>(),
                     sparse_attention(relation_block(t.g, t.etype), q, k, v, 0.5f).data().to_vector<float>(), 1e-5,
                     1e-4);
  }
}
