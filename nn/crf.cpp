#include "nn/crf.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/error.hpp"
#include "nn/autograd.hpp"
#include "nn/init.hpp"

namespace topo::nn {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double logsumexp(const double* x, std::int64_t n, std::int64_t stride = 1) {
  double m = kNegInf;
  for (std::int64_t i = 0; i < n; ++i) m = std::max(m, x[i * stride]);
  if (m == kNegInf) return kNegInf;
  double s = 0.0;
  for (std::int64_t i = 0; i < n; ++i) s += std::exp(x[i * stride] - m);
  return m + std::log(s);
}

// The CRF's parameters on the host in double, constraints folded in as -inf.
struct HostCrf {
  std::int64_t k = 0;
  std::vector<double> trans, start, end;  // [K*K], [K], [K]
};

std::vector<double> host_values(const Tensor& t) {
  const std::vector<float> v = t.to(Device::cpu()).to_vector<float>();
  return {v.begin(), v.end()};
}

HostCrf host_crf(const Tensor& transitions, const Tensor& start, const Tensor& end, const CrfConstraints& c) {
  TOPO_CHECK(transitions.ndim() == 2 && transitions.size(0) == transitions.size(1), "crf: transitions {} must be [K, K]",
             transitions.str());
  HostCrf h;
  h.k = transitions.size(0);
  TOPO_CHECK(start.ndim() == 1 && start.size(0) == h.k && end.ndim() == 1 && end.size(0) == h.k,
             "crf: start {} and end {} must be [K = {}]", start.str(), end.str(), h.k);
  const auto k = static_cast<std::size_t>(h.k);
  TOPO_CHECK((c.transition.empty() || c.transition.size() == k * k) && (c.start.empty() || c.start.size() == k) &&
                 (c.end.empty() || c.end.size() == k),
             "crf: constraints must be [K*K], [K], [K] for K = {}", h.k);
  h.trans = host_values(transitions);
  h.start = host_values(start);
  h.end = host_values(end);
  for (std::size_t i = 0; i < k * k; ++i)
    if (!c.transition.empty() && !c.transition[i]) h.trans[i] = kNegInf;
  for (std::size_t i = 0; i < k; ++i) {
    if (!c.start.empty() && !c.start[i]) h.start[i] = kNegInf;
    if (!c.end.empty() && !c.end[i]) h.end[i] = kNegInf;
  }
  return h;
}

void check_lengths(const std::vector<std::int64_t>& lengths, std::int64_t n, std::int64_t emissions_k,
                   std::int64_t k) {
  std::int64_t total = 0;
  for (std::int64_t len : lengths) {
    TOPO_CHECK(len >= 1, "crf: a sentence of length {}", len);
    TOPO_CHECK(!__builtin_add_overflow(total, len, &total), "crf: the sentence lengths overflow int64");
  }
  TOPO_CHECK(total == n, "crf: lengths sum to {} but emissions have {} rows", total, n);
  TOPO_CHECK(emissions_k == k, "crf: emissions have {} tags, transitions {}", emissions_k, k);
}

}  // namespace

