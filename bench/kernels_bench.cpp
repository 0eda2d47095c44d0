// Suite `kernels`: the sparse kernels on the two topologies of the paper's text setting, 6 heads x 50:
//   ring+relay — 128 Star-Transformer sentences of n = 128: the satellite block (ring, self, token, relay;
//                5 in-edges each) and the relay block (n + 1 in-edges each: the skewed rows);
//   window     — 128 sentences of n = 128, window w = 9 (9 in-edges each);
//   head groups — Multi-Scale's five scales on 10 heads, the grouped op against its fused calls alone;
//   gat        — GAT's fused edge attention at its node-classify recipe's first layer (8 heads x 8, attention
//                dropout 0.6) on 100,000 nodes of 20 random in-edges and a self loop (a csbm graph's shape);
//   gcn        — GCN's copy_u sum aggregation at widths 16 and 8 on that graph.
// Bytes are the minimum each kernel must move: every source row it reads once, every output row written
// once, the CSR arrays (int32) once. Source rows are read through an index: that part is judged against
// the gather rate for rows of that width at the working-set size, the rest against triad. Edge values are
// judged as streamed even where the edge ids are permuted: they come in ordered runs, and the random
// 24-byte-row gather rate was a loose bound there (edge_softmax backward measured 1.5x above it); exps (one per edge and head in a softmax) against the measured
// exp rate, flops against the sgemm peak; `fraction_of_bound` is the time at the slowest of them over the
// measured median (harness.hpp: bound_of). Fused attention is
// also timed against the three-kernel composition (gsddmm -> edge_softmax -> gspmm), forward and
// forward + backward through autograd, and once more on an 8-sentence batch that fits in L3.
#include "bench/harness.hpp"
#include "kernels/dense/random.hpp"
#include "kernels/sparse/attention.hpp"
#include "kernels/sparse/edge_softmax.hpp"
#include "kernels/sparse/gat_attention.hpp"
#include "kernels/sparse/sddmm.hpp"
#include "kernels/sparse/spmm.hpp"
#include "kernels/dense/indexing.hpp"
#include "models/multiscale_transformer/multiscale_transformer.hpp"
#include "models/star_transformer/topology.hpp"
#include "nn/attention.hpp"
#include "nn/ops.hpp"

#include <initializer_list>
#include <random>

