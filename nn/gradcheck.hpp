#pragma once
// gradcheck: compares the tape's gradients with central finite differences.
//
//   auto r = gradcheck([](const std::vector<Var>& x) { return nn::tanh(x[0]); }, {Var(x0, true)});
//   INFO(r.message); CHECK(r.ok);
//
// With a fixed random R shaped like f(x), L = sum(f(x) * R) covers every output element. The analytic
// gradient is one backward of f(x) with grad_output R; the numeric one perturbs each element of every
// input that requires grad by +-eps and takes (L+ - L-) / (x+ - x-), where x+- are the float32 values
// actually stored and L is summed in double, so only the outputs the perturbation moved contribute
// rounding noise. Inputs passed without requires_grad (targets, integer ids) are held constant.
//
// Tolerances: float32 outputs carry relative rounding ~6e-8 per op, so an output moved by eps*g has
// absolute noise ~1e-7*|f| per element, i.e. ~1e-4 relative to eps = 1e-3 after the division; reductions
// over a row (softmax, layer_norm) multiply that by ~sqrt(row). Truncation error is eps^2*f'''/6 ~ 1e-6
// for smooth ops. atol = rtol = 1e-2 leaves two orders of headroom for both and still catches any wrong
// factor, sign, transposition or missing broadcast sum. Keep inputs > eps away from kinks (relu at 0,
// ties in max) and f's outputs O(1).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nn/var.hpp"

namespace topo::nn {

struct GradcheckOptions {
  float eps = 1e-3f;
  double atol = 1e-2;
  double rtol = 1e-2;
  std::uint64_t seed = 0x9e3779b9;  // for R
};

struct GradcheckResult {
  bool ok = false;
  // The worst element (largest |analytic - numeric| / (atol + rtol*|numeric|)); input -1 when none checked.
  int input = -1;
  std::int64_t index = -1;  // flat index within that input
  float analytic = 0.f;
  float numeric = 0.f;
  double ratio = 0.;              // that element's error over its tolerance; ok means ratio <= 1
  std::int64_t checked = 0;       // elements compared
  std::string message;            // one line describing the outcome (for INFO / CHECK_MESSAGE)
  explicit operator bool() const { return ok; }
};

using GradcheckFn = std::function<Var(const std::vector<Var>&)>;

// `inputs` are not modified: f is evaluated on copies. f must be deterministic (build a fresh Generator
// inside f for dropout) and return a float32 Var.
GradcheckResult gradcheck(const GradcheckFn& f, const std::vector<Var>& inputs, const GradcheckOptions& options = {});

}  // namespace topo::nn
