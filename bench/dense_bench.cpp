// Suite `dense`: the dense kernels at the sizes one training step of the text models uses.
// A real batch: 128 sentences x 128 tokens x 300 features (x: [128, 128, 300] float32, 19.7 MB), and the
// projections' GEMMs (M x K x N = rows x 300 x 300).
// GEMMs are judged against the sgemm peak, everything else against triad at its own working-set size.
// Bytes are the minimum each op must read + write (write-allocate not counted, as in the triad reference).
// The ops return fresh tensors, so their times include allocating (and page-faulting) the output: that is
// what a caller of the public API pays, and the `zeros` benchmark shows that cost on its own.
#include <cstdint>
#include <random>
#include <string>

#include <fmt/format.h>

#include "bench/harness.hpp"
#include "kernels/dense/binary.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/dense/indexing.hpp"
#include "kernels/dense/layer_norm.hpp"
#include "kernels/dense/random.hpp"
#include "kernels/dense/softmax.hpp"
#include "kernels/dense/unary.hpp"
#include "kernels/tensor.hpp"

namespace {

using topo::Shape;
using topo::Tensor;
using topo::bench::Work;

constexpr std::int64_t kSentences = 128, kTokens = 128, kFeatures = 300;

// Uniform [-1, 1) values from a seeded generator (the timings do not depend on the values; softmax and
// layer_norm only need them finite and varied).
Tensor uniform(const Shape& shape, std::uint32_t seed) {
  Tensor t = Tensor::empty(shape);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  float* p = t.data<float>();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = dist(gen);
  return t;
}

double bytes_of(std::int64_t floats) { return 4.0 * static_cast<double>(floats); }

std::string dims(std::int64_t m, std::int64_t k, std::int64_t n) { return fmt::format("{}x{}x{}", m, k, n); }

// c[M,N] = a[M,K] @ b[K,N] into a preallocated c: the kernel alone. Minimum bytes: read a and b, write c.
void bench_gemm(topo::bench::Runner& bench, std::int64_t m, std::int64_t k, std::int64_t n) {
  const Tensor a = uniform({m, k}, 1), b = uniform({k, n}, 2);
  Tensor c = Tensor::empty({m, n});
  const double bytes = bytes_of(m * k + k * n + m * n);
  bench.run("sgemm " + dims(m, k, n),
            {.bytes_moved = bytes, .flops = 2.0 * static_cast<double>(m * k) * static_cast<double>(n),
             .working_set_bytes = bytes},
            [&] { topo::gemm(false, false, 1.f, a, b, 0.f, c); }, {{"m", m}, {"k", k}, {"n", n}});
}

// A graph layer's projection of node features and its weight gradient (kernels/dense/gemm_skinny.hpp): x [N, K]
// @ w [K, n] and x^T @ g with g [N, n], N = 100,000 nodes. Both stream x once (51 MB at K = 128): judged as bytes
// at that working set, where the FLOPs (2 N K n) are far below the peak.
void bench_projection(topo::bench::Runner& bench, std::int64_t k, std::int64_t n) {
  constexpr std::int64_t nodes = 100000;
  const Tensor x = uniform({nodes, k}, 11), w = uniform({k, n}, 12), g = uniform({nodes, n}, 13);
  Tensor y = Tensor::empty({nodes, n}), dw = Tensor::empty({k, n});
  const double flops = 2.0 * static_cast<double>(nodes * k) * static_cast<double>(n);
  const double bytes = bytes_of(nodes * k + k * n + nodes * n);
  const nlohmann::json shape = {{"nodes", nodes}, {"k", k}, {"n", n}};
  bench.run(fmt::format("projection [N, {}] @ [{}, {}]", k, k, n),
            {.bytes_moved = bytes, .flops = flops, .working_set_bytes = bytes},
            [&] { topo::gemm(false, false, 1.f, x, w, 0.f, y); }, shape);
  bench.run(fmt::format("weight gradient [N, {}]^T @ [N, {}]", k, n),
            {.bytes_moved = bytes, .flops = flops, .working_set_bytes = bytes},
            [&] { topo::gemm(true, false, 1.f, x, g, 0.f, dw); }, shape);
}

}  // namespace

