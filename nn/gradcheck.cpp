#include "nn/gradcheck.hpp"

#include <cmath>
#include <random>

#include <fmt/format.h>

#include "nn/autograd.hpp"

namespace topo::nn {

namespace {
// sum_i out_i * r_i in double, on the host.
double weighted_sum(const Var& out, const std::vector<float>& r) {
  const std::vector<float> y = out.data().to_vector<float>();
  double s = 0;
  for (std::size_t i = 0; i < y.size(); ++i) s += static_cast<double>(y[i]) * r[i];
  return s;
}
}  // namespace

GradcheckResult gradcheck(const GradcheckFn& f, const std::vector<Var>& inputs, const GradcheckOptions& options) {
  GradcheckResult result;
  // Private leaves: perturbing them never touches the caller's tensors, and their grads start empty.
  std::vector<Var> xs;
  std::vector<int> checked_inputs;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Var& in = inputs[i];
    if (!in.defined()) {
      xs.emplace_back();
      continue;
    }
    const bool check = in.requires_grad() && in.dtype() == DType::F32;
    xs.emplace_back(in.data().clone(), check);
    if (check) checked_inputs.push_back(static_cast<int>(i));
  }
  if (checked_inputs.empty()) {
    result.message = "gradcheck: no input requires grad; pass Var(tensor, true) for the inputs to check";
    return result;
  }

  Var out = f(xs);
  TOPO_CHECK(out.defined() && out.dtype() == DType::F32, "gradcheck: f must return a defined float32 Var");
  if (!out.requires_grad()) {
    result.message = "gradcheck: f's output does not require grad (its tape does not reach any input)";
    return result;
  }
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> r(static_cast<std::size_t>(out.numel()));
  for (float& v : r) v = uniform(rng);
  out.backward(Tensor::from_vector(r, out.shape(), out.device()));

  NoGradGuard no_grad;
  for (int i : checked_inputs) {
    Var& x = xs[i];
    const std::int64_t n = x.numel();
    const Tensor& g = x.grad();
    const std::vector<float> analytic = g.defined() ? g.to_vector<float>() : std::vector<float>(n, 0.f);
    std::vector<float> host = x.data().to_vector<float>();
    Tensor data = x.data();
    // CPU inputs are perturbed in place; device inputs by copying the host vector over.
    float* direct = data.device().is_cpu() ? data.data<float>() : nullptr;
    auto store = [&](std::int64_t j, float v) {
      host[j] = v;
      if (direct)
        direct[j] = v;
      else
        data.copy_from(Tensor::from_vector(host, data.shape()));
    };
    for (std::int64_t j = 0; j < n; ++j) {
      const float x0 = host[j];
      const float xp = x0 + options.eps, xm = x0 - options.eps;
      store(j, xp);
      const double lp = weighted_sum(f(xs), r);
      store(j, xm);
      const double lm = weighted_sum(f(xs), r);
      store(j, x0);
      const double numeric = (lp - lm) / (static_cast<double>(xp) - static_cast<double>(xm));
      const double err = std::fabs(analytic[j] - numeric);
      const double ratio = err / (options.atol + options.rtol * std::fabs(numeric));
      ++result.checked;
      // NaN in either gradient counts as a failure (ratio is NaN, and !(NaN <= worst)).
      if (result.input < 0 || !(ratio <= result.ratio)) {
        result.input = i;
        result.index = j;
        result.analytic = analytic[j];
        result.numeric = static_cast<float>(numeric);
        result.ratio = std::isnan(ratio) ? INFINITY : ratio;
      }
    }
  }
  result.ok = result.ratio <= 1.0;
  result.message = fmt::format(
      "gradcheck {}: {} elements; worst: input {} {} flat index {}: analytic {:.6g} vs numeric {:.6g} "
      "(error {:.3g} of tolerance atol {} + rtol {} * |numeric|)",
      result.ok ? "passed" : "FAILED", result.checked, result.input, shape_str(inputs[result.input].shape()),
      result.index, result.analytic, result.numeric, result.ratio, options.atol, options.rtol);
  return result;
}

}  // namespace topo::nn
