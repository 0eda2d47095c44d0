// Naive dense references (see reference.hpp): one loop nest per definition, double accumulation.
#include "kernels/dense/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace topo::reference {

std::vector<float> gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                        const float* b, float beta, const float* c0) {
  std::vector<float> c(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (std::int64_t p = 0; p < k; ++p) {
        const double av = ta ? a[p * m + i] : a[i * k + p];
        const double bv = tb ? b[j * k + p] : b[p * n + j];
        acc += av * bv;
      }
      c[i * n + j] = static_cast<float>(alpha * acc + (c0 ? beta * c0[i * n + j] : 0.0));
    }
  return c;
}

std::int64_t broadcast_source_index(const Shape& out, const Shape& s, std::int64_t flat) {
  std::vector<std::int64_t> idx(out.size());
  for (int d = static_cast<int>(out.size()) - 1; d >= 0; --d) {
    idx[d] = flat % out[d];
    flat /= out[d];
  }
  std::int64_t offset = 0;
  const std::size_t pad = out.size() - s.size();
  for (std::size_t d = 0; d < s.size(); ++d) offset = offset * s[d] + (s[d] == 1 ? 0 : idx[d + pad]);
  return offset;
}

Shape broadcast_result_shape(const Shape& a, const Shape& b) {
  const Shape& longer = a.size() >= b.size() ? a : b;
  const Shape& shorter = a.size() >= b.size() ? b : a;
  Shape out = longer;
  const std::size_t pad = longer.size() - shorter.size();
  for (std::size_t d = 0; d < shorter.size(); ++d)
    if (out[d + pad] == 1) out[d + pad] = shorter[d];
  return out;
}

float binary_op(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
  }
  return 0;
}

std::vector<float> binary(BinaryOp op, const std::vector<float>& a, const Shape& sa, const std::vector<float>& b,
                          const Shape& sb) {
  const Shape out = broadcast_result_shape(sa, sb);
  std::vector<float> y(static_cast<std::size_t>(shape_numel(out)));
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(y.size()); ++i)
    y[i] = binary_op(op, a[broadcast_source_index(out, sa, i)], b[broadcast_source_index(out, sb, i)]);
  return y;
}

float unary_op(UnaryOp op, float xf, float alpha) {
  const double x = xf;
  switch (op) {
    case UnaryOp::Relu: return x > 0 ? xf : 0.f;
    case UnaryOp::LeakyRelu: return static_cast<float>(x > 0 ? x : alpha * x);
    case UnaryOp::Gelu:
      return static_cast<float>(0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))));
    case UnaryOp::Exp: return static_cast<float>(std::exp(x));
    case UnaryOp::Log: return static_cast<float>(std::log(x));
    case UnaryOp::Tanh: return static_cast<float>(std::tanh(x));
    case UnaryOp::Sigmoid: return static_cast<float>(1 / (1 + std::exp(-x)));
    case UnaryOp::Neg: return -xf;
    case UnaryOp::Scale: return static_cast<float>(alpha * x);
    case UnaryOp::Elu: return static_cast<float>(x > 0 ? x : alpha * std::expm1(x));
  }
  return 0;
}

std::vector<float> unary(UnaryOp op, const std::vector<float>& x, float alpha) {
  std::vector<float> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = unary_op(op, x[i], alpha);
  return y;
}

std::vector<float> softmax(const std::vector<float>& x, std::int64_t cols, bool log) {
  std::vector<float> y(x.size());
  for (std::size_t r = 0; cols > 0 && r < x.size() / static_cast<std::size_t>(cols); ++r) {
    const float* row = &x[r * cols];
    double m = row[0], s = 0;
    for (std::int64_t j = 1; j < cols; ++j) m = std::max(m, double(row[j]));
    for (std::int64_t j = 0; j < cols; ++j) s += std::exp(row[j] - m);
    for (std::int64_t j = 0; j < cols; ++j)
      y[r * cols + j] = static_cast<float>(log ? row[j] - m - std::log(s) : std::exp(row[j] - m) / s);
  }
  return y;
}

std::vector<float> layer_norm(const std::vector<float>& x, std::int64_t cols, const float* gamma, const float* beta,
                              float eps) {
  std::vector<float> y(x.size());
  for (std::size_t r = 0; cols > 0 && r < x.size() / static_cast<std::size_t>(cols); ++r) {
    const float* row = &x[r * cols];
    double mean = 0, var = 0;
    for (std::int64_t j = 0; j < cols; ++j) mean += row[j];
    mean /= double(cols);
    for (std::int64_t j = 0; j < cols; ++j) var += (row[j] - mean) * (row[j] - mean);
    const double rstd = 1 / std::sqrt(var / double(cols) + eps);
    for (std::int64_t j = 0; j < cols; ++j)
      y[r * cols + j] = static_cast<float>((row[j] - mean) * rstd * (gamma ? gamma[j] : 1.f) + (beta ? beta[j] : 0.f));
  }
  return y;
}

std::vector<float> reduce(ReduceOp op, const std::vector<float>& x, std::int64_t outer, std::int64_t len,
                          std::int64_t inner) {
  std::vector<float> y(static_cast<std::size_t>(outer * inner));
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      double acc = op == ReduceOp::Max ? -INFINITY : 0.0;
      for (std::int64_t l = 0; l < len; ++l) {
        const double v = x[(o * len + l) * inner + i];
        acc = op == ReduceOp::Max ? std::max(acc, v) : acc + v;
      }
      if (op == ReduceOp::Mean) acc /= double(len);
      y[o * inner + i] = static_cast<float>(acc);
    }
  return y;
}

