#include <cmath>
#include <string>

#include "kernels/dense/binary.hpp"
#include "kernels/dense/layer_norm.hpp"
#include "kernels/dense/unary.hpp"
#include "kernels/threads.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using topo::testing::kAwkwardSizes;
using topo::testing::random_uniform;

namespace {

struct LayerNormRef {
  std::vector<double> y, mean, rstd;
};
// Naive layer norm in double: biased variance, optional gamma / beta (empty vectors = absent).
LayerNormRef layer_norm_reference(const std::vector<double>& x, const std::vector<double>& gamma,
                                  const std::vector<double>& beta, std::int64_t d, double eps) {
  LayerNormRef r;
  r.y.resize(x.size());
  for (std::size_t row = 0; row * d < x.size(); ++row) {
    double mu = 0, var = 0;
    for (std::int64_t k = 0; k < d; ++k) mu += x[row * d + k];
    mu /= d;
    for (std::int64_t k = 0; k < d; ++k) var += (x[row * d + k] - mu) * (x[row * d + k] - mu);
    var /= d;
    const double rs = 1 / std::sqrt(var + eps);
    for (std::int64_t k = 0; k < d; ++k)
      r.y[row * d + k] = (x[row * d + k] - mu) * rs * (gamma.empty() ? 1 : gamma[k]) + (beta.empty() ? 0 : beta[k]);
    r.mean.push_back(mu);
    r.rstd.push_back(rs);
  }
  return r;
}

std::vector<float> to_float(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }
std::vector<double> to_double(const Tensor& t) {
  if (!t.defined()) return {};
  const std::vector<float> v = t.to_vector<float>();
  return std::vector<double>(v.begin(), v.end());
}

}  // namespace

TEST_CASE("layer_norm forward matches a naive loop, with and without gamma/beta") {
  std::uint64_t seed = 31;
  std::vector<Shape> shapes;
  for (std::int64_t rows : {1, 7, 33})
    for (std::int64_t d : kAwkwardSizes) shapes.push_back({rows, d});
  shapes.push_back({7, 3, 33});
  shapes.push_back({128 * 128, 300});
  for (const Shape& s : shapes)
    for (int affine = 0; affine < 4; ++affine) {
      const std::int64_t d = s.back();
      CAPTURE(shape_str(s));
      CAPTURE(affine);
      Tensor x = random_uniform(s, seed++, -2.f, 3.f);
      Tensor gamma = affine & 1 ? random_uniform({d}, seed++, 0.5f, 1.5f) : Tensor();
      Tensor beta = affine & 2 ? random_uniform({d}, seed++) : Tensor();
      const LayerNormRef ref = layer_norm_reference(to_double(x), to_double(gamma), to_double(beta), d, 1e-5);
      LayerNormOutput out = layer_norm(x, gamma, beta, 1e-5f);
      REQUIRE(out.y.shape() == s);
      TOPO_CHECK_CLOSE(out.y.to_vector<float>(), to_float(ref.y), 1e-4, 1e-4);
      TOPO_CHECK_CLOSE(out.mean.to_vector<float>(), to_float(ref.mean), 1e-5, 1e-5);
      TOPO_CHECK_CLOSE(out.rstd.to_vector<float>(), to_float(ref.rstd), 1e-5, 1e-4);
    }
}