Var crf_nll(const Var& emissions, const Var& transitions, const Var& start, const Var& end,
            const std::vector<std::int64_t>& lengths, const Tensor& tags, const CrfConstraints& constraints) {
  TOPO_CHECK(emissions.data().ndim() == 2, "crf: emissions {} must be [N, K]", emissions.data().str());
  const HostCrf h = host_crf(transitions.data(), start.data(), end.data(), constraints);
  const std::int64_t n = emissions.data().size(0), k = h.k;
  check_lengths(lengths, n, emissions.data().size(1), k);
  const std::vector<double> e = host_values(emissions.data());
  const std::vector<std::int64_t> y = tags.to(Device::cpu()).to_vector<std::int64_t>();
  TOPO_CHECK(static_cast<std::int64_t>(y.size()) == n, "crf: {} tags for {} tokens", y.size(), n);
  for (std::int64_t t : y) TOPO_CHECK(t >= 0 && t < k, "crf: tag {} out of range [0, {})", t, k);

  // Gradients of the mean NLL, filled while the loss is computed (the backward scales them by its g), only
  // when one is wanted: an evaluation's loss (no grad) needs alpha alone, not beta and the K^2 exps per token.
  const bool grads = grad_enabled() && (emissions.requires_grad() || transitions.requires_grad() ||
                                        start.requires_grad() || end.requires_grad());
  const auto buffer = [&](std::int64_t size) {  // empty without grads: no node will read them
    return std::vector<float>(grads ? static_cast<std::size_t>(size) : 0, 0.f);
  };
  std::vector<float> ge = buffer(n * k), gt = buffer(k * k), gs = buffer(k), gend = buffer(k);
  const double inv_b = 1.0 / double(lengths.size());
  double total = 0.0;
  std::vector<double> alpha, beta, tmp(static_cast<std::size_t>(k));
  std::int64_t offset = 0;
  for (std::size_t s = 0; s < lengths.size(); ++s) {
    const std::int64_t len = lengths[s];
    const double* es = e.data() + offset * k;
    const std::int64_t* ys = y.data() + offset;
    alpha.assign(static_cast<std::size_t>(len * k), kNegInf);
    if (grads) beta.assign(static_cast<std::size_t>(len * k), kNegInf);
    for (std::int64_t j = 0; j < k; ++j) alpha[j] = h.start[j] + es[j];
    for (std::int64_t t = 1; t < len; ++t)
      for (std::int64_t j = 0; j < k; ++j) {
        for (std::int64_t i = 0; i < k; ++i) tmp[i] = alpha[(t - 1) * k + i] + h.trans[i * k + j];
        alpha[t * k + j] = logsumexp(tmp.data(), k) + es[t * k + j];
      }
    for (std::int64_t j = 0; j < k; ++j) tmp[j] = alpha[(len - 1) * k + j] + h.end[j];
    const double log_z = logsumexp(tmp.data(), k);
    TOPO_CHECK(std::isfinite(log_z), "crf: sentence {} has no allowed tag path", s);
    // The gold path's score; a forbidden step is an error (the constraints and the data disagree).
    double gold = h.start[ys[0]] + es[ys[0]];
    for (std::int64_t t = 1; t < len; ++t) gold += h.trans[ys[t - 1] * k + ys[t]] + es[t * k + ys[t]];
    gold += h.end[ys[len - 1]];
    TOPO_CHECK(std::isfinite(gold), "crf: the gold tags of sentence {} take a transition the constraints forbid", s);
    total += log_z - gold;
    if (!grads) {
      offset += len;
      continue;
    }
    for (std::int64_t i = 0; i < k; ++i) beta[(len - 1) * k + i] = h.end[i];
    for (std::int64_t t = len - 2; t >= 0; --t)
      for (std::int64_t i = 0; i < k; ++i) {
        for (std::int64_t j = 0; j < k; ++j) tmp[j] = h.trans[i * k + j] + es[(t + 1) * k + j] + beta[(t + 1) * k + j];
        beta[t * k + i] = logsumexp(tmp.data(), k);
      }
    // Marginals minus gold indicators.
    for (std::int64_t t = 0; t < len; ++t)
      for (std::int64_t j = 0; j < k; ++j) {
        const double p = std::exp(alpha[t * k + j] + beta[t * k + j] - log_z);
        ge[static_cast<std::size_t>((offset + t) * k + j)] += static_cast<float>(p * inv_b);
        if (t == 0) gs[j] += static_cast<float>(p * inv_b);
        if (t == len - 1) gend[j] += static_cast<float>(p * inv_b);
      }
    for (std::int64_t t = 1; t < len; ++t)
      for (std::int64_t i = 0; i < k; ++i)
        for (std::int64_t j = 0; j < k; ++j) {
          const double lp = alpha[(t - 1) * k + i] + h.trans[i * k + j] + es[t * k + j] + beta[t * k + j] - log_z;
          if (lp > kNegInf) gt[i * k + j] += static_cast<float>(std::exp(lp) * inv_b);
        }
    for (std::int64_t t = 0; t < len; ++t) ge[static_cast<std::size_t>((offset + t) * k + ys[t])] -= float(inv_b);
    gs[ys[0]] -= float(inv_b);
    gend[ys[len - 1]] -= float(inv_b);
    for (std::int64_t t = 1; t < len; ++t) gt[ys[t - 1] * k + ys[t]] -= float(inv_b);
    offset += len;
  }
  const Device device = emissions.data().device();
  const Tensor out = Tensor::from_vector(std::vector<float>{static_cast<float>(total * inv_b)}, {}, device);
  return make_output(
      out, {emissions, transitions, start, end},
      [ge = std::move(ge), gt = std::move(gt), gs = std::move(gs), gend = std::move(gend), n, k,
       device](const Tensor& g, const std::vector<bool>& needs) {
        const float scale = g.to(Device::cpu()).item();
        const auto scaled = [&](const std::vector<float>& v, const Shape& shape) {
          std::vector<float> w(v);
          for (float& x : w) x *= scale;
          return Tensor::from_vector(w, shape, device);
        };
        return std::vector<Tensor>{needs[0] ? scaled(ge, {n, k}) : Tensor(), needs[1] ? scaled(gt, {k, k}) : Tensor(),
                                   needs[2] ? scaled(gs, {k}) : Tensor(), needs[3] ? scaled(gend, {k}) : Tensor()};
      },
      "crf_nll");
}

