// CUDA vs CPU for binary, reduce, softmax, layer_norm and gemm on the same inputs. Runs only where a CUDA
// device exists (the gpu executable exits 77 otherwise) but always compiles.
#include <array>

#include "kernels/dense/binary.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/dense/layer_norm.hpp"
#include "kernels/dense/reduce.hpp"
#include "kernels/dense/softmax.hpp"
#include "kernels/dense/unary.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using topo::testing::random_uniform;

namespace {
const Device kGpu = Device::cuda(0);
std::vector<float> host(const Tensor& t) { return t.to_vector<float>(); }
}  // namespace

TEST_CASE("gpu: binary ops, scalar ops, sum_to_shape, axpy_, fill_ match the CPU") {
  const std::vector<std::pair<Shape, Shape>> cases = {{{7, 33}, {7, 33}},   {{31, 33}, {33}},      {{33, 7}, {33, 1}},
                                                      {{7, 31}, {}},        {{7, 1, 33}, {31, 1}}, {{128, 300}, {300}},
                                                      {{1, 7, 1, 31, 1}, {7, 1, 33, 1, 5}}};
  std::uint64_t seed = 1;
  for (const auto& [sa, sb] : cases)
    for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div}) {
      CAPTURE(shape_str(sa));
      CAPTURE(shape_str(sb));
      Tensor a = random_uniform(sa, seed++), b = random_uniform(sb, seed++, 0.5f, 2.f);
      TOPO_CHECK_CLOSE(host(binary(op, a.to(kGpu), b.to(kGpu))), host(binary(op, a, b)), 1e-6, 1e-6);
      TOPO_CHECK_CLOSE(host(binary(op, b.to(kGpu), a.to(kGpu))), host(binary(op, b, a)), 1e-6, 1e-6);
    }
  Tensor x = random_uniform({257, 33}, 5), s = random_uniform({257, 33}, 6);
  TOPO_CHECK_CLOSE(host(add_scalar(x.to(kGpu), 0.5f)), host(add_scalar(x, 0.5f)), 1e-6, 1e-6);
  TOPO_CHECK_CLOSE(host(mul_scalar(x.to(kGpu), -3.f)), host(mul_scalar(x, -3.f)), 1e-6, 1e-6);
  for (const Shape& t : {Shape{33}, Shape{257, 1}, Shape{}, Shape{257, 33}})
    TOPO_CHECK_CLOSE(host(sum_to_shape(x.to(kGpu), t)), host(sum_to_shape(x, t)), 1e-4, 1e-5);
  Tensor yg = x.to(kGpu), yc = x.clone();
  axpy_(yg, 0.25f, s.to(kGpu));
  axpy_(yc, 0.25f, s);
  TOPO_CHECK_CLOSE(host(yg), host(yc), 1e-6, 1e-6);
  fill_(yg, 1.5f);
  CHECK(host(yg) == std::vector<float>(yg.numel(), 1.5f));
}

TEST_CASE("gpu: reductions, argmax, sum_all and reduce_backward match the CPU") {
  std::uint64_t seed = 20;
  for (const Shape& s : {Shape{7, 33, 31}, Shape{257, 1, 7}, Shape{1, 257}, Shape{128, 128, 300}}) {
    Tensor x = random_uniform(s, seed++);
    Tensor xg = x.to(kGpu);
    for (int d = 0; d < static_cast<int>(s.size()); ++d)
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max})
        for (bool keepdim : {false, true}) {
          CAPTURE(shape_str(s));
          CAPTURE(d);
          CAPTURE(static_cast<int>(op));
          Tensor ac, ag;
          Tensor yc = reduce(op, x, d, keepdim, &ac), yg = reduce(op, xg, d, keepdim, &ag);
          REQUIRE(yg.shape() == yc.shape());
          TOPO_CHECK_CLOSE(host(yg), host(yc), 1e-4, 1e-4);
          if (op == ReduceOp::Max) CHECK(ag.to_vector<std::int64_t>() == ac.to_vector<std::int64_t>());
          Tensor g = random_uniform(yc.shape(), seed++);
          TOPO_CHECK_CLOSE(host(reduce_backward(op, g.to(kGpu), s, d, keepdim, ag)),
                           host(reduce_backward(op, g, s, d, keepdim, ac)), 1e-6, 1e-6);
        }
    Tensor total = sum_all(xg);
    CHECK(total.shape().empty());
    CHECK(total.item() == doctest::Approx(sum_all(x).item()).epsilon(1e-4).scale(1.0));
  }
}

