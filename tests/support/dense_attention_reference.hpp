#pragma once
// A dense masked reference of GraphMultiHeadAttention in double precision (every head its own mask from its
// group's block), and a check of the sparse layer against it: the forward element by element, and every
// gradient (inputs of every node type and all eight parameters) as a directional derivative of the double
// reference by central differences along a random direction.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "nn/attention.hpp"
#include "nn/ops.hpp"
#include "tests/support/testing.hpp"

namespace topo::testing {

using Values = std::map<std::string, std::vector<double>>;  // every input of the layer by name, row-major

inline std::vector<double> to_double(const Tensor& t) {
  const auto v = t.to_vector<float>();
  return std::vector<double>(v.begin(), v.end());
}

// Allowed (destination, block source) pairs of a block, from its in-CSR.
inline std::vector<char> block_mask(const Block& b) {
  std::vector<char> mask(static_cast<std::size_t>(b.num_dst * b.num_src), 0);
  const auto indptr = b.in.indptr.to_vector<std::int32_t>(), indices = b.in.indices.to_vector<std::int32_t>();
  for (std::int64_t i = 0; i < b.num_dst; ++i)
    for (std::int32_t k = indptr[i]; k < indptr[i + 1]; ++k) mask[static_cast<std::size_t>(i * b.num_src + indices[k])] = 1;
  return mask;
}

// y = x W^T (+ b): x [n, in], W [out, in] (nn::Linear's layout), b [out] or null.
inline std::vector<double> linear(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>* b,
                                  std::int64_t n, std::int64_t in, std::int64_t out) {
  std::vector<double> y(static_cast<std::size_t>(n * out));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t o = 0; o < out; ++o) {
      double acc = b ? (*b)[static_cast<std::size_t>(o)] : 0.0;
      for (std::int64_t c = 0; c < in; ++c)
        acc += x[static_cast<std::size_t>(i * in + c)] * w[static_cast<std::size_t>(o * in + c)];
      y[static_cast<std::size_t>(i * out + o)] = acc;
    }
  return y;
}
// y = x W^T + b: x [n, d], W [d, d].
inline std::vector<double> linear(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& b,
                                  std::int64_t n, std::int64_t d) {
  return linear(x, w, &b, n, d, d);
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
inline void check_against_dense(const nn::GraphMultiHeadAttention& layer, const std::vector<nn::HeadGroup>& groups,
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
  for (const auto& entry : grads) {  // not a structured binding: clang 14 cannot capture one in INFO (TSan build)
    const std::string& name = entry.first;
    const Tensor& grad = entry.second;
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


}  // namespace topo::testing
