// Suite `gemm_bf16`: the bf16 GEMM (kernels/dense/gemm_bf16.*, AVX512_BF16) against fp32 sgemm (OpenBLAS) at
// the models' shapes, both through cpu::sgemm so both get the same threading (one thread below its threshold,
// one slab per thread above; --threads picks the count). Shapes: M tokens (800, 2048, 8192) by the widths
// 100, 300, 1200, in the three forms of a Linear layer's products: forward x W^T (nt), input gradient g W (nn),
// weight gradient g^T x (tn, K = the tokens). GFLOP/s = 2 m n k / median time; `bf16_over_fp32` is the ratio
// of the two rates at the same shape; `fraction_of_peak` stays relative to the fp32 sgemm peak of the run.
#include <fmt/core.h>

#include <vector>

#include "bench/harness.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/dense/random.hpp"

namespace {
struct Shape3 {
  std::int64_t m, n, k;
  bool ta, tb;
  const char* form;
};
}  // namespace

TOPO_BENCH_SUITE(gemm_bf16, "bf16 GEMM (AVX512_BF16, fp32 accumulation) vs fp32 sgemm at the models' shapes") {
  using namespace topo;
  if (!bf16_gemm_supported()) {
    fmt::print("gemm_bf16: this CPU does not report AVX512_BF16; nothing to compare\n");
    return;
  }
  std::vector<Shape3> shapes;
  const std::vector<std::int64_t> tokens =
      !bench.sizes().empty() ? bench.sizes() : bench.quick() ? std::vector<std::int64_t>{2048} : std::vector<std::int64_t>{800, 2048, 8192};
  for (std::int64_t t : tokens)
    for (std::int64_t w : {100, 300, 1200}) {
      shapes.push_back({t, w, w, false, true, "nt"});   // y = x W^T
      shapes.push_back({t, w, w, false, false, "nn"});  // dx = g W
      shapes.push_back({w, w, t, true, false, "tn"});   // dW = g^T x
    }
  shapes.push_back({800, 1200, 300, false, true, "nt"});  // an FFN's widening projection
  shapes.push_back({800, 300, 1200, false, true, "nt"});  // and its narrowing one
  for (const Shape3& s : shapes) {
    const std::int64_t ar = s.ta ? s.k : s.m, ac = s.ta ? s.m : s.k;
    const std::int64_t br = s.tb ? s.n : s.k, bc = s.tb ? s.k : s.n;
    const Tensor a = random_uniform({ar, ac}, -1, 1, 1), b = random_uniform({br, bc}, -1, 1, 2);
    Tensor c = Tensor::zeros({s.m, s.n});
    const float *ap = a.data<float>(), *bp = b.data<float>();
    float* cp = c.data<float>();
    const double flops = 2.0 * static_cast<double>(s.m * s.n * s.k);
    const nlohmann::json extra = {{"m", s.m}, {"n", s.n}, {"k", s.k}, {"form", s.form}, {"threads", bench.threads()}};
    const std::string shape = fmt::format("{} {}x{}x{}", s.form, s.m, s.n, s.k);
    auto call = [&] { cpu::sgemm(s.ta, s.tb, s.m, s.n, s.k, 1.f, ap, ac, bp, bc, 0.f, cp, s.n); };
    bench::Result fp32;
    {
      GemmPrecisionGuard g(Precision::fp32);
      fp32 = bench.run("fp32 " + shape, {.flops = flops}, call, extra);
    }
    GemmPrecisionGuard g(Precision::bf16);
    const bench::Result bf16 = bench.run("bf16 " + shape, {.flops = flops}, call, extra);
    bench.annotate("bf16_over_fp32", bf16.gflops / fp32.gflops);
  }
}
