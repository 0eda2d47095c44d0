// Suite `gemm_bf16`: the CPU GEMM backends (kernels/dense/gemm_backend.hpp) at the models' shapes, all through
// cpu::sgemm so all get the same threading (one thread below its threshold, one slab per thread above;
// --threads picks the count): fp32 on OpenBLAS and on oneDNN (dnnl_sgemm), bf16 (fp32 accumulation) on the
// own AVX512_BF16 kernel and on oneDNN's matmul. Shapes: M tokens (800, 2048, 8192, or --sizes) by the widths
// 100, 300, 1200, in the three forms of a Linear layer's products: forward x W^T (nt), input gradient g W (nn),
// weight gradient g^T x (tn, K = the tokens), and an FFN's two projections. GFLOP/s = 2 m n k / median time.
// Each shape's last row carries `onednn_over_openblas` (fp32) and `onednn_over_own` (bf16), the ratios of
// the rates, and `bf16_over_fp32` (the faster of each precision); `onednn_first_call_ms` is the first bf16
// call of the shape, which creates (JIT-compiles) its oneDNN primitive. `fraction_of_peak` is against the
// matrix peak of each row's precision (fp32 sgemm or bf16, bench/machine.hpp). Backends absent from the build
// or the CPU are skipped (said once).
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "bench/harness.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/dense/gemm_backend.hpp"
#include "kernels/dense/random.hpp"

namespace {
struct Shape3 {
  std::int64_t m, n, k;
  bool ta, tb;
  const char* form;
};
}  // namespace

TOPO_BENCH_SUITE(gemm_bf16, "CPU GEMM backends (OpenBLAS, oneDNN, own bf16) at the models' shapes, fp32 and bf16") {
  using namespace topo;
  const bool onednn = gemm_backend_available(Precision::fp32, GemmBackend::onednn);
  const bool bf16 = bf16_gemm_supported();
  if (!onednn) fmt::print("gemm_bf16: this build has no oneDNN: OpenBLAS and the own kernel only\n");
  if (!bf16) fmt::print("gemm_bf16: this CPU does not report AVX512_BF16: fp32 only\n");
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
    const std::string shape = fmt::format("{} {}x{}x{}", s.form, s.m, s.n, s.k);
    auto call = [&] { cpu::sgemm(s.ta, s.tb, s.m, s.n, s.k, 1.f, ap, ac, bp, bc, 0.f, cp, s.n); };
    // One row per (precision, backend): the GFLOP/s of each, 0 where it did not run.
    const auto row = [&](Precision p, GemmBackend backend) {
      if (!gemm_backend_available(p, backend)) return 0.0;
      const GemmPrecisionGuard g(p);
      const GemmBackendGuard gb(p, backend);
      double first_ms = -1;
      if (p == Precision::bf16 && backend == GemmBackend::onednn) {
        const auto t0 = std::chrono::steady_clock::now();
        call();
        first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      }
      const nlohmann::json extra = {{"m", s.m}, {"n", s.n}, {"k", s.k}, {"form", s.form}, {"threads", bench.threads()},
                                    {"precision", precision_name(p)}, {"backend", gemm_backend_name(backend)}};
      const double gflops =
          bench.run(fmt::format("{} {} {}", precision_name(p), gemm_backend_name(backend), shape), {.flops = flops}, call, extra)
              .gflops;
      if (first_ms >= 0) bench.annotate("onednn_first_call_ms", first_ms);
      return gflops;
    };
    const double fp32_blas = row(Precision::fp32, GemmBackend::openblas);
    const double fp32_dnnl = row(Precision::fp32, GemmBackend::onednn);
    const double bf16_own = row(Precision::bf16, GemmBackend::own);
    const double bf16_dnnl = row(Precision::bf16, GemmBackend::onednn);
    if (fp32_dnnl > 0) bench.annotate("onednn_over_openblas", fp32_dnnl / fp32_blas);
    if (bf16_dnnl > 0 && bf16_own > 0) bench.annotate("onednn_over_own", bf16_dnnl / bf16_own);
    if (bf16_own > 0) bench.annotate("bf16_over_fp32", std::max(bf16_own, bf16_dnnl) / std::max(fp32_blas, fp32_dnnl));
  }
}