TEST_CASE("layer_norm_backward matches central differences of the reference") {
  std::uint64_t seed = 41;
  for (std::int64_t rows : {1, 7})
    for (std::int64_t d : {1, 7, 31, 33})
      for (int affine = 0; affine < 4; ++affine) {
        CAPTURE(rows);
        CAPTURE(d);
        CAPTURE(affine);
        Tensor x = random_uniform({rows, d}, seed++, -2.f, 2.f);
        Tensor gamma = affine & 1 ? random_uniform({d}, seed++, 0.5f, 1.5f) : Tensor();
        Tensor beta = affine & 2 ? random_uniform({d}, seed++) : Tensor();
        Tensor w = random_uniform({rows, d}, seed++);
        const std::vector<double> xv = to_double(x), gv = to_double(gamma), bv = to_double(beta), wv = to_double(w);
        const double eps = 1e-3;  // larger eps keeps d == 1 (variance 0) smooth
        const auto loss = [&](const std::vector<double>& xs, const std::vector<double>& gs,
                              const std::vector<double>& bs) {
          const LayerNormRef r = layer_norm_reference(xs, gs, bs, d, eps);
          double l = 0;
          for (std::size_t i = 0; i < r.y.size(); ++i) l += wv[i] * r.y[i];
          return l;
        };
        const double h = 1e-4;
        const auto numeric = [&](int which) {
          std::vector<double> base = which == 0 ? xv : which == 1 ? gv : bv;
          std::vector<float> out(base.size());
          for (std::size_t i = 0; i < base.size(); ++i) {
            std::vector<double> p = base, m = base;
            p[i] += h;
            m[i] -= h;
            const double lp = which == 0 ? loss(p, gv, bv) : which == 1 ? loss(xv, p, bv) : loss(xv, gv, p);
            const double lm = which == 0 ? loss(m, gv, bv) : which == 1 ? loss(xv, m, bv) : loss(xv, gv, m);
            out[i] = static_cast<float>((lp - lm) / (2 * h));
          }
          return out;
        };
        LayerNormOutput f = layer_norm(x, gamma, beta, static_cast<float>(eps));
        LayerNormGrads g = layer_norm_backward(w, x, gamma, beta, f.mean, f.rstd);
        TOPO_CHECK_CLOSE(g.dx.to_vector<float>(), numeric(0), 1e-3, 1e-2);
        CHECK(g.dgamma.defined() == gamma.defined());
        CHECK(g.dbeta.defined() == beta.defined());
        if (gamma.defined()) TOPO_CHECK_CLOSE(g.dgamma.to_vector<float>(), numeric(1), 1e-3, 1e-2);
        if (beta.defined()) TOPO_CHECK_CLOSE(g.dbeta.to_vector<float>(), numeric(2), 1e-3, 1e-2);
      }
}

TEST_CASE("layer_norm_backward at the benchmark size: analytic reference, and bitwise the same for any thread count") {
  const std::int64_t rows = 128 * 128, d = 300;
  Tensor x = random_uniform({rows, d}, 51, -2.f, 2.f), gamma = random_uniform({d}, 52, 0.5f, 1.5f);
  Tensor beta = random_uniform({d}, 53), w = random_uniform({rows, d}, 54);
  LayerNormOutput f = layer_norm(x, gamma, beta);
  LayerNormGrads g = layer_norm_backward(w, x, gamma, beta, f.mean, f.rstd);
  // Independent analytic reference in double: dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)).
  const std::vector<double> xv = to_double(x), gv = to_double(gamma), wv = to_double(w);
  const LayerNormRef ref = layer_norm_reference(xv, gv, {}, d, 1e-5);
  std::vector<double> dx(xv.size()), dgamma(d, 0.0), dbeta(d, 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    double md = 0, mdx = 0;
    for (std::int64_t k = 0; k < d; ++k) {
      const double xhat = (xv[r * d + k] - ref.mean[r]) * ref.rstd[r];
      md += wv[r * d + k] * gv[k];
      mdx += wv[r * d + k] * gv[k] * xhat;
      dgamma[k] += wv[r * d + k] * xhat;
      dbeta[k] += wv[r * d + k];
    }
    md /= d;
    mdx /= d;
    for (std::int64_t k = 0; k < d; ++k) {
      const double xhat = (xv[r * d + k] - ref.mean[r]) * ref.rstd[r];
      dx[r * d + k] = ref.rstd[r] * (wv[r * d + k] * gv[k] - md - xhat * mdx);
    }
  }
  TOPO_CHECK_CLOSE(g.dx.to_vector<float>(), to_float(dx), 1e-4, 1e-3);
  TOPO_CHECK_CLOSE(g.dgamma.to_vector<float>(), to_float(dgamma), 1e-2, 1e-4);
  TOPO_CHECK_CLOSE(g.dbeta.to_vector<float>(), to_float(dbeta), 1e-2, 1e-4);

  const int threads = num_threads();
  set_num_threads(1);
  LayerNormGrads serial = layer_norm_backward(w, x, gamma, beta, f.mean, f.rstd);
  set_num_threads(threads);
  CHECK(serial.dgamma.to_vector<float>() == g.dgamma.to_vector<float>());
  CHECK(serial.dbeta.to_vector<float>() == g.dbeta.to_vector<float>());
  CHECK(serial.dx.to_vector<float>() == g.dx.to_vector<float>());
}

