// Naive sparse references (see reference.hpp): for every destination, every edge of the COO list.
#include "kernels/sparse/reference.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/dense/random_math.hpp"

namespace topo::reference {

float spmm_message(MessageOp op, float u, float e) {
  switch (op) {
    case MessageOp::CopyU: return u;
    case MessageOp::CopyE: return e;
    case MessageOp::UAddE: return u + e;
    case MessageOp::USubE: return u - e;
    case MessageOp::UMulE: return u * e;
    case MessageOp::UDivE: return u / e;
  }
  return 0;
}

std::vector<float> gspmm(MessageOp op, SpmmReduce red, const Coo& g, const std::vector<float>& uf,
                         const std::vector<float>& ef, std::int64_t H, std::int64_t D, std::int64_t De) {
  std::vector<float> out(g.num_dst * H * D, 0.f);
  for (std::int64_t v = 0; v < g.num_dst; ++v)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t d = 0; d < D; ++d) {
        std::vector<float> msgs;
        for (std::int64_t e = 0; e < g.num_edges(); ++e) {
          if (g.dst[e] != v) continue;
          const float u = uf.empty() ? 0.f : uf[(g.src[e] * H + h) * D + d];
          const float w = ef.empty() ? 0.f : ef[(e * H + h) * De + (De == 1 ? 0 : d)];
          msgs.push_back(spmm_message(op, u, w));
        }
        double r = 0;
        if (!msgs.empty()) {
          if (red == SpmmReduce::Max) {
            r = *std::max_element(msgs.begin(), msgs.end());
          } else if (red == SpmmReduce::Min) {
            r = *std::min_element(msgs.begin(), msgs.end());
          } else {
            for (float m : msgs) r += m;
            if (red == SpmmReduce::Mean) r /= double(msgs.size());
          }
        }
        out[(v * H + h) * D + d] = static_cast<float>(r);
      }
  return out;
}

std::int64_t target_row(Target t, const Coo& g, std::int64_t e) {
  return t == Target::U ? g.src[e] : t == Target::V ? g.dst[e] : e;
}
std::int64_t target_rows(Target t, const Coo& g) {
  return t == Target::U ? g.num_src : t == Target::V ? g.num_dst : g.num_edges();
}

std::vector<float> gsddmm(SddmmOp op, const Coo& g, const std::vector<float>& lhs, Target lt,
                          const std::vector<float>& rhs, Target rt, std::int64_t H, std::int64_t D) {
  const std::int64_t od = op == SddmmOp::Dot ? 1 : D;
  std::vector<float> out(static_cast<std::size_t>(g.num_edges() * H * od));
  for (std::int64_t e = 0; e < g.num_edges(); ++e)
    for (std::int64_t h = 0; h < H; ++h) {
      const float* a = lhs.empty() ? nullptr : &lhs[(target_row(lt, g, e) * H + h) * D];
      const float* b = rhs.empty() ? nullptr : &rhs[(target_row(rt, g, e) * H + h) * D];
      if (op == SddmmOp::Dot) {
        double s = 0;
        for (std::int64_t d = 0; d < D; ++d) s += double(a[d]) * b[d];
        out[e * H + h] = static_cast<float>(s);
        continue;
      }
      for (std::int64_t d = 0; d < D; ++d)
        out[(e * H + h) * D + d] = op == SddmmOp::Add       ? a[d] + b[d]
                                   : op == SddmmOp::Sub     ? a[d] - b[d]
                                   : op == SddmmOp::Mul     ? a[d] * b[d]
                                   : op == SddmmOp::Div     ? a[d] / b[d]
                                   : op == SddmmOp::CopyLhs ? a[d]
                                                            : b[d];
    }
  return out;
}

std::vector<float> edge_softmax(const Coo& g, const std::vector<float>& x, std::int64_t cols, bool by_src) {
  const std::vector<std::int64_t>& group = by_src ? g.src : g.dst;
  const std::int64_t groups = by_src ? g.num_src : g.num_dst;
  std::vector<float> y(x.size(), 0.f);
  for (std::int64_t v = 0; v < groups; ++v)
    for (std::int64_t c = 0; c < cols; ++c) {
      double m = -INFINITY, s = 0;
      for (std::int64_t e = 0; e < g.num_edges(); ++e)
        if (group[e] == v) m = std::max<double>(m, x[e * cols + c]);
      for (std::int64_t e = 0; e < g.num_edges(); ++e)
        if (group[e] == v) s += std::exp(x[e * cols + c] - m);
      for (std::int64_t e = 0; e < g.num_edges(); ++e)
        if (group[e] == v) y[e * cols + c] = static_cast<float>(std::exp(x[e * cols + c] - m) / s);
    }
  return y;
}