std::vector<std::int64_t> crf_viterbi(const Tensor& emissions, const Tensor& transitions, const Tensor& start,
                                      const Tensor& end, const std::vector<std::int64_t>& lengths,
                                      const CrfConstraints& constraints) {
  TOPO_CHECK(emissions.ndim() == 2, "crf: emissions {} must be [N, K]", emissions.str());
  const HostCrf h = host_crf(transitions, start, end, constraints);
  const std::int64_t n = emissions.size(0), k = h.k;
  check_lengths(lengths, n, emissions.size(1), k);
  const std::vector<double> e = host_values(emissions);
  std::vector<std::int64_t> path(static_cast<std::size_t>(n));
  std::vector<double> score, next(static_cast<std::size_t>(k));
  std::vector<std::int64_t> back;
  std::int64_t offset = 0;
  for (std::int64_t len : lengths) {
    const double* es = e.data() + offset * k;
    score.assign(h.start.begin(), h.start.end());
    for (std::int64_t j = 0; j < k; ++j) score[j] += es[j];
    back.assign(static_cast<std::size_t>(len * k), 0);
    for (std::int64_t t = 1; t < len; ++t) {
      for (std::int64_t j = 0; j < k; ++j) {
        double best = kNegInf;
        std::int64_t arg = 0;
        for (std::int64_t i = 0; i < k; ++i) {
          const double v = score[i] + h.trans[i * k + j];
          if (v > best) best = v, arg = i;
        }
        next[j] = best + es[t * k + j];
        back[t * k + j] = arg;
      }
      score.swap(next);
      next.resize(static_cast<std::size_t>(k));
    }
    std::int64_t last = 0;
    double best = kNegInf;
    for (std::int64_t j = 0; j < k; ++j)
      if (score[j] + h.end[j] > best) best = score[j] + h.end[j], last = j;
    TOPO_CHECK(best > kNegInf, "crf: a sentence of {} tokens has no allowed tag path", len);
    for (std::int64_t t = len - 1; t >= 0; --t) {
      path[static_cast<std::size_t>(offset + t)] = last;
      last = back[t * k + last];
    }
    offset += len;
  }
  return path;
}

LinearChainCrf::LinearChainCrf(std::int64_t num_tags, CrfConstraints constraints)
    : constraints_(std::move(constraints)) {
  TOPO_CHECK(num_tags >= 1, "crf: {} tags", num_tags);
  transitions = register_parameter("transitions", {num_tags, num_tags}, init::InitSpec::zeros());
  start = register_parameter("start", {num_tags}, init::InitSpec::zeros());
  end = register_parameter("end", {num_tags}, init::InitSpec::zeros());
}

}  // namespace topo::nn