namespace {

using namespace topo;
constexpr std::int64_t kHeads = 6, kHeadDim = 50, kFeatures = kHeads * kHeadDim;

double csr_bytes(const CsrView& c) { return 4.0 * static_cast<double>(c.num_rows + 1 + 2 * c.nnz()); }
double rows_bytes(std::int64_t rows, std::int64_t width) { return 4.0 * static_cast<double>(rows * width); }

// Work of `bytes` whose `gathered` part is rows of `row_bytes` read through an index.
bench::Work gather_work(double bytes, double gathered, double row_bytes, double flops = 0, double exps = 0) {
  return {.bytes_moved = bytes, .flops = flops, .working_set_bytes = bytes, .gathered_bytes = gathered,
          .gather_row_bytes = gathered > 0 ? row_bytes : 0, .exps = exps};
}

// Fused attention forward and backward, minimum work: q, k, v in, out and lse out; the backward reads the
// forward's q, k, v, out, lse and d_out once and writes dq, dk, dv once, through both CSRs. k and v rows (and
// in the backward also dk, dv) are reached through the index. Exps: one per edge and head in each pass;
// flops: the forward's q.k and p v (4 per edge and feature), the backward's q.k, d_out.v, ds k, ds q, p d_out (10).
struct AttentionWork {
  bench::Work forward, backward, both;
};
AttentionWork attention_work(const Block& block, std::int64_t heads = kHeads, std::int64_t head_dim = kHeadDim) {
  const CsrView& in = block.in;
  const std::int64_t features = heads * head_dim;
  const double graph = csr_bytes(in), src = rows_bytes(block.num_src, features),
               dst = rows_bytes(block.num_dst, features), lse = rows_bytes(block.num_dst, heads);
  const double ef = static_cast<double>(block.num_edges() * features), eh = static_cast<double>(block.num_edges() * heads);
  AttentionWork w;
  w.forward = gather_work(graph + 2 * dst + 2 * src + lse, 2 * src, 4.0 * features, 4 * ef, eh);
  w.backward = gather_work(2 * graph + 4 * dst + lse + 4 * src, 2 * src, 4.0 * features, 10 * ef, eh);
  w.both = gather_work(w.forward.bytes_moved + w.backward.bytes_moved, 4 * src, 4.0 * features, 14 * ef, 2 * eh);
  return w;
}

void bench_attention(bench::Runner& bench, const std::string& tag, const Block& block);

// A training step starts with the leaves' gradients zeroed; accumulating into them across a bench's repetitions
// would add an axpy per leaf that no step runs (three [N, 300] ones were ~40% of the fused fwd+bwd row).
void fresh_grads(std::initializer_list<nn::Var*> leaves) {
  for (nn::Var* leaf : leaves) leaf->zero_grad();
}

void bench_topology(bench::Runner& bench, const std::string& tag, const Block& block) {
  const CsrView& in = block.in;
  const std::int64_t nd = block.num_dst, ns = block.num_src, ne = block.num_edges();
  const nlohmann::json shape = {{"dst", nd}, {"src", ns}, {"edges", ne}, {"heads", kHeads}, {"head_dim", kHeadDim}};
  const Tensor u = random_uniform({ns, kHeads, kHeadDim}, -1, 1, 1), q = random_uniform({nd, kHeads, kHeadDim}, -1, 1, 2);
  const Tensor w = random_uniform({ne, kHeads, 1}, 0, 1, 4);
  const Tensor logits = random_uniform({ne, kHeads}, -2, 2, 5);
  const double graph = csr_bytes(in), src = rows_bytes(ns, kFeatures), dst = rows_bytes(nd, kFeatures);
  const double edge = rows_bytes(ne, kHeads);
  const double row = 4.0 * kFeatures, ef = static_cast<double>(ne * kFeatures), eh = static_cast<double>(ne * kHeads);

  bench.run(tag + " gspmm copy_u sum", gather_work(graph + src + dst, src, row, ef),
            [&] { (void)gspmm(MessageOp::CopyU, SpmmReduce::Sum, in, u, Tensor()); }, shape);
  bench.run(tag + " gspmm u_mul_e sum [E,H,1]", gather_work(graph + src + edge + dst, src, row, 2 * ef),
            [&] { (void)gspmm(MessageOp::UMulE, SpmmReduce::Sum, in, u, w); }, shape);
  bench.run(tag + " gsddmm dot (q_v . k_u)", gather_work(graph + src + dst + edge, src, row, 2 * ef),
            [&] { (void)gsddmm(SddmmOp::Dot, in, q, u, Target::V, Target::U); }, shape);
  const Tensor y = edge_softmax(in, logits);
  bench.run(tag + " edge_softmax", gather_work(graph + 2 * edge, 0, 0, 0, eh),
            [&] { (void)edge_softmax(in, logits); }, shape);
  bench.run(tag + " edge_softmax backward", gather_work(graph + 3 * edge, 0, 0),
            [&] { (void)edge_softmax_backward(in, y, logits); }, shape);

  bench_attention(bench, tag, block);
}

// Fused attention against the three-kernel composition, forward and forward + backward.
void bench_attention(bench::Runner& bench, const std::string& tag, const Block& block) {
  const Block& g = block;
  const CsrView& in = block.in;
  const std::int64_t nd = block.num_dst, ns = block.num_src, ne = block.num_edges();
  const nlohmann::json shape = {{"dst", nd}, {"src", ns}, {"edges", ne}, {"heads", kHeads}, {"head_dim", kHeadDim}};
  const Tensor u = random_uniform({ns, kHeads, kHeadDim}, -1, 1, 1), q = random_uniform({nd, kHeads, kHeadDim}, -1, 1, 2);
  const Tensor v = random_uniform({ns, kHeads, kHeadDim}, -1, 1, 3);
  const float scale = 1.f / std::sqrt(static_cast<float>(kHeadDim));
  const AttentionWork aw = attention_work(block);
  const bench::Result fused = bench.run(tag + " attention fused", aw.forward,
                                        [&] { (void)sparse_attention(in, q, u, v, scale); }, shape);
  const bench::Result composed = bench.run(tag + " attention composed", aw.forward, [&] {
    const Tensor s = gsddmm(SddmmOp::Dot, in, q, u, Target::V, Target::U);
    (void)gspmm(MessageOp::UMulE, SpmmReduce::Sum, in, v, edge_softmax(in, s));
  }, shape);
  bench.annotate("composed_over_fused", composed.stats.median_ms / fused.stats.median_ms);
  const AttentionOutput forward = sparse_attention(in, q, u, v, scale);
  const Tensor d_out = random_uniform({nd, kHeads, kHeadDim}, -1, 1, 7);
  bench.run(tag + " attention fused backward", aw.backward,
            [&] { (void)sparse_attention_backward(in, block.out, q, u, v, forward, d_out, scale); }, shape);

  // Forward + backward through autograd, the way a training step runs them: the output's gradient comes in
  // (d_out) and the leaves' gradients are fresh each time.
  nn::Var qv(q, true), kv(u, true), vv(v, true);
  const bench::Result fused_bw = bench.run(tag + " attention fused fwd+bwd", aw.both, [&] {
    fresh_grads({&qv, &kv, &vv});
    nn::sparse_attention(g, qv, kv, vv, scale).backward(d_out);
  }, shape);
  const bench::Result composed_bw = bench.run(tag + " attention composed fwd+bwd", aw.both, [&] {
    fresh_grads({&qv, &kv, &vv});
    const nn::Var s = nn::gsddmm(g, SddmmOp::Dot, qv * scale, kv, Target::V, Target::U);
    const nn::Var a = nn::edge_softmax(g, s);
    nn::gspmm(g, MessageOp::UMulE, SpmmReduce::Sum, vv, a).backward(d_out);
  }, shape);
  bench.annotate("composed_over_fused", composed_bw.stats.median_ms / fused_bw.stats.median_ms);
}

// Row strides on the window graph: 300-float rows start at 1200-byte offsets, so 15 of every 16 straddle one
// more cache line than they fill; padded to 304 floats (1216 bytes, 64-byte aligned when the buffer is)
// every row is whole lines. gspmm copy_u sum and the fused attention (q, k, v [N, 6, 50] against the same
// heads padded to 6 x 64: per-head rows aligned) with and without; `padded_over_plain` is the padded run's
// time over the unpadded one's, for the same useful data (below 1: padding would win).
void bench_padding(bench::Runner& bench, const Block& block) {
  const CsrView& in = block.in;
  const std::int64_t n = block.num_src;
  const double graph = csr_bytes(in);
  double plain_ms = 0;
  for (std::int64_t width : {std::int64_t{300}, std::int64_t{304}}) {
    const Tensor u = random_uniform({n, width}, -1, 1, 1);
    const double rows = rows_bytes(n, width);
    const bench::Result r = bench.run(fmt::format("window w=9 gspmm copy_u sum, rows of {} floats", width),
                                      gather_work(graph + 2 * rows, rows, 4.0 * width, static_cast<double>(in.nnz() * width)),
                                      [&] { (void)gspmm(MessageOp::CopyU, SpmmReduce::Sum, in, u, Tensor()); },
                                      {{"row_floats", width}});
    if (width == 300) plain_ms = r.stats.median_ms;
    else bench.annotate("padded_over_plain", r.stats.median_ms / plain_ms);
  }
  plain_ms = 0;
  for (std::int64_t dh : {std::int64_t{50}, std::int64_t{64}}) {
    const Tensor q = random_uniform({n, kHeads, dh}, -1, 1, 2), k = random_uniform({n, kHeads, dh}, -1, 1, 3),
                 v = random_uniform({n, kHeads, dh}, -1, 1, 4);
    const double rows = rows_bytes(n, kHeads * dh);
    const double ef = static_cast<double>(in.nnz() * kHeads * dh);
    const bench::Result r = bench.run(
        fmt::format("window w=9 attention fused, heads of {} floats", dh),
        gather_work(graph + 4 * rows + rows_bytes(n, kHeads), 2 * rows, 4.0 * kHeads * dh, 4 * ef,
                    static_cast<double>(in.nnz() * kHeads)),
        [&] { (void)sparse_attention(in, q, k, v, 1.f / std::sqrt(50.f)); }, {{"head_floats", dh}});
    if (dh == 50) plain_ms = r.stats.median_ms;
    else bench.annotate("padded_over_plain", r.stats.median_ms / plain_ms);
  }
}

// Head groups (the Multi-Scale paper config: 10 heads x 30 on scales 1, 3, N/16, N/8, N/4, two heads each) on
// 128 sentences of n = 128, forward + backward: the grouped op (one autograd node: heads split per group,
// one fused call per group, outputs joined) against its fused calls alone on pre-split inputs. The gap is
// the split and join copies. Reading each group's heads in place instead (the kernels on strided head
// slices of q and kv, writing their columns of out, dq and dkv) was slower, 46-49 -> 54-58 ms (tried
// 2026-12-02): each group's pass then streams whole 300- and 600-float rows for its 60 floats, where the
// copies leave every group a dense tensor of its own.
void bench_head_groups(bench::Runner& bench) {
  const std::vector<std::int64_t> lengths(128, 128);
  const auto scales = models::parse_scales("1,3,N/16,N/8,N/4");
  const models::MultiScaleTopology t = models::multiscale_topology(lengths, scales);
  const std::int64_t heads = 10, dh = 30, n = t.num_positions();
  const nlohmann::json shape = {{"positions", n}, {"heads", heads}, {"head_dim", dh}, {"scales", "1,3,N/16,N/8,N/4"}};
  std::vector<const Block*> blocks;
  for (const Block& b : t.scales) blocks.push_back(&b);
  const std::vector<std::int64_t> sizes(blocks.size(), heads / static_cast<std::int64_t>(blocks.size()));
  nn::Var q(random_uniform({n, heads, dh}, -1, 1, 1), true), k(random_uniform({n, heads, dh}, -1, 1, 2), true),
      v(random_uniform({n, heads, dh}, -1, 1, 3), true);
  const Tensor r = random_uniform({n, heads, dh}, -1, 1, 4);
  const float scale = 1.f / std::sqrt(static_cast<float>(dh));
  // Minimum work: each group's fused forward + backward on its heads (summed; the gather rate at the
  // groups' common row width, heads x dh of one group).
  bench::Work work;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const bench::Work g = attention_work(*blocks[i], sizes[i], dh).both;
    work.bytes_moved += g.bytes_moved, work.gathered_bytes += g.gathered_bytes, work.flops += g.flops,
        work.exps += g.exps, work.gather_row_bytes = g.gather_row_bytes;
  }
  work.working_set_bytes = work.bytes_moved;
  const bench::Result grouped = bench.run("head groups (5 scales) fwd+bwd, grouped op", work, [&] {
    fresh_grads({&q, &k, &v});
    nn::sparse_attention(blocks, sizes, q, k, v, scale).backward(r);
  }, shape);
  const auto qs = topo::split(q.data(), sizes, 1), ks = topo::split(k.data(), sizes, 1), vs = topo::split(v.data(), sizes, 1);
  const auto rs = topo::split(r, sizes, 1);
  const bench::Result kernels = bench.run("head groups (5 scales) fwd+bwd, fused calls alone", work, [&] {
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      const AttentionOutput fwd = sparse_attention(blocks[i]->in, qs[i], ks[i], vs[i], scale);
      (void)sparse_attention_backward(blocks[i]->in, blocks[i]->out, qs[i], ks[i], vs[i], fwd, rs[i], scale);
    }
  }, shape);
  bench.annotate("grouped_over_kernels", grouped.stats.median_ms / kernels.stats.median_ms);
}