TEST_CASE("gpu: softmax, log_softmax and their backward match the CPU") {
  std::uint64_t seed = 40;
  for (const Shape& s : {Shape{1, 1}, Shape{7, 31}, Shape{33, 257}, Shape{128 * 128, 300}, Shape{3, 2, 2000}})
    for (bool log : {false, true}) {
      CAPTURE(shape_str(s));
      CAPTURE(log);
      Tensor x = random_uniform(s, seed++, -6.f, 6.f), g = random_uniform(s, seed++);
      Tensor yc = log ? log_softmax(x) : softmax(x);
      Tensor yg = log ? log_softmax(x.to(kGpu)) : softmax(x.to(kGpu));
      TOPO_CHECK_CLOSE(host(yg), host(yc), 1e-6, 1e-5);
      Tensor dc = log ? log_softmax_backward(g, yc) : softmax_backward(g, yc);
      Tensor dg = log ? log_softmax_backward(g.to(kGpu), yc.to(kGpu)) : softmax_backward(g.to(kGpu), yc.to(kGpu));
      TOPO_CHECK_CLOSE(host(dg), host(dc), 1e-5, 1e-4);
    }
}

TEST_CASE("gpu: layer_norm forward and backward match the CPU") {
  std::uint64_t seed = 60;
  for (const Shape& s : {Shape{1, 1}, Shape{7, 31}, Shape{33, 257}, Shape{128 * 128, 300}})
    for (int affine = 0; affine < 4; ++affine) {
      CAPTURE(shape_str(s));
      CAPTURE(affine);
      const std::int64_t d = s.back();
      Tensor x = random_uniform(s, seed++, -2.f, 2.f), w = random_uniform(s, seed++);
      Tensor gamma = affine & 1 ? random_uniform({d}, seed++, 0.5f, 1.5f) : Tensor();
      Tensor beta = affine & 2 ? random_uniform({d}, seed++) : Tensor();
      const auto gpu = [](const Tensor& t) { return t.defined() ? t.to(kGpu) : Tensor(); };
      LayerNormOutput fc = layer_norm(x, gamma, beta), fg = layer_norm(x.to(kGpu), gpu(gamma), gpu(beta));
      TOPO_CHECK_CLOSE(host(fg.y), host(fc.y), 1e-5, 1e-4);
      TOPO_CHECK_CLOSE(host(fg.mean), host(fc.mean), 1e-6, 1e-5);
      TOPO_CHECK_CLOSE(host(fg.rstd), host(fc.rstd), 1e-5, 1e-4);
      LayerNormGrads gc = layer_norm_backward(w, x, gamma, beta, fc.mean, fc.rstd);
      LayerNormGrads gg = layer_norm_backward(w.to(kGpu), x.to(kGpu), gpu(gamma), gpu(beta), fg.mean, fg.rstd);
      TOPO_CHECK_CLOSE(host(gg.dx), host(gc.dx), 1e-4, 1e-3);
      REQUIRE(gg.dgamma.defined() == gc.dgamma.defined());
      REQUIRE(gg.dbeta.defined() == gc.dbeta.defined());
      if (gc.dgamma.defined()) TOPO_CHECK_CLOSE(host(gg.dgamma), host(gc.dgamma), 1e-2, 1e-4);
      if (gc.dbeta.defined()) TOPO_CHECK_CLOSE(host(gg.dbeta), host(gc.dbeta), 1e-2, 1e-4);
    }
}

TEST_CASE("gpu: residual_relu_layer_norm (composed on CUDA) matches the CPU's fused pass") {
  std::uint64_t seed = 70;
  for (const Shape& s : {Shape{7, 31}, Shape{128 * 128, 300}}) {
    CAPTURE(shape_str(s));
    const std::int64_t d = s.back();
    const Tensor h = random_uniform(s, seed++, -2.f, 2.f), x = random_uniform(s, seed++, -2.f, 2.f),
                 w = random_uniform(s, seed++), gamma = random_uniform({d}, seed++, 0.5f, 1.5f),
                 beta = random_uniform({d}, seed++);
    const LayerNormOutput fc = residual_relu_layer_norm(h, x, gamma, beta),
                          fg = residual_relu_layer_norm(h.to(kGpu), x.to(kGpu), gamma.to(kGpu), beta.to(kGpu));
    TOPO_CHECK_CLOSE(host(fg.y), host(fc.y), 1e-5, 1e-4);
    const ResidualLayerNormGrads gc = residual_relu_layer_norm_backward(w, h, x, gamma, beta, fc.mean, fc.rstd);
    const ResidualLayerNormGrads gg = residual_relu_layer_norm_backward(
        w.to(kGpu), h.to(kGpu), x.to(kGpu), gamma.to(kGpu), beta.to(kGpu), fg.mean, fg.rstd);
    TOPO_CHECK_CLOSE(host(gg.dh), host(gc.dh), 1e-4, 1e-3);
    TOPO_CHECK_CLOSE(host(gg.dx), host(gc.dx), 1e-4, 1e-3);
    TOPO_CHECK_CLOSE(host(gg.dgamma), host(gc.dgamma), 1e-2, 1e-4);
    TOPO_CHECK_CLOSE(host(gg.dbeta), host(gc.dbeta), 1e-2, 1e-4);
  }
}

