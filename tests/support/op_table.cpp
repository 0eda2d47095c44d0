// The op table's plumbing (problems on devices, leaves, one run) and its dense entries. Sizes: what `n`
// means is each entry's (rows, a matrix side, a sequence length), chosen so the awkward sizes cross the
// kernels' tiles and vector widths; feature widths 33 / 31 are awkward on purpose (not a multiple of 8 or 16).
#include "tests/support/op_table.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "kernels/dense/reference.hpp"
#include "nn/ops.hpp"
#include "tests/support/random_data.hpp"

namespace topo::optable {

Block Problem::block() const { return relation_block(graph, "rel"); }

Device Problem::device() const { return inputs.empty() ? Device::cpu() : inputs[0].device(); }

Problem Problem::to(Device d) const {
  Problem p = *this;
  for (Tensor& t : p.inputs) t = t.to(d);
  for (Tensor& t : p.ids) t = t.to(d);
  if (graph.num_relations() > 0) p.graph = graph.to(d);
  return p;
}

double Problem::input_bytes() const {
  double b = 0;
  for (const Tensor& t : inputs) b += static_cast<double>(t.nbytes());
  for (const Tensor& t : ids) b += static_cast<double>(t.nbytes());
  return b;
}

std::string Problem::shapes() const {
  std::string s;
  for (const Tensor& t : inputs) s += (s.empty() ? "" : " ") + shape_str(t.shape());
  for (const Tensor& t : ids) s += " ids" + shape_str(t.shape());
  return s;
}

std::uint64_t seed_of(const std::string& name, std::int64_t n) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h ^ (static_cast<std::uint64_t>(n) * 0x9e3779b97f4a7c15ull);
}

std::vector<nn::Var> leaves(const Problem& p, bool with_grad) {
  std::vector<nn::Var> x;
  for (std::size_t i = 0; i < p.inputs.size(); ++i) x.emplace_back(p.inputs[i], with_grad && p.grad[i]);
  return x;
}

Outcome run(const Op& op, const Problem& p, const Tensor& grad_out) {
  const bool backward = grad_out.defined();
  const std::vector<nn::Var> x = leaves(p, backward);
  const nn::Var y = op.call(p, x);
  Outcome o{y.data(), {}};
  if (!backward) return o;
  y.backward(grad_out);
  for (const nn::Var& v : x) o.grads.push_back(v.requires_grad() ? v.grad() : Tensor());
  return o;
}

Tensor uniform(const Shape& shape, std::uint64_t seed, float lo, float hi, float margin) {
  return margin > 0 ? testing::random_away_from_zero(shape, seed, lo, hi, margin)
                    : testing::random_uniform(shape, seed, lo, hi);
}
std::vector<float> host(const Tensor& t) { return t.to_vector<float>(); }
Problem problem(std::vector<Tensor> inputs, std::vector<Tensor> ids) {
  Problem p;
  p.grad.assign(inputs.size(), true);
  p.inputs = std::move(inputs);
  p.ids = std::move(ids);
  return p;
}
const std::vector<Op>& op_table() {
  static const std::vector<Op> table = [] {
    std::vector<Op> t;
    add_dense_ops(t);
    add_sparse_ops(t);
    return t;
  }();
  return table;
}