// A csbm graph's shape: kRandomNodes nodes, each with kRandomInEdges in-edges from random nodes and a self loop.
constexpr std::int64_t kRandomNodes = 100000, kRandomInEdges = 20;
Block random_graph_block() {
  std::mt19937_64 gen(1);
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  pairs.reserve(static_cast<std::size_t>(kRandomNodes * (kRandomInEdges + 1)));
  for (std::int64_t v = 0; v < kRandomNodes; ++v) {
    pairs.emplace_back(v, v);
    for (std::int64_t k = 0; k < kRandomInEdges; ++k)
      pairs.emplace_back(static_cast<std::int64_t>(gen() % kRandomNodes), v);
  }
  const HeteroGraph g({NodeTypeSpec{"node", kRandomNodes}}, {{{"node", "edge", "node"}, EdgeList::from_pairs(pairs)}});
  return to_block(g, "node", {"edge"});
}

// GCN's aggregation at its node-classify recipe's widths (16 hidden, 8 classes): copy_u sum over the random
// graph, the op that takes half of a GCN epoch on a csbm graph. Minimum work: the CSR and the output once, one
// source row gathered per in-edge (no row is read once for all its edges: see bench_gat).
void bench_gcn_aggregation(bench::Runner& bench, const Block& block) {
  const std::int64_t ne = block.num_edges();
  for (const std::int64_t width : {16, 8}) {
    const Tensor u = random_uniform({kRandomNodes, width}, -1, 1, 1);
    const double rows = rows_bytes(kRandomNodes, width), gathered = 4.0 * static_cast<double>(ne * width);
    bench::Work work = gather_work(csr_bytes(block.in) + rows + gathered, gathered, 4.0 * width,
                                   static_cast<double>(ne * width));
    work.working_set_bytes = csr_bytes(block.in) + 2 * rows;
    bench.run(fmt::format("gcn gspmm copy_u sum, width {}", width), work,
              [&] { (void)gspmm(MessageOp::CopyU, SpmmReduce::Sum, block.in, u, Tensor()); },
              {{"nodes", kRandomNodes}, {"edges", ne}, {"width", width}});
  }
}