std::vector<float> gather_rows(const std::vector<float>& x, std::int64_t cols, const std::vector<std::int64_t>& ids) {
  std::vector<float> out(ids.size() * static_cast<std::size_t>(cols), 0.f);
  for (std::size_t i = 0; i < ids.size(); ++i)
    for (std::int64_t c = 0; ids[i] >= 0 && c < cols; ++c) out[i * cols + c] = x[ids[i] * cols + c];
  return out;
}

std::vector<float> scatter_add_rows(std::int64_t rows, std::int64_t cols, const std::vector<std::int64_t>& ids,
                                    const std::vector<float>& src) {
  std::vector<double> acc(static_cast<std::size_t>(rows * cols), 0.0);
  for (std::size_t i = 0; i < ids.size(); ++i)
    for (std::int64_t c = 0; ids[i] >= 0 && c < cols; ++c) acc[ids[i] * cols + c] += src[i * cols + c];
  return std::vector<float>(acc.begin(), acc.end());
}

std::vector<float> concat(const std::vector<Tensor>& xs, int dim, Shape& out_shape) {
  out_shape = xs[0].shape();
  out_shape[dim] = 0;
  for (const Tensor& x : xs) out_shape[dim] += x.size(dim);
  std::vector<float> out(shape_numel(out_shape));
  std::int64_t base = 0;
  for (const Tensor& x : xs) {
    const std::vector<float> v = x.to_vector<float>();
    const Shape& s = x.shape();
    for (std::int64_t a = 0; a < s[0]; ++a)
      for (std::int64_t b = 0; b < s[1]; ++b)
        for (std::int64_t c = 0; c < s[2]; ++c) {
          std::int64_t co[3] = {a, b, c};
          co[dim] += base;
          out[(co[0] * out_shape[1] + co[1]) * out_shape[2] + co[2]] = v[(a * s[1] + b) * s[2] + c];
        }
    base += s[dim];
  }
  return out;
}

double cross_entropy(const std::vector<float>& x, const std::vector<std::int64_t>& t, std::int64_t n, std::int64_t c,
                     std::int64_t ignore) {
  double total = 0;
  std::int64_t count = 0;
  for (std::int64_t r = 0; r < n; ++r) {
    if (t[r] == ignore) continue;
    double m = x[r * c];
    for (std::int64_t j = 1; j < c; ++j) m = std::max(m, double(x[r * c + j]));
    double s = 0;
    for (std::int64_t j = 0; j < c; ++j) s += std::exp(double(x[r * c + j]) - m);
    total += m + std::log(s) - x[r * c + t[r]];
    ++count;
  }
  return count ? total / count : 0.0;
}

double mse(const std::vector<float>& p, const std::vector<float>& t) {
  double s = 0;
  for (std::size_t i = 0; i < p.size(); ++i) s += (double(p[i]) - t[i]) * (double(p[i]) - t[i]);
  return p.empty() ? 0.0 : s / double(p.size());
}

bool DenseAttentionProblem::sees(std::size_t b, std::int64_t h, std::int64_t i, std::int64_t j) const {
  if (radii.empty()) return true;
  const std::int64_t r = radii.size() == lengths.size()
                             ? radii[b]
                             : radii[b * static_cast<std::size_t>(heads) + static_cast<std::size_t>(h)];
  return std::abs(i - j) <= r;
}

std::int64_t DenseAttentionProblem::rows() const {
  std::int64_t n = 0;
  for (std::int64_t l : lengths) n += l;
  return n;
}

std::vector<double> dense_attention(const DenseAttentionProblem& p, const std::vector<double>& q,
                                    const std::vector<double>& k, const std::vector<double>& v) {
  const std::int64_t H = p.heads;
  std::vector<double> out(static_cast<std::size_t>(p.rows() * H * p.dv), 0.0);
  std::int64_t begin = 0;
  for (std::size_t b = 0; b < p.lengths.size(); ++b) {
    const std::int64_t len = p.lengths[b];
    std::vector<double> s(static_cast<std::size_t>(len));
    for (std::int64_t i = begin; i < begin + len; ++i)
      for (std::int64_t h = 0; h < H; ++h) {
        double top = -INFINITY, z = 0;
        for (std::int64_t j = 0; j < len; ++j) {  // a key outside the band scores -inf: weight 0
          double d = 0;
          for (std::int64_t c = 0; c < p.dk; ++c) d += q[(i * H + h) * p.dk + c] * k[((begin + j) * H + h) * p.dk + c];
          s[j] = p.sees(b, h, i - begin, j) ? p.scale * d : -INFINITY;
          top = std::max(top, s[j]);
        }
        for (double& x : s) z += (x = std::exp(x - top));
        for (std::int64_t j = 0; j < len; ++j)
          for (std::int64_t c = 0; c < p.dv; ++c)
            out[(i * H + h) * p.dv + c] += s[j] / z * v[((begin + j) * H + h) * p.dv + c];
      }
    begin += len;
  }
  return out;
}

}  // namespace topo::reference