namespace {

using Vars = std::vector<nn::Var>;
using reference::DenseAttentionProblem;

double numel(const Tensor& t) { return static_cast<double>(t.numel()); }

const std::vector<std::int64_t> kRows = {1, 7, 31, 33, 257};  // rows of a [n, 33] operand
const std::vector<std::int64_t> kSides = {1, 7, 31, 33, 64};  // a matrix side / a row length

void add_gemm(std::vector<Op>& t) {
  // matmul: op(a) [m, k] @ op(b) [k, n] with m = n, k = n + 1, n + 2 (three different awkward sides).
  for (int variant = 0; variant < 6; ++variant) {
    const bool ta = variant == 1 || variant == 3, tb = variant == 2 || variant == 3;
    const bool batched = variant >= 4, shared_b = variant == 5;
    static const char* names[] = {"matmul",       "matmul/ta",      "matmul/tb",
                                  "matmul/ta_tb", "matmul/batched", "matmul/batched_shared_b"};
    Op op{names[variant], kSides, 7, 1024};
    const std::int64_t batch = 3;
    op.make = [=](std::int64_t s, std::uint64_t seed) {
      const std::int64_t m = s, k = s + 1, n = s + 2;
      Shape as = ta ? Shape{k, m} : Shape{m, k}, bs = tb ? Shape{n, k} : Shape{k, n};
      if (batched) as.insert(as.begin(), batch);
      if (batched && !shared_b) bs.insert(bs.begin(), batch);
      return problem({uniform(as, seed), uniform(bs, seed + 1)});
    };
    op.call = [=](const Problem&, const Vars& x) { return nn::matmul(x[0], x[1], ta, tb); };
    op.reference = [=](const Problem& p) {
      const Shape& as = p.inputs[0].shape();
      const std::int64_t items = batched ? batch : 1, m = as[as.size() - (ta ? 1 : 2)],
                         k = as[as.size() - (ta ? 2 : 1)];
      const std::int64_t n = p.inputs[1].shape()[p.inputs[1].ndim() - (tb ? 2 : 1)];
      const auto a = host(p.inputs[0]), b = host(p.inputs[1]);
      std::vector<float> out;
      for (std::int64_t i = 0; i < items; ++i) {
        const auto c = reference::gemm(ta, tb, m, n, k, 1.f, a.data() + i * m * k,
                                       b.data() + (shared_b || !batched ? 0 : i * k * n), 0.f, nullptr);
        out.insert(out.end(), c.begin(), c.end());
      }
      return out;
    };
    op.flops = [=](const Problem& p) {
      return 2.0 * numel(p.inputs[0]) * (p.inputs[1].shape()[tb ? p.inputs[1].ndim() - 2 : p.inputs[1].ndim() - 1]);
    };
    op.atol = op.rtol = 1e-4;
    t.push_back(op);
  }
  // linear: x [n, n + 1] @ w [n + 2, n + 1]^T + b [n + 2].
  Op lin{"linear", kSides, 7, 1024};
  lin.make = [](std::int64_t s, std::uint64_t seed) {
    return problem({uniform({s, s + 1}, seed), uniform({s + 2, s + 1}, seed + 1), uniform({s + 2}, seed + 2)});
  };
  lin.call = [](const Problem&, const Vars& x) { return nn::linear(x[0], x[1], x[2]); };
  lin.reference = [](const Problem& p) {
    const std::int64_t m = p.inputs[0].size(0), k = p.inputs[0].size(1), n = p.inputs[1].size(0);
    const auto bias = host(p.inputs[2]);
    std::vector<float> rows;  // the bias broadcast over the rows: gemm's c0 with beta = 1
    for (std::int64_t i = 0; i < m; ++i) rows.insert(rows.end(), bias.begin(), bias.end());
    const auto x = host(p.inputs[0]), w = host(p.inputs[1]);
    return reference::gemm(false, true, m, n, k, 1.f, x.data(), w.data(), 1.f, rows.data());
  };
  lin.flops = [](const Problem& p) { return 2.0 * numel(p.inputs[0]) * static_cast<double>(p.inputs[1].size(0)); };
  lin.atol = lin.rtol = 1e-4;
  t.push_back(lin);
}

void add_elementwise(std::vector<Op>& t) {
  struct U {
    const char* name;
    UnaryOp op;
    float alpha;
    std::function<nn::Var(const nn::Var&)> f;
  };
  const std::vector<U> unary = {
      {"relu", UnaryOp::Relu, 0.f, [](const nn::Var& x) { return nn::relu(x); }},
      {"leaky_relu", UnaryOp::LeakyRelu, 0.1f, [](const nn::Var& x) { return nn::leaky_relu(x, 0.1f); }},
      {"gelu", UnaryOp::Gelu, 0.f, [](const nn::Var& x) { return nn::gelu(x); }},
      {"exp", UnaryOp::Exp, 0.f, [](const nn::Var& x) { return nn::exp(x); }},
      {"log", UnaryOp::Log, 0.f, [](const nn::Var& x) { return nn::log(x); }},
      {"tanh", UnaryOp::Tanh, 0.f, [](const nn::Var& x) { return nn::tanh(x); }},
      {"sigmoid", UnaryOp::Sigmoid, 0.f, [](const nn::Var& x) { return nn::sigmoid(x); }},
      {"elu", UnaryOp::Elu, 1.f, [](const nn::Var& x) { return nn::elu(x); }},
      {"neg", UnaryOp::Neg, 0.f, [](const nn::Var& x) { return nn::neg(x); }},
      {"scale", UnaryOp::Scale, -2.5f, [](const nn::Var& x) { return nn::mul_scalar(x, -2.5f); }}};
  for (const U& u : unary) {
    Op op{std::string("unary/") + u.name, kRows, 7, 1 << 15};
    const bool positive = u.op == UnaryOp::Log;  // log needs x > 0; the rest see both signs (and relu's kink)
    op.make = [positive](std::int64_t n, std::uint64_t seed) {
      return problem({uniform({n, 33}, seed, positive ? 0.1f : -3.f, 3.f, 0.05f)});
    };
    op.call = [f = u.f](const Problem&, const Vars& x) { return f(x[0]); };
    op.reference = [u](const Problem& p) { return reference::unary(u.op, host(p.inputs[0]), u.alpha); };
    op.atol = 1e-6;
    op.rtol = 1e-5;
    t.push_back(op);
  }
  // Binary ops under each broadcast the kernels special-case: equal shapes, a row vector, a column, a scalar
  // and a general two-sided broadcast [n, 1, 33] op [7, 1].
  const std::vector<std::pair<const char*, std::function<std::pair<Shape, Shape>(std::int64_t)>>> shapes = {
      {"same",
       [](std::int64_t n) {
         return std::pair{Shape{n, 33}, Shape{n, 33}};
       }},
      {"row",
       [](std::int64_t n) {
         return std::pair{Shape{n, 33}, Shape{33}};
       }},
      {"column",
       [](std::int64_t n) {
         return std::pair{Shape{n, 33}, Shape{n, 1}};
       }},
      {"scalar",
       [](std::int64_t n) {
         return std::pair{Shape{n, 33}, Shape{}};
       }},
      {"both_sides", [](std::int64_t n) {
         return std::pair{Shape{n, 1, 33}, Shape{7, 1}};
       }}};
  const std::vector<std::pair<const char*, BinaryOp>> ops = {
      {"add", BinaryOp::Add}, {"sub", BinaryOp::Sub}, {"mul", BinaryOp::Mul}, {"div", BinaryOp::Div}};
  for (const auto& op_entry : ops)
    for (const auto& shape_entry : shapes) {
      // Copies, not structured bindings: clang 14 (the TSan build) cannot capture those in a lambda.
      const auto opname = op_entry.first;
      const auto bop = op_entry.second;
      const auto bname = shape_entry.first;
      const auto shape_of = shape_entry.second;
      Op op{std::string("binary/") + opname + "/" + bname, kRows, 7, 1 << 15};
      op.make = [shape_of](std::int64_t n, std::uint64_t seed) {
        const auto [sa, sb] = shape_of(n);
        return problem({uniform(sa, seed, -2.f, 2.f), uniform(sb, seed + 1, 0.5f, 2.f)});  // b away from 0: div
      };
      op.call = [bop](const Problem&, const Vars& x) {
        return bop == BinaryOp::Add   ? nn::add(x[0], x[1])
               : bop == BinaryOp::Sub ? nn::sub(x[0], x[1])
               : bop == BinaryOp::Mul ? nn::mul(x[0], x[1])
                                      : nn::div(x[0], x[1]);
      };
      op.reference = [bop](const Problem& p) {
        return reference::binary(bop, host(p.inputs[0]), p.inputs[0].shape(), host(p.inputs[1]), p.inputs[1].shape());
      };
      op.atol = op.rtol = 1e-6;
      t.push_back(op);
    }
}

void add_rows(std::vector<Op>& t) {
  // softmax / log_softmax over rows of length n + 2 ([n, n + 2]: the row length is the awkward one).
  for (bool log : {false, true}) {
    Op op{log ? "log_softmax" : "softmax", kSides, 7, 1024};
    op.make = [](std::int64_t n, std::uint64_t seed) { return problem({uniform({n, n + 2}, seed, -6.f, 6.f)}); };
    op.call = [log](const Problem&, const Vars& x) { return log ? nn::log_softmax(x[0]) : nn::softmax(x[0]); };
    op.reference = [log](const Problem& p) { return reference::softmax(host(p.inputs[0]), p.inputs[0].size(1), log); };
    op.atol = 1e-6;
    t.push_back(op);
  }
  // layer_norm over rows of n + 2, with and without gamma and beta.
  for (int affine = 0; affine < 4; ++affine) {
    static const char* names[] = {"layer_norm", "layer_norm/gamma", "layer_norm/beta", "layer_norm/gamma_beta"};
    Op op{names[affine], kSides, 7, 1024};
    op.make = [affine](std::int64_t n, std::uint64_t seed) {
      const std::int64_t d = n + 2;
      std::vector<Tensor> in = {uniform({n, d}, seed, -2.f, 2.f)};
      if (affine & 1) in.push_back(uniform({d}, seed + 1, 0.5f, 1.5f));
      if (affine & 2) in.push_back(uniform({d}, seed + 2));
      return problem(in);
    };
    op.call = [affine](const Problem&, const Vars& x) {
      return nn::layer_norm(x[0], affine & 1 ? x[1] : nn::Var(), affine & 2 ? x.back() : nn::Var());
    };
    op.reference = [affine](const Problem& p) {
      const auto gamma = affine & 1 ? host(p.inputs[1]) : std::vector<float>{};
      const auto beta = affine & 2 ? host(p.inputs.back()) : std::vector<float>{};
      return reference::layer_norm(host(p.inputs[0]), p.inputs[0].size(1), affine & 1 ? gamma.data() : nullptr,
                                   affine & 2 ? beta.data() : nullptr, 1e-5f);
    };
    op.atol = op.rtol = 1e-4;
    t.push_back(op);
  }
  // The fused residual epilogue: LayerNorm(h + relu(x)) * gamma + beta.
  Op res{"residual_relu_layer_norm", kSides, 7, 1024};
  res.make = [](std::int64_t n, std::uint64_t seed) {
    const std::int64_t d = n + 2;
    return problem({uniform({n, d}, seed, -2.f, 2.f), uniform({n, d}, seed + 1, -2.f, 2.f, 0.05f),
                    uniform({d}, seed + 2, 0.5f, 1.5f), uniform({d}, seed + 3)});
  };
  res.call = [](const Problem&, const Vars& x) { return nn::residual_relu_layer_norm(x[0], x[1], x[2], x[3]); };
  res.reference = [](const Problem& p) {
    const auto h = host(p.inputs[0]), x = host(p.inputs[1]), gamma = host(p.inputs[2]), beta = host(p.inputs[3]);
    const auto sum = reference::binary(BinaryOp::Add, h, p.inputs[0].shape(), reference::unary(UnaryOp::Relu, x, 0.f),
                                       p.inputs[1].shape());
    return reference::layer_norm(sum, p.inputs[0].size(1), gamma.data(), beta.data(), 1e-5f);
  };
  res.atol = res.rtol = 1e-4;
  t.push_back(res);
  // The fused epilogue act(s_r * x + b) (scale_bias_act): x [n, 33] or [n, 3, 11] (heads), the row scale held
  // constant, the bias at most 0.01 so that s * x (|x| >= 0.05) keeps z off relu's kink.
  struct Epilogue {
    const char* name;
    EpilogueAct act;
    bool scale, bias, heads;
  };
  for (const Epilogue& e : {Epilogue{"scale_bias_act/relu", EpilogueAct::Relu, true, true, false},
                            Epilogue{"scale_bias_act/identity/scale", EpilogueAct::Identity, true, false, false},
                            Epilogue{"scale_bias_act/leaky_relu/bias", EpilogueAct::LeakyRelu, false, true, false},
                            Epilogue{"scale_bias_act/tanh", EpilogueAct::Tanh, true, true, false},
                            Epilogue{"scale_bias_act/sigmoid/heads", EpilogueAct::Sigmoid, true, true, true},
                            Epilogue{"scale_bias_act/elu", EpilogueAct::Elu, true, true, false}}) {
    Op op{e.name, kRows, 7, 1 << 15};
    op.make = [e](std::int64_t n, std::uint64_t seed) {
      std::vector<Tensor> in = {uniform(e.heads ? Shape{n, 3, 11} : Shape{n, 33}, seed, -2.f, 2.f, 0.05f)};
      if (e.scale) in.push_back(uniform({n}, seed + 1, 0.5f, 1.5f));
      if (e.bias) in.push_back(uniform({33}, seed + 2, -0.01f, 0.01f));
      Problem p = problem(in);
      if (e.scale) p.grad[1] = false;
      return p;
    };
    op.call = [e](const Problem&, const Vars& x) {
      return nn::scale_bias_act(x[0], e.scale ? x[1].data() : Tensor(), e.bias ? x.back() : nn::Var(), e.act, 0.2f);
    };
    op.reference = [e](const Problem& p) {
      const std::int64_t n = p.inputs[0].size(0);
      std::vector<float> z = host(p.inputs[0]);
      if (e.scale) z = reference::binary(BinaryOp::Mul, z, {n, 33}, host(p.inputs[1]), {n, 1});
      if (e.bias) z = reference::binary(BinaryOp::Add, z, {n, 33}, host(p.inputs.back()), {33});
      switch (e.act) {
        case EpilogueAct::Identity: return z;
        case EpilogueAct::Relu: return reference::unary(UnaryOp::Relu, z, 0.f);
        case EpilogueAct::LeakyRelu: return reference::unary(UnaryOp::LeakyRelu, z, 0.2f);
        case EpilogueAct::Tanh: return reference::unary(UnaryOp::Tanh, z, 0.f);
        case EpilogueAct::Sigmoid: return reference::unary(UnaryOp::Sigmoid, z, 0.f);
        case EpilogueAct::Elu: return reference::unary(UnaryOp::Elu, z, 1.f);
      }
      return z;
    };
    op.atol = 1e-6;
    op.rtol = 1e-5;
    t.push_back(op);
  }
  // Reductions of x [n, 7, 5] over each dim, and over everything.
  const std::vector<std::pair<const char*, ReduceOp>> reds = {
      {"sum", ReduceOp::Sum}, {"mean", ReduceOp::Mean}, {"max", ReduceOp::Max}};
  for (const auto& red_entry : reds)
    for (int dim = 0; dim < 3; ++dim) {
      // Copies, not structured bindings: clang 14 (the TSan build) cannot capture those in a lambda.
      const auto rname = red_entry.first;
      const auto rop = red_entry.second;
      Op op{std::string("reduce/") + rname + "/dim" + std::to_string(dim), kRows, 7, 1 << 13};
      // Max: every element distinct by 0.01 (a shuffled ladder), so no finite-difference step changes a winner.
      op.make = [rop](std::int64_t n, std::uint64_t seed) {
        return problem({rop == ReduceOp::Max ? testing::random_separated({n * 35}, seed, 0.01f, -1.f).reshape({n, 7, 5})
                                             : uniform({n, 7, 5}, seed)});
      };
      op.call = [rop, dim](const Problem&, const Vars& x) {
        return rop == ReduceOp::Sum    ? nn::sum(x[0], dim)
               : rop == ReduceOp::Mean ? nn::mean(x[0], dim)
                                       : nn::max(x[0], dim);
      };
      op.reference = [rop, dim](const Problem& p) {
        const Shape& s = p.inputs[0].shape();
        const std::int64_t outer = dim == 0   ? 1
                                   : dim == 1 ? s[0]
                                              : s[0] * s[1],
                           inner = dim == 0   ? s[1] * s[2]
                                   : dim == 1 ? s[2]
                                              : 1;
        return reference::reduce(rop, host(p.inputs[0]), outer, s[dim], inner);
      };
      op.atol = op.rtol = 1e-5;
      t.push_back(op);
    }
  Op all{"reduce/sum_all", kRows, 7, 1 << 15};
  all.make = [](std::int64_t n, std::uint64_t seed) { return problem({uniform({n, 33}, seed)}); };
  all.call = [](const Problem&, const Vars& x) { return nn::sum_all(x[0]); };
  all.reference = [](const Problem& p) {
    return reference::reduce(ReduceOp::Sum, host(p.inputs[0]), 1, p.inputs[0].numel(), 1);
  };
  // Float sums of runs of ~1e3 U(-1,1) terms carry ~2e-6 each (ulps of partial sums ~30); at the bench size the
  // ~1e3 runs add that in a random walk (~7e-5), so the absolute tolerance is 3x that; the relative one stays.
  all.atol = 2e-4;
  all.rtol = 1e-5;
  t.push_back(all);
}

void add_indexing_and_losses(std::vector<Op>& t) {
  // Gathers of 2n + 3 rows out of a table of n rows [n, 33] (repeats: the scatter-add backward accumulates).
  Op sel{"index_select", kRows, 7, 1 << 14};
  sel.make = [](std::int64_t n, std::uint64_t seed) {
    return problem({uniform({n, 33}, seed)}, {testing::random_ids({2 * n + 3}, n, seed + 1)});
  };
  sel.call = [](const Problem& p, const Vars& x) { return nn::index_select(x[0], p.ids[0]); };
  sel.reference = [](const Problem& p) {
    return reference::gather_rows(host(p.inputs[0]), 33, p.ids[0].to_vector<std::int64_t>());
  };
  t.push_back(sel);
  Op sel32 = sel;  // the same gather through int32 ids
  sel32.name = "index_select/i32";
  sel32.make = [make = sel.make](std::int64_t n, std::uint64_t seed) {
    Problem p = make(n, seed);
    const auto ids = p.ids[0].to_vector<std::int64_t>();
    p.ids[0] = Tensor::from_vector(std::vector<std::int32_t>(ids.begin(), ids.end()), p.ids[0].shape());
    return p;
  };
  sel32.reference = [](const Problem& p) {
    const auto ids = p.ids[0].to_vector<std::int32_t>();
    return reference::gather_rows(host(p.inputs[0]), 33, std::vector<std::int64_t>(ids.begin(), ids.end()));
  };
  t.push_back(sel32);
  Op emb{"embedding", kRows, 7, 1 << 14};
  emb.make = sel.make;
  emb.call = [](const Problem& p, const Vars& x) { return nn::embedding(x[0], p.ids[0].reshape({-1, 1})); };
  emb.reference = sel.reference;
  t.push_back(emb);
  // Two tables summed; the second leaves every third row out (kNoRow).
  Op esum{"embedding_sum", kRows, 7, 1 << 14};
  esum.make = [](std::int64_t n, std::uint64_t seed) {
    const Tensor a = testing::random_ids({2 * n + 3}, n, seed + 2);
    std::vector<std::int64_t> b = testing::random_ids({2 * n + 3}, n + 5, seed + 3).to_vector<std::int64_t>();
    for (std::size_t i = 0; i < b.size(); i += 3) b[i] = -1;
    return problem({uniform({n, 33}, seed), uniform({n + 5, 33}, seed + 1)},
                   {a, Tensor::from_vector(b, {static_cast<std::int64_t>(b.size())})});
  };
  esum.call = [](const Problem& p, const Vars& x) { return nn::embedding_sum({x[0], x[1]}, {p.ids[0], p.ids[1]}); };
  esum.reference = [](const Problem& p) {
    return reference::binary(
        BinaryOp::Add, reference::gather_rows(host(p.inputs[0]), 33, p.ids[0].to_vector<std::int64_t>()),
        {p.ids[0].numel(), 33}, reference::gather_rows(host(p.inputs[1]), 33, p.ids[1].to_vector<std::int64_t>()),
        {p.ids[1].numel(), 33});
  };
  t.push_back(esum);
  // Concatenation of three [3, 5, 2]-shaped parts whose sizes along `dim` are n, 0 and 3 (an empty part
  // included); its backward is split.
  for (int dim = 0; dim < 3; ++dim) {
    Op cat{"concat/dim" + std::to_string(dim), kRows, 7, 1 << 14};
    cat.make = [dim](std::int64_t n, std::uint64_t seed) {
      std::vector<Tensor> parts;
      for (std::int64_t k : {n, std::int64_t{0}, std::int64_t{3}}) {
        Shape shape = {3, 5, 2};
        shape[dim] = k;
        parts.push_back(uniform(shape, seed + static_cast<std::uint64_t>(k)));
      }
      return problem(parts);
    };
    cat.call = [dim](const Problem&, const Vars& x) { return nn::concat(x, dim); };
    cat.reference = [dim](const Problem& p) {
      Shape out;
      return reference::concat(p.inputs, dim, out);
    };
    t.push_back(cat);
  }
  // Cross entropy of logits [n, C] with every fourth target ignored (-100), C = 33 and a vocabulary-wide 5000
  // (wider than one CUDA block's row); mse of two [n, 33].
  for (std::int64_t classes : {33, 5000}) {
    Op ce{classes == 33 ? "cross_entropy" : "cross_entropy/5000_classes", kRows, classes == 33 ? 7 : 1, 1 << 12};
    ce.make = [classes](std::int64_t n, std::uint64_t seed) {
      std::vector<std::int64_t> tv = testing::random_ids({n}, classes, seed + 1).to_vector<std::int64_t>();
      for (std::size_t r = 1; r < tv.size(); r += 4) tv[r] = -100;
      return problem({uniform({n, classes}, seed, -6.f, 6.f)}, {Tensor::from_vector(tv, {n})});
    };
    ce.call = [](const Problem& p, const Vars& x) { return nn::cross_entropy(x[0], p.ids[0]); };
    ce.reference = [](const Problem& p) {
      return std::vector<float>{static_cast<float>(reference::cross_entropy(
          host(p.inputs[0]), p.ids[0].to_vector<std::int64_t>(), p.inputs[0].size(0), p.inputs[0].size(1), -100))};
    };
    t.push_back(ce);
  }
  Op mse{"mse", kRows, 7, 1 << 15};
  mse.make = [](std::int64_t n, std::uint64_t seed) {
    return problem({uniform({n, 33}, seed), uniform({n, 33}, seed + 1)});
  };
  mse.call = [](const Problem&, const Vars& x) { return nn::mse(x[0], x[1]); };
  mse.reference = [](const Problem& p) {
    return std::vector<float>{static_cast<float>(reference::mse(host(p.inputs[0]), host(p.inputs[1])))};
  };
  t.push_back(mse);
}

// Fused dense attention over packed sequences {n, n / 3, 1} (n crosses the CPU and CUDA key tiles), 2 heads:
// full, banded per (sequence, head) (radius 0 and a quarter window: both CPU band schedules), q/k/v packed in
// one [rows, 3, H, dh] operand, at head width 16 and an awkward 50.
void add_dense_attention(std::vector<Op>& t) {
  constexpr std::int64_t H = 2;
  constexpr float scale = 0.25f;
  struct V {
    const char* name;
    bool band, packed;
    std::int64_t dh;
  };
  for (const V& variant :
       {V{"flash_attention", false, false, 16}, V{"flash_attention/band", true, false, 16},
        V{"flash_attention/packed", false, true, 16}, V{"flash_attention/band/dh50", true, false, 50},
        V{"flash_attention/packed/band", true, true, 16}}) {
    Op op{variant.name, {1, 7, 33, 130}, 7, 512};
    const std::int64_t dh = variant.dh;
    const bool packed = variant.packed, band = variant.band;
    op.make = [=](std::int64_t n, std::uint64_t seed) {
      const std::vector<std::int64_t> lengths = {n, std::max<std::int64_t>(1, n / 3), 1};
      std::int64_t rows = 0;
      for (std::int64_t l : lengths) rows += l;
      Problem p = packed ? problem({uniform({rows, 3, H, dh}, seed)})
                         : problem({uniform({rows, H, dh}, seed), uniform({rows, H, dh}, seed + 1),
                                    uniform({rows, H, dh}, seed + 2)});
      p.lengths = lengths;
      if (band)
        for (std::int64_t l : lengths) p.radii.insert(p.radii.end(), {0, (l + 3) / 4});
      return p;
    };
    op.call = [=](const Problem& p, const Vars& x) {
      return packed ? nn::flash_attention_packed(x[0], p.lengths, scale, p.radii)
                    : nn::flash_attention(x[0], x[1], x[2], p.lengths, scale, p.radii);
    };
    op.reference = [=](const Problem& p) {
      std::vector<std::vector<double>> qkv(3);
      if (packed) {  // unpack [rows, 3, H, dh] into q, k, v [rows, H, dh]
        const auto all = host(p.inputs[0]);
        for (std::size_t i = 0; i < all.size(); ++i) qkv[(i / (H * dh)) % 3].push_back(all[i]);
      } else {
        for (int i = 0; i < 3; ++i) {
          const auto v = host(p.inputs[i]);
          qkv[i].assign(v.begin(), v.end());
        }
      }
      const DenseAttentionProblem d{p.lengths, H, dh, dh, scale, p.radii};
      const auto out = reference::dense_attention(d, qkv[0], qkv[1], qkv[2]);
      return std::vector<float>(out.begin(), out.end());
    };
    op.flops = [=](const Problem& p) {  // q.k and p v over every (query, key, head) the mask lets through
      const DenseAttentionProblem d{p.lengths, H, dh, dh, scale, p.radii};
      double triples = 0;
      for (std::size_t b = 0; b < p.lengths.size(); ++b)
        for (std::int64_t h = 0; h < H; ++h)
          for (std::int64_t i = 0; i < p.lengths[b]; ++i)
            for (std::int64_t j = 0; j < p.lengths[b]; ++j) triples += d.sees(b, h, i, j);
      return 4.0 * triples * dh;
    };
    op.atol = op.rtol = 1e-4;
    t.push_back(op);
  }
}

}  // namespace

void add_dense_ops(std::vector<Op>& t) {
  add_gemm(t);
  add_elementwise(t);
  add_rows(t);
  add_indexing_and_losses(t);
  add_dense_attention(t);
}

}  // namespace topo::optable