TEST_CASE("layer_norm rejects mismatched parameters, naming the shapes") {
  Tensor x = Tensor::zeros({4, 5});
  try {
    layer_norm(x, Tensor::zeros({6}), Tensor());
    FAIL("no error");
  } catch (const topo::Error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("[6]") != std::string::npos);
    CHECK(msg.find("[4, 5]") != std::string::npos);
  }
  CHECK_THROWS_AS(layer_norm(Tensor::zeros({4, 0}), Tensor(), Tensor()), topo::Error);
  LayerNormOutput f = layer_norm(x, Tensor(), Tensor());
  CHECK_THROWS_AS(layer_norm_backward(Tensor::zeros({4, 6}), x, Tensor(), Tensor(), f.mean, f.rstd), topo::Error);
  CHECK_THROWS_AS(layer_norm_backward(x, x, Tensor(), Tensor(), Tensor::zeros({3}), f.rstd), topo::Error);
}

TEST_CASE("residual_relu_layer_norm equals layer_norm(h + relu(x)) and its backward, at awkward sizes") {
  std::uint64_t seed = 71;
  std::vector<Shape> shapes;
  for (std::int64_t d : kAwkwardSizes) shapes.push_back({5, d});
  shapes.push_back({3, 4, 33});
  shapes.push_back({128 * 128 + 128, 300});
  for (const Shape& s : shapes)
    for (int affine : {0, 3}) {
      const std::int64_t d = s.back();
      CAPTURE(shape_str(s));
      CAPTURE(affine);
      const Tensor h = random_uniform(s, seed++, -2.f, 2.f), x = random_uniform(s, seed++, -2.f, 2.f);
      const Tensor gamma = affine ? random_uniform({d}, seed++, 0.5f, 1.5f) : Tensor();
      const Tensor beta = affine ? random_uniform({d}, seed++) : Tensor();
      const Tensor relu_x = unary(UnaryOp::Relu, x), sum = binary(BinaryOp::Add, h, relu_x);
      const LayerNormOutput want = layer_norm(sum, gamma, beta);
      const LayerNormOutput got = residual_relu_layer_norm(h, x, gamma, beta);
      TOPO_CHECK_CLOSE(got.y.to_vector<float>(), want.y.to_vector<float>(), 1e-6, 1e-5);
      TOPO_CHECK_CLOSE(got.mean.to_vector<float>(), want.mean.to_vector<float>(), 1e-6, 1e-6);
      TOPO_CHECK_CLOSE(got.rstd.to_vector<float>(), want.rstd.to_vector<float>(), 1e-6, 1e-5);
      const Tensor g = random_uniform(s, seed++);
      const LayerNormGrads wg = layer_norm_backward(g, sum, gamma, beta, want.mean, want.rstd);
      const ResidualLayerNormGrads gg = residual_relu_layer_norm_backward(g, h, x, gamma, beta, got.mean, got.rstd);
      TOPO_CHECK_CLOSE(gg.dh.to_vector<float>(), wg.dx.to_vector<float>(), 1e-5, 1e-4);
      TOPO_CHECK_CLOSE(gg.dx.to_vector<float>(), unary_backward(UnaryOp::Relu, wg.dx, x, relu_x).to_vector<float>(),
                       1e-5, 1e-4);
      REQUIRE(gg.dgamma.defined() == gamma.defined());
      REQUIRE(gg.dbeta.defined() == beta.defined());
      if (affine) {
        TOPO_CHECK_CLOSE(gg.dgamma.to_vector<float>(), wg.dgamma.to_vector<float>(), 1e-5, 1e-4);
        TOPO_CHECK_CLOSE(gg.dbeta.to_vector<float>(), wg.dbeta.to_vector<float>(), 1e-5, 1e-4);
      }
    }
  CHECK_THROWS_WITH_AS(residual_relu_layer_norm(Tensor::zeros({4, 5}), Tensor::zeros({4, 6}), Tensor(), Tensor()),
                       doctest::Contains("residual_relu_layer_norm"), Error);
}