// gat_attention forward and backward. Minimum work: the CSR (both in the backward), el and er, the output
// (backward: dz, del, der) and lse streamed; a z row gathered per in-edge (the backward: z by source and the
// output gradient by destination, two rows an edge): the 20 in-edges of a node come from random nodes of a
// 25.6 MB table, so unlike Star's near-consecutive neighbours no row is read once for all its edges (counted
// once, the rows gave bounds of 2.3 and 6.3 ms that no order of the edges could reach: 5.5% and 4.1%);
// exps one per edge and head per pass; flops 2 per edge and feature forward, 4 backward (a dot and a sum).
void bench_gat(bench::Runner& bench, const Block& block) {
  constexpr std::int64_t kNodes = kRandomNodes, kGatHeads = 8, kGatDim = 8;
  const std::int64_t ne = block.num_edges(), features = kGatHeads * kGatDim;
  const Tensor z = random_uniform({kNodes, kGatHeads, kGatDim}, -1, 1, 1);
  const Tensor el = random_uniform({kNodes, kGatHeads}, -1, 1, 2), er = random_uniform({kNodes, kGatHeads}, -1, 1, 3);
  const Tensor dout = random_uniform({kNodes, kGatHeads, kGatDim}, -1, 1, 4);
  const GatDropout drop{.p = 0.6f, .scale = 1.f / 0.4f, .seed = 5, .offset = 0};
  const double graph = csr_bytes(block.in), rows = rows_bytes(kNodes, features), scores = rows_bytes(kNodes, kGatHeads);
  const double ef = static_cast<double>(ne * features), eh = static_cast<double>(ne * kGatHeads);
  const nlohmann::json shape = {{"nodes", kNodes}, {"edges", ne}, {"heads", kGatHeads}, {"head_dim", kGatDim},
                                {"attention_dropout", drop.p}};
  const GatAttentionOutput fwd = gat_attention(block.in, el, er, z, 0.2f, drop);
  // One row of `features` floats per in-edge, from tables whose size (not the bytes gathered) sets the gather
  // rate they are judged against: the graph, scores and rows the kernel touches.
  const double gathered = 4.0 * ef;
  bench::Work forward = gather_work(graph + 3 * scores + rows + gathered, gathered, 4.0 * features, 2 * ef, eh);
  forward.working_set_bytes = graph + 3 * scores + 2 * rows;
  bench::Work backward = gather_work(2 * graph + 6 * scores + 2 * rows + 2 * gathered, 2 * gathered, 4.0 * features, 4 * ef, 2 * eh);
  backward.working_set_bytes = 2 * graph + 6 * scores + 4 * rows;
  bench.run("gat 8x8 attention forward", forward, [&] { (void)gat_attention(block.in, el, er, z, 0.2f, drop); }, shape);
  bench.run("gat 8x8 attention backward", backward,
            [&] { (void)gat_attention_backward(block.in, block.out, el, er, z, fwd, dout, 0.2f, drop); }, shape);
}

}  // namespace

TOPO_BENCH_SUITE(kernels, "gspmm, gsddmm, edge softmax and fused attention on ring+relay and window batches") {
  const std::vector<std::int64_t> lengths(128, 128);
  const models::StarTopology star = models::star_topology(lengths, models::StarVariant::Full);
  bench_topology(bench, "ring+relay satellites", star.satellite);
  bench_topology(bench, "ring+relay relay", star.relay);
  HeteroGraph window({builders::node_type("tok", lengths)}, {{{"tok", "window", "tok"}, builders::window_batch(lengths, 9)}});
  const Block window_block = to_block(window, "tok", {"window"});
  bench_topology(bench, "window w=9", window_block);
  bench_padding(bench, window_block);
  // 8 sentences: q, k, v (~7 MiB) stay in L3, so the kernels are bound by their arithmetic, not by DRAM.
  const std::vector<std::int64_t> few(8, 128);
  bench_attention(bench, "ring+relay satellites, 8 sentences",
                  models::star_topology(few, models::StarVariant::Full).satellite);
  bench_head_groups(bench);
  const Block random = random_graph_block();
  bench_gcn_aggregation(bench, random);
  bench_gat(bench, random);
}