TOPO_BENCH_SUITE(dense, "GEMM, layer_norm, softmax and elementwise ops at a real batch's sizes") {
  // GEMMs: one sentence's projection (128 tokens), a 32-sentence slice, the whole batch.
  bench_gemm(bench, 128, kFeatures, kFeatures);
  bench_gemm(bench, 4096, kFeatures, kFeatures);
  bench_gemm(bench, kSentences * kTokens, kFeatures, kFeatures);
  // GCN's two layers and SAGE's first ([W_neigh; W_self]) at the node-classify recipes' widths.
  bench_projection(bench, 128, 16);
  bench_projection(bench, 16, 8);
  bench_projection(bench, 128, 32);

  const Shape shape = {kSentences, kTokens, kFeatures};
  const std::int64_t rows = kSentences * kTokens, n = rows * kFeatures;
  const double x_bytes = bytes_of(n), row_bytes = bytes_of(kFeatures), stats_bytes = bytes_of(rows);
  const nlohmann::json batch = {{"shape", topo::shape_str(shape)}, {"allocates_output", true}};
  const Tensor x = uniform(shape, 3), other = uniform(shape, 4), grad = uniform(shape, 5);
  const Tensor gamma = uniform({kFeatures}, 6), beta = uniform({kFeatures}, 7), row = uniform({kFeatures}, 8);

  // The cost of a fresh output on its own: allocate + write zeros.
  bench.run("zeros", {.bytes_moved = x_bytes, .working_set_bytes = x_bytes},
            [&] { (void)Tensor::zeros(shape); }, batch);

  // Elementwise: y = f(x) reads x, writes y; binary ops read both inputs (a broadcast row once).
  bench.run("relu", {.bytes_moved = 2 * x_bytes, .working_set_bytes = 2 * x_bytes},
            [&] { (void)topo::relu(x); }, batch);
  // elu (GAT's recipe): one expm1_approx per element (every lane, then a select), judged against the exp rate.
  bench.run("elu", {.bytes_moved = 2 * x_bytes, .working_set_bytes = 2 * x_bytes, .exps = static_cast<double>(n)},
            [&] { (void)topo::elu(x); }, batch);
  // tanh (the character encoder's), sigmoid and gelu: one exp_approx per element each, against the exp rate.
  bench.run("tanh", {.bytes_moved = 2 * x_bytes, .working_set_bytes = 2 * x_bytes, .exps = static_cast<double>(n)},
            [&] { (void)topo::tanh(x); }, batch);
  bench.run("sigmoid", {.bytes_moved = 2 * x_bytes, .working_set_bytes = 2 * x_bytes, .exps = static_cast<double>(n)},
            [&] { (void)topo::sigmoid(x); }, batch);
  bench.run("gelu", {.bytes_moved = 2 * x_bytes, .working_set_bytes = 2 * x_bytes, .exps = static_cast<double>(n)},
            [&] { (void)topo::gelu(x); }, batch);
  bench.run("gelu backward", {.bytes_moved = 3 * x_bytes, .working_set_bytes = 3 * x_bytes, .exps = static_cast<double>(n)},
            [&] { (void)topo::unary_backward(topo::UnaryOp::Gelu, grad, x, x); }, batch);
  // dropout (every model's, p = 0.5) as nn::dropout runs it: one Philox draw per element, applied and kept as a
  // bit; the mask alone (a dropped-out input, applied slab by slab); its application (every backward).
  const double mask_bytes = x_bytes / 32;
  bench.run("dropout with mask", {.bytes_moved = 2 * x_bytes + mask_bytes, .working_set_bytes = 2 * x_bytes + mask_bytes},
            [&] { (void)topo::dropout_with_mask(x, 0.5f, 11); }, batch);
  bench.run("dropout mask", {.bytes_moved = mask_bytes, .working_set_bytes = mask_bytes},
            [&] { (void)topo::dropout_mask(x.numel(), 0.5f, 11); }, batch);
  const Tensor mask = topo::dropout_mask(x.numel(), 0.5f, 11);
  bench.run("dropout apply mask", {.bytes_moved = 2 * x_bytes + mask_bytes, .working_set_bytes = 2 * x_bytes + mask_bytes},
            [&] { (void)topo::dropout_apply_mask(x, mask, 0.5f); }, batch);
  bench.run("add", {.bytes_moved = 3 * x_bytes, .working_set_bytes = 3 * x_bytes},
            [&] { (void)topo::add(x, other); }, batch);
  bench.run("mul row-broadcast", {.bytes_moved = 2 * x_bytes + row_bytes, .working_set_bytes = 2 * x_bytes + row_bytes},
            [&] { (void)topo::mul(x, row); }, batch);

  // split and concat of narrow pieces: GraphSAGE's fused [W_neigh; W_self] product [N, 32] into two [N, 16] (its
  // first layer at 100k nodes), and the concat of their gradients backward.
  const std::int64_t nodes = 100000;
  const Tensor both = uniform({nodes, 32}, 9);
  const std::vector<Tensor> halves = topo::split(both, {16, 16}, 1);
  const double both_bytes = bytes_of(nodes * 32);
  const nlohmann::json pieces = {{"shape", topo::shape_str(both.shape())}, {"pieces", 2}, {"allocates_output", true}};
  bench.run("split [N, 32] -> 2 x [N, 16]", {.bytes_moved = 2 * both_bytes, .working_set_bytes = 2 * both_bytes},
            [&] { (void)topo::split(both, {16, 16}, 1); }, pieces);
  bench.run("concat 2 x [N, 16] -> [N, 32]", {.bytes_moved = 2 * both_bytes, .working_set_bytes = 2 * both_bytes},
            [&] { (void)topo::concat(halves, 1); }, pieces);

  // layer_norm forward: reads x, gamma, beta; writes y and the per-row mean and rstd.
  const double ln_fwd = 2 * x_bytes + 2 * row_bytes + 2 * stats_bytes;
  bench.run("layer_norm forward", {.bytes_moved = ln_fwd, .working_set_bytes = ln_fwd},
            [&] { (void)topo::layer_norm(x, gamma, beta); }, batch);
  // backward: reads grad, x, gamma, mean, rstd; writes dx, dgamma, dbeta.
  const topo::LayerNormOutput ln = topo::layer_norm(x, gamma, beta);
  const double ln_bwd = 3 * x_bytes + 3 * row_bytes + 2 * stats_bytes;
  bench.run("layer_norm backward", {.bytes_moved = ln_bwd, .working_set_bytes = ln_bwd},
            [&] { (void)topo::layer_norm_backward(grad, x, gamma, beta, ln.mean, ln.rstd); }, batch);

  // softmax over the last dim: reads x, writes y; backward reads grad and y, writes dx.
  bench.run("softmax forward", {.bytes_moved = 2 * x_bytes, .working_set_bytes = 2 * x_bytes},
            [&] { (void)topo::softmax(x); }, batch);
  const Tensor y = topo::softmax(x);
  bench.run("softmax backward", {.bytes_moved = 3 * x_bytes, .working_set_bytes = 3 * x_bytes},
            [&] { (void)topo::softmax_backward(grad, y); }, batch);
}
