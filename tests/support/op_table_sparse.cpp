// The op table's sparse entries: gSpMM (every message op x reducer), gSDDMM (every op, node and edge operands
// both ways), edge softmax, fused sparse attention and GAT's fused edge attention, over one random graph per size.
//
// Size n: n destinations and n + 2 sources (U and V rows differ, so a swapped target is caught); destination
// v gets (5v + 3) mod 6 in-edges (some none), destination 0 also min(2n, 40) (a heavy row), sources at
// random (multi-edges), and the edge ids shuffled (edge order is not destination order). Features: 2 heads
// of 7 at the test sizes; at bench sizes (n > 257) 6 heads of 50, the text models' shape.
#include <algorithm>
#include <random>

#include "nn/sparse_ops.hpp"
#include "tests/support/op_table.hpp"
#include "tests/support/random_data.hpp"

namespace topo::optable {

namespace {

using Vars = std::vector<nn::Var>;

const std::vector<std::int64_t> kNodes = {1, 7, 31, 33, 257};
constexpr std::int64_t kBenchNodes = 1 << 14;
std::int64_t heads_at(std::int64_t n) { return n > 257 ? 6 : 2; }
std::int64_t width_at(std::int64_t n) { return n > 257 ? 50 : 7; }

// A problem over the size-n graph (inputs added by the caller).
Problem graph_problem(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  reference::Coo coo{n + 2, n, {}, {}};
  for (std::int64_t v = 0; v < n; ++v) {
    const std::int64_t degree = (5 * v + 3) % 6 + (v == 0 ? std::min<std::int64_t>(2 * n, 40) : 0);
    for (std::int64_t k = 0; k < degree; ++k) {
      coo.src.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(coo.num_src)));
      coo.dst.push_back(v);
    }
  }
  std::vector<std::size_t> order(coo.src.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  reference::Coo shuffled{coo.num_src, coo.num_dst, {}, {}};
  for (std::size_t i : order) {
    shuffled.src.push_back(coo.src[i]);
    shuffled.dst.push_back(coo.dst[i]);
    pairs.emplace_back(coo.src[i], coo.dst[i]);
  }
  Problem p;
  p.coo = shuffled;
  p.graph =
      HeteroGraph({{"src", coo.num_src}, {"dst", coo.num_dst}}, {{{"src", "rel", "dst"}, EdgeList::from_pairs(pairs)}});
  return p;
}

void add_gspmm(std::vector<Op>& table) {
  const std::vector<std::pair<const char*, MessageOp>> ops = {
      {"copy_u", MessageOp::CopyU},  {"copy_e", MessageOp::CopyE},  {"u_add_e", MessageOp::UAddE},
      {"u_sub_e", MessageOp::USubE}, {"u_mul_e", MessageOp::UMulE}, {"u_div_e", MessageOp::UDivE}};
  const std::vector<std::pair<const char*, SpmmReduce>> reds = {
      {"sum", SpmmReduce::Sum}, {"mean", SpmmReduce::Mean}, {"max", SpmmReduce::Max}, {"min", SpmmReduce::Min}};
  for (const auto& op_entry : ops)
    for (const auto& red_entry : reds) {
      // Copies, not structured bindings: clang 14 (the TSan build) cannot capture those in a lambda.
      const auto oname = op_entry.first;
      const auto mop = op_entry.second;
      const auto rname = red_entry.first;
      const auto red = red_entry.second;
      Op op{std::string("gspmm/") + oname + "/" + rname, kNodes, 7, kBenchNodes};
      const bool use_u = message_uses_u(mop), use_e = message_uses_e(mop);
      // Edge operands are per-head weights [E, H, 1] broadcast over the features (the models' form), except
      // copy_e's, which is the message itself [E, H, D]; in [0.5, 1.5): away from u_div_e's pole. Max and min
      // take separated values instead, so no two messages into a destination come within a finite-difference
      // step of each other: node values 0.1 apart and at least 0.05 from 0, edge values 0.003 apart (near 1
      // for u_mul_e / u_div_e) — a winner's margin exceeds what a step of 1e-3 moves, for up to 32 edges.
      // Only where finite differences run: at the bench size the spacing would make node values reach ±1638, and a
      // backward sum over 50 such terms cancels to a few ulps of 1e3, beyond any fixed tolerance.
      const bool pick_op = red == SpmmReduce::Max || red == SpmmReduce::Min;
      const float e_offset = mop == MessageOp::UMulE || mop == MessageOp::UDivE ? 1.f : 0.f;
      const std::int64_t fd_max = op.grad_max_size;
      op.make = [=](std::int64_t n, std::uint64_t seed) {
        const bool pick = pick_op && n <= fd_max;
        Problem p = graph_problem(n, seed);
        const std::int64_t H = heads_at(n), D = width_at(n);
        const Shape us = {p.coo.num_src, H, D}, es = {p.coo.num_edges(), H, use_u ? 1 : D};
        if (use_u)
          p.inputs.push_back(pick ? testing::random_separated(us, seed + 1, 0.1f, -0.45f)
                                  : testing::random_uniform(us, seed + 1));
        if (use_e)
          p.inputs.push_back(pick ? testing::random_separated(es, seed + 2, 0.003f, e_offset)
                                  : testing::random_uniform(es, seed + 2, 0.5f, 1.5f));
        p.grad.assign(p.inputs.size(), true);
        return p;
      };
      op.call = [=](const Problem& p, const Vars& x) {
        return nn::gspmm(p.block(), mop, red, use_u ? x[0] : nn::Var(), use_e ? x.back() : nn::Var());
      };
      op.reference = [=](const Problem& p) {
        const Tensor& f = p.inputs[0];
        return reference::gspmm(mop, red, p.coo, use_u ? host(f) : std::vector<float>{},
                                use_e ? host(p.inputs.back()) : std::vector<float>{}, f.size(1), f.size(2),
                                use_e ? p.inputs.back().size(2) : 1);
      };
      op.flops = [](const Problem& p) { return static_cast<double>(p.coo.num_edges() * p.inputs[0].row_numel()); };
      table.push_back(op);
    }
}

void add_gsddmm(std::vector<Op>& table) {
  const std::vector<std::pair<const char*, SddmmOp>> ops = {
      {"add", SddmmOp::Add}, {"sub", SddmmOp::Sub},          {"mul", SddmmOp::Mul},         {"div", SddmmOp::Div},
      {"dot", SddmmOp::Dot}, {"copy_lhs", SddmmOp::CopyLhs}, {"copy_rhs", SddmmOp::CopyRhs}};
  const std::vector<std::pair<Target, Target>> targets = {
      {Target::U, Target::V}, {Target::V, Target::U}, {Target::U, Target::E}, {Target::E, Target::V}};
  const auto letter = [](Target t) { return t == Target::U ? "u" : t == Target::V ? "v" : "e"; };
  for (const auto& op_entry : ops)
    for (const auto& target_entry : targets) {
      // Copies, not structured bindings: clang 14 (the TSan build) cannot capture those in a lambda.
      const auto oname = op_entry.first;
      const auto sop = op_entry.second;
      const auto lt = target_entry.first;
      const auto rt = target_entry.second;
      Op op{std::string("gsddmm/") + letter(lt) + "_" + oname + "_" + letter(rt), kNodes, 7, kBenchNodes};
      const bool use_l = sddmm_uses_lhs(sop), use_r = sddmm_uses_rhs(sop);
      op.make = [=](std::int64_t n, std::uint64_t seed) {
        Problem p = graph_problem(n, seed);
        const std::int64_t H = heads_at(n), D = width_at(n);
        if (use_l) p.inputs.push_back(testing::random_uniform({reference::target_rows(lt, p.coo), H, D}, seed + 1));
        if (use_r)
          p.inputs.push_back(testing::random_uniform({reference::target_rows(rt, p.coo), H, D}, seed + 2, 0.5f, 1.5f));
        p.grad.assign(p.inputs.size(), true);
        return p;
      };
      op.call = [=](const Problem& p, const Vars& x) {
        return nn::gsddmm(p.block(), sop, use_l ? x[0] : nn::Var(), use_r ? x.back() : nn::Var(), lt, rt);
      };
      op.reference = [=](const Problem& p) {
        const Tensor& f = p.inputs[0];
        return reference::gsddmm(sop, p.coo, use_l ? host(f) : std::vector<float>{}, lt,
                                 use_r ? host(p.inputs.back()) : std::vector<float>{}, rt, f.size(1), f.size(2));
      };
      op.flops = [](const Problem& p) { return static_cast<double>(p.coo.num_edges() * p.inputs[0].row_numel()); };
      table.push_back(op);
    }
}

void add_softmax_and_attention(std::vector<Op>& table) {
  for (bool by_src : {false, true}) {
    Op op{by_src ? "edge_softmax/src" : "edge_softmax/dst", kNodes, 7, kBenchNodes};
    op.make = [](std::int64_t n, std::uint64_t seed) {
      Problem p = graph_problem(n, seed);
      p.inputs = {testing::random_uniform({p.coo.num_edges(), heads_at(n)}, seed + 1, -4.f, 4.f)};
      p.grad = {true};
      return p;
    };
    op.call = [by_src](const Problem& p, const Vars& x) {
      return nn::edge_softmax(p.block(), x[0], by_src ? nn::NormBy::Src : nn::NormBy::Dst);
    };
    op.reference = [by_src](const Problem& p) {
      return reference::edge_softmax(p.coo, host(p.inputs[0]), p.inputs[0].size(1), by_src);
    };
    op.atol = 1e-6;
    table.push_back(op);
  }
  // Fused attention: q [dst, H, dk], k [src, H, dk], v [src, H, dv]. dk 7 and dv 5 at the test sizes; "dhN"
  // takes the widths the fused kernels specialise on (32, 64, 128); "kv" packs k and v as one [src, 2, H, dh]
  // projection.
  for (int variant = 0; variant < 5; ++variant) {
    static const char* names[] = {"sparse_attention", "sparse_attention/kv", "sparse_attention/dh32",
                                  "sparse_attention/dh64", "sparse_attention/dh128"};
    static const std::int64_t fixed_dh[] = {0, 0, 32, 64, 128};
    Op op{names[variant], kNodes, 7, kBenchNodes};
    const float scale = variant >= 2 ? 0.125f : 0.4f;
    op.make = [variant](std::int64_t n, std::uint64_t seed) {
      Problem p = graph_problem(n, seed);
      const std::int64_t H = heads_at(n), dk = variant >= 2 ? fixed_dh[variant] : width_at(n);
      const std::int64_t dv = variant == 0 ? dk - 2 : dk;
      if (variant == 1)
        p.inputs = {testing::random_uniform({p.coo.num_dst, H, dk}, seed + 1),
                    testing::random_uniform({p.coo.num_src, 2, H, dk}, seed + 2)};
      else
        p.inputs = {testing::random_uniform({p.coo.num_dst, H, dk}, seed + 1),
                    testing::random_uniform({p.coo.num_src, H, dk}, seed + 2),
                    testing::random_uniform({p.coo.num_src, H, dv}, seed + 3)};
      p.grad.assign(p.inputs.size(), true);
      return p;
    };
    op.call = [variant, scale](const Problem& p, const Vars& x) {
      return variant == 1 ? nn::sparse_attention_kv(p.block(), x[0], x[1], scale)
                          : nn::sparse_attention(p.block(), x[0], x[1], x[2], scale);
    };
    op.reference = [variant, scale](const Problem& p) {
      const std::int64_t H = p.inputs[0].size(1), dk = p.inputs[0].size(2);
      std::vector<float> k = host(p.inputs[1]), v;
      if (variant == 1) {  // split kv [src, 2, H, dk] into k and v [src, H, dk]
        const std::vector<float> kv = k;
        k.clear();
        for (std::size_t i = 0; i < kv.size(); ++i) (((i / (H * dk)) % 2) ? v : k).push_back(kv[i]);
      } else {
        v = host(p.inputs[2]);
      }
      const std::int64_t dv = static_cast<std::int64_t>(v.size()) / std::max<std::int64_t>(1, p.coo.num_src * H);
      return reference::sparse_attention(p.coo, host(p.inputs[0]), k, v, H, dk, dv, scale);
    };
    op.flops = [](const Problem& p) {  // q.k and p v per edge and head (dv ~ dk): 4 per edge and q element
      return 4.0 * static_cast<double>(p.coo.num_edges()) * static_cast<double>(p.inputs[0].row_numel());
    };
    op.atol = op.rtol = 1e-4;
    table.push_back(op);
  }
  // GAT's fused edge attention: el [src, H, 1], er [dst, H, 1], z [src, H, F] (F 5 at the test sizes, 8 at the
  // bench size: GAT's 8 x 8 layer). el at least 1 from 0 and er within +-0.5, so no score sits on the LeakyReLU's
  // kink where finite differences would straddle it. "/dropout": attention dropout 0.5 from a generator made
  // afresh for each call, so every forward of the finite differences draws the same mask.
  for (bool with_dropout : {false, true}) {
    Op op{with_dropout ? "gat_attention/dropout" : "gat_attention", kNodes, 7, kBenchNodes};
    op.make = [](std::int64_t n, std::uint64_t seed) {
      Problem p = graph_problem(n, seed);
      const std::int64_t H = n > 257 ? 8 : 2, F = n > 257 ? 8 : 5;
      p.inputs = {uniform({p.coo.num_src, H, 1}, seed + 1, -2.f, 2.f, 1.f),
                  testing::random_uniform({p.coo.num_dst, H, 1}, seed + 2, -0.5f, 0.5f),
                  testing::random_uniform({p.coo.num_src, H, F}, seed + 3)};
      p.grad.assign(p.inputs.size(), true);
      return p;
    };
    constexpr float kSlope = 0.2f, kDrop = 0.5f;
    constexpr std::uint64_t kMaskSeed = 0x6a7;
    op.call = [with_dropout](const Problem& p, const Vars& x) {
      nn::Generator gen(kMaskSeed);
      return nn::gat_attention(p.block(), x[0], x[1], x[2], kSlope, with_dropout ? kDrop : 0.f, true, gen);
    };
    op.reference = [with_dropout](const Problem& p) {
      const std::int64_t H = p.inputs[2].size(1), F = p.inputs[2].size(2);
      const reference::GatMask mask = with_dropout ? reference::GatMask{kDrop, kMaskSeed, 0} : reference::GatMask{};
      return reference::gat_attention(p.coo, host(p.inputs[0]), host(p.inputs[1]), host(p.inputs[2]), H, F, kSlope,
                                      mask);
    };
    op.flops = [](const Problem& p) {  // a' z per edge and z element (the scores are O(H) per edge)
      return 2.0 * static_cast<double>(p.coo.num_edges()) * static_cast<double>(p.inputs[2].row_numel());
    };
    op.atol = op.rtol = 1e-4;
    table.push_back(op);
  }
}

}  // namespace

void add_sparse_ops(std::vector<Op>& table) {
  add_gspmm(table);
  add_gsddmm(table);
  add_softmax_and_attention(table);
}

}  // namespace topo::optable