std::vector<float> edge_softmax_backward(const Coo& g, const std::vector<float>& y, const std::vector<float>& dy,
                                         std::int64_t cols) {
  std::vector<float> dx(y.size(), 0.f);
  for (std::int64_t v = 0; v < g.num_dst; ++v)
    for (std::int64_t c = 0; c < cols; ++c) {
      double dot = 0;
      for (std::int64_t e = 0; e < g.num_edges(); ++e)
        if (g.dst[e] == v) dot += double(dy[e * cols + c]) * y[e * cols + c];
      for (std::int64_t e = 0; e < g.num_edges(); ++e)
        if (g.dst[e] == v) dx[e * cols + c] = static_cast<float>(y[e * cols + c] * (dy[e * cols + c] - dot));
    }
  return dx;
}

std::vector<float> sparse_attention(const Coo& g, const std::vector<float>& q, const std::vector<float>& k,
                                    const std::vector<float>& v, std::int64_t H, std::int64_t dk, std::int64_t dv,
                                    float scale) {
  std::vector<double> out(g.num_dst * H * dv, 0.0);
  for (std::int64_t t = 0; t < g.num_dst; ++t)
    for (std::int64_t h = 0; h < H; ++h) {
      std::vector<double> s;
      std::vector<std::int64_t> us;
      for (std::int64_t e = 0; e < g.num_edges(); ++e) {
        if (g.dst[e] != t) continue;
        double d = 0;
        for (std::int64_t i = 0; i < dk; ++i) d += double(q[(t * H + h) * dk + i]) * k[(g.src[e] * H + h) * dk + i];
        s.push_back(scale * d);
        us.push_back(g.src[e]);
      }
      if (s.empty()) continue;
      const double m = *std::max_element(s.begin(), s.end());
      double z = 0;
      for (double x : s) z += std::exp(x - m);
      for (std::size_t j = 0; j < s.size(); ++j)
        for (std::int64_t i = 0; i < dv; ++i)
          out[(t * H + h) * dv + i] += std::exp(s[j] - m) / z * v[(us[j] * H + h) * dv + i];
    }
  return std::vector<float>(out.begin(), out.end());
}

AttentionGrads sparse_attention_grads(const Coo& g, const std::vector<float>& q, const std::vector<float>& k,
                                      const std::vector<float>& v, const std::vector<float>& R, std::int64_t H,
                                      std::int64_t dk, std::int64_t dv, float scale) {
  std::vector<double> gq(q.size()), gk(k.size()), gv(v.size());
  for (std::int64_t t = 0; t < g.num_dst; ++t)
    for (std::int64_t h = 0; h < H; ++h) {
      std::vector<std::int64_t> us;
      std::vector<double> s, dp;
      for (std::int64_t e = 0; e < g.num_edges(); ++e) {
        if (g.dst[e] != t) continue;
        const std::int64_t u = g.src[e];
        double d = 0, r = 0;
        for (std::int64_t i = 0; i < dk; ++i) d += double(q[(t * H + h) * dk + i]) * k[(u * H + h) * dk + i];
        for (std::int64_t i = 0; i < dv; ++i) r += double(R[(t * H + h) * dv + i]) * v[(u * H + h) * dv + i];
        us.push_back(u);
        s.push_back(scale * d);
        dp.push_back(r);
      }
      if (us.empty()) continue;
      const double m = *std::max_element(s.begin(), s.end());
      double z = 0, mean = 0;
      for (double x : s) z += std::exp(x - m);
      for (std::size_t j = 0; j < us.size(); ++j) mean += std::exp(s[j] - m) / z * dp[j];
      for (std::size_t j = 0; j < us.size(); ++j) {
        const std::int64_t u = us[j];
        const double p = std::exp(s[j] - m) / z, dsj = p * (dp[j] - mean);
        for (std::int64_t i = 0; i < dv; ++i) gv[(u * H + h) * dv + i] += p * R[(t * H + h) * dv + i];
        for (std::int64_t i = 0; i < dk; ++i) {
          gq[(t * H + h) * dk + i] += scale * dsj * k[(u * H + h) * dk + i];
          gk[(u * H + h) * dk + i] += scale * dsj * q[(t * H + h) * dk + i];
        }
      }
    }
  auto narrow = [](const std::vector<double>& x) { return std::vector<float>(x.begin(), x.end()); };
  return {narrow(gq), narrow(gk), narrow(gv)};
}