TEST_CASE("gpu: gemm 2-D, batched and shared-b match the CPU for all transposes") {
  std::uint64_t seed = 80;
  const auto stored = [](bool t, std::int64_t r, std::int64_t c) { return t ? Shape{c, r} : Shape{r, c}; };
  for (std::int64_t batch : {0, 1, 7})  // 0 = plain 2-D
    for (int shared = 0; shared < (batch ? 2 : 1); ++shared)
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          CAPTURE(batch);
          CAPTURE(shared);
          CAPTURE(ta);
          CAPTURE(tb);
          const std::int64_t m = 33, n = 257, k = 31;
          Shape as = stored(ta, m, k), bs = stored(tb, k, n), cs = {m, n};
          if (batch) {
            as.insert(as.begin(), batch);
            cs.insert(cs.begin(), batch);
            if (!shared) bs.insert(bs.begin(), batch);
          }
          Tensor a = random_uniform(as, seed++), b = random_uniform(bs, seed++), c = random_uniform(cs, seed++);
          TOPO_CHECK_CLOSE(host(matmul(a.to(kGpu), b.to(kGpu), ta, tb)), host(matmul(a, b, ta, tb)), 1e-4, 1e-4);
          Tensor cg = c.to(kGpu), cc = c.clone();
          gemm(ta, tb, 0.5f, a.to(kGpu), b.to(kGpu), 2.f, cg);
          gemm(ta, tb, 0.5f, a, b, 2.f, cc);
          TOPO_CHECK_CLOSE(host(cg), host(cc), 1e-4, 1e-4);
        }
}

TEST_CASE("gpu: linear (x W^T + b onto the bias rows) matches the CPU") {
  std::uint64_t seed = 90;
  for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{{1, 1, 1}, {33, 257, 31}, {600, 300, 300}}) {
    CAPTURE(m);
    const Tensor x = random_uniform({m, k}, seed++), w = random_uniform({n, k}, seed++), b = random_uniform({n}, seed++);
    TOPO_CHECK_CLOSE(host(linear(x.to(kGpu), w.to(kGpu), b.to(kGpu))), host(linear(x, w, b)), 1e-4, 1e-4);
  }
}

TEST_CASE("gpu: every unary op, forward and backward, matches the CPU") {
  const std::vector<std::pair<UnaryOp, float>> ops = {
      {UnaryOp::Relu, 0.f}, {UnaryOp::LeakyRelu, 0.1f}, {UnaryOp::Gelu, 0.f},    {UnaryOp::Exp, 0.f}, {UnaryOp::Log, 0.f},
      {UnaryOp::Tanh, 0.f}, {UnaryOp::Sigmoid, 0.f},    {UnaryOp::Neg, 0.f},     {UnaryOp::Scale, -2.5f}};
  std::uint64_t seed = 300;
  for (const auto& [op, alpha] : ops)
    for (std::int64_t n : topo::testing::kAwkwardSizes) {
      CAPTURE(static_cast<int>(op));
      CAPTURE(n);
      // Log needs positive inputs; the rest see both signs (and relu's kink).
      const float lo = op == UnaryOp::Log ? 0.1f : -3.f;
      Tensor x = random_uniform({n, 33}, seed++, lo, 3.f), g = random_uniform({n, 33}, seed++);
      const Tensor y = unary(op, x, alpha), yg = unary(op, x.to(kGpu), alpha);
      TOPO_CHECK_CLOSE(host(yg), host(y), 1e-6, 1e-5);
      TOPO_CHECK_CLOSE(host(unary_backward(op, g.to(kGpu), x.to(kGpu), yg, alpha)), host(unary_backward(op, g, x, y, alpha)),
                       1e-6, 1e-5);
    }
}