double GatMask::keep(std::int64_t element) const {
  if (p == 0.f) return 1.0;
  return uniform_at(seed, offset + static_cast<std::uint64_t>(element)) >= p ? 1.0 / (1.0 - double(p)) : 0.0;
}

namespace {

// One destination's in-edges for head h: their sources, ids, pre-activation scores x and softmax weights a.
struct GatRow {
  std::vector<std::int64_t> src, eid;
  std::vector<double> x, a;
};
GatRow gat_row(const Coo& g, const std::vector<float>& el, const std::vector<float>& er, std::int64_t H,
               std::int64_t t, std::int64_t h, float slope) {
  GatRow row;
  for (std::int64_t e = 0; e < g.num_edges(); ++e) {
    if (g.dst[e] != t) continue;
    row.src.push_back(g.src[e]);
    row.eid.push_back(e);
    row.x.push_back(double(el[g.src[e] * H + h]) + er[t * H + h]);
  }
  if (row.x.empty()) return row;
  std::vector<double> s;
  for (double x : row.x) s.push_back(x > 0 ? x : slope * x);
  const double m = *std::max_element(s.begin(), s.end());
  double sum = 0;
  for (double v : s) sum += std::exp(v - m);
  for (double v : s) row.a.push_back(std::exp(v - m) / sum);
  return row;
}

}  // namespace

std::vector<float> gat_attention(const Coo& g, const std::vector<float>& el, const std::vector<float>& er,
                                 const std::vector<float>& z, std::int64_t H, std::int64_t F, float slope,
                                 const GatMask& mask) {
  std::vector<double> out(g.num_dst * H * F, 0.0);
  for (std::int64_t t = 0; t < g.num_dst; ++t)
    for (std::int64_t h = 0; h < H; ++h) {
      const GatRow row = gat_row(g, el, er, H, t, h, slope);
      for (std::size_t j = 0; j < row.src.size(); ++j) {
        const double w = row.a[j] * mask.keep(row.eid[j] * H + h);
        for (std::int64_t i = 0; i < F; ++i) out[(t * H + h) * F + i] += w * z[(row.src[j] * H + h) * F + i];
      }
    }
  return std::vector<float>(out.begin(), out.end());
}

GatGrads gat_attention_grads(const Coo& g, const std::vector<float>& el, const std::vector<float>& er,
                             const std::vector<float>& z, const std::vector<float>& R, std::int64_t H, std::int64_t F,
                             float slope, const GatMask& mask) {
  std::vector<double> gl(el.size()), gr(er.size()), gz(z.size());
  for (std::int64_t t = 0; t < g.num_dst; ++t)
    for (std::int64_t h = 0; h < H; ++h) {
      const GatRow row = gat_row(g, el, er, H, t, h, slope);
      std::vector<double> keep, dkept;  // keep factor, keep * d(out)/d(a')
      double mean = 0;
      for (std::size_t j = 0; j < row.src.size(); ++j) {
        double d = 0;
        for (std::int64_t i = 0; i < F; ++i) d += double(R[(t * H + h) * F + i]) * z[(row.src[j] * H + h) * F + i];
        keep.push_back(mask.keep(row.eid[j] * H + h));
        dkept.push_back(keep.back() * d);
        mean += row.a[j] * dkept.back();
      }
      for (std::size_t j = 0; j < row.src.size(); ++j) {
        const std::int64_t u = row.src[j];
        for (std::int64_t i = 0; i < F; ++i) gz[(u * H + h) * F + i] += row.a[j] * keep[j] * R[(t * H + h) * F + i];
        const double dx = row.a[j] * (dkept[j] - mean) * (row.x[j] > 0 ? 1.0 : double(slope));
        gl[u * H + h] += dx;
        gr[t * H + h] += dx;
      }
    }
  auto narrow = [](const std::vector<double>& x) { return std::vector<float>(x.begin(), x.end()); };
  return {narrow(gl), narrow(gr), narrow(gz)};
}

}  // namespace topo::reference
