// Suite `gemm_bf16`: the CPU GEMM backends (kernels/dense/gemm_backend.hpp) at the models' shapes, all through
// cpu::sgemm so all get the same threading (one thread below its threshold, one slab per thread above;
// --threads picks the count): fp32 on OpenBLAS and on oneDNN (dnnl_sgemm), bf16 (fp32 accumulation) on the
// own AVX512_BF16 kernel, on the own AMX kernel and on oneDNN's matmul. Shapes: M tokens (800, 2048, 8192, or
// --sizes) by the widths 100, 300, 1200, in the three forms of a Linear layer's products: forward x W^T (nt),
// input gradient g W (nn), weight gradient g^T x (tn, K = the tokens), and an FFN's two projections.
// GFLOP/s = 2 m n k / median time. The backends alternate sample by sample (rounds of all in order, then
// reversed). oneDNN's rows carry `onednn_over_openblas` (fp32) or `onednn_over_own` (bf16), the AMX kernel's
// `amx_over_onednn`, the bf16 rows `over_fp32_openblas`: the median over rounds of the other backend's time over
// this one's (> 1: this one is faster). `first_call_ms` is each backend's first call at the shape (oneDNN's bf16
// primitive is created, JIT-compiled, there). `fraction_of_peak` is against the matrix peak of each row's
// precision (fp32 sgemm or bf16, bench/machine.hpp). Backends absent from the build or the CPU are skipped (said
// once).
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "bench/harness.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/dense/gemm_backend.hpp"
#include "kernels/dense/random.hpp"

namespace {
struct Config {
  topo::Precision precision;
  topo::GemmBackend backend;
};
constexpr Config all[] = {{topo::Precision::fp32, topo::GemmBackend::openblas},
                          {topo::Precision::fp32, topo::GemmBackend::onednn},
                          {topo::Precision::bf16, topo::GemmBackend::own},
                          {topo::Precision::bf16, topo::GemmBackend::amx},
                          {topo::Precision::bf16, topo::GemmBackend::onednn}};
struct Shape3 {
  std::int64_t m, n, k;
  bool ta, tb;
  const char* form;
};
}  // namespace

TOPO_BENCH_SUITE(gemm_bf16, "CPU GEMM backends (OpenBLAS, oneDNN, own bf16 and AMX) at the models' shapes") {
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
    // The backends alternate sample by sample (rounds in order, then reversed), so a load that drifts during
    // the shape slows all of them alike; each sample is `calls` calls (about 2 ms of fp32 work).
    std::vector<Config> configs;
    for (const Config& c : all)
      if (gemm_backend_available(c.precision, c.backend)) configs.push_back(c);
    const auto timed = [&](const Config& c, int calls) {  // ms per call
      const GemmPrecisionGuard g(c.precision);
      const GemmBackendGuard gb(c.precision, c.backend);
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < calls; ++i) call();
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / calls;
    };
    std::vector<double> first_ms;  // the first call of each backend: oneDNN's bf16 primitive is created there
    for (const Config& c : configs) first_ms.push_back(timed(c, 1));
    const int calls = static_cast<int>(std::clamp(2.0 / timed(configs[0], 3), 1.0, 1000.0));
    const int rounds = bench.quick() ? 5 : 15;
    std::vector<std::vector<double>> times(configs.size());
    for (int i = 0; i < rounds; ++i)
      for (std::size_t j = 0; j < configs.size(); ++j) {
        const std::size_t c = i % 2 == 0 ? j : configs.size() - 1 - j;
        times[c].push_back(timed(configs[c], calls));
      }
    // The median over rounds of backend `over`'s time over backend c's (> 1: c is faster).
    const auto ratio = [&](std::size_t c, std::size_t over) {
      std::vector<double> r;
      for (int i = 0; i < rounds; ++i) r.push_back(times[over][static_cast<std::size_t>(i)] / times[c][static_cast<std::size_t>(i)]);
      return bench::summarize(r).median_ms;  // summarize: any positive samples
    };
    const auto index = [&](Precision p, GemmBackend b) {
      for (std::size_t c = 0; c < configs.size(); ++c)
        if (configs[c].precision == p && configs[c].backend == b) return static_cast<int>(c);
      return -1;
    };
    for (std::size_t c = 0; c < configs.size(); ++c) {
      const Config& cf = configs[c];
      const GemmPrecisionGuard g(cf.precision);  // judged against the peak of its precision
      bench.record(fmt::format("{} {} {}", precision_name(cf.precision), gemm_backend_name(cf.backend), shape),
                   bench::summarize(times[c]), {.flops = flops},
                   {{"m", s.m}, {"n", s.n}, {"k", s.k}, {"form", s.form}, {"threads", bench.threads()},
                    {"precision", precision_name(cf.precision)}, {"backend", gemm_backend_name(cf.backend)},
                    {"rounds", rounds}, {"calls_per_sample", calls}, {"first_call_ms", first_ms[c]}});
      const int blas = index(Precision::fp32, GemmBackend::openblas), own = index(Precision::bf16, GemmBackend::own);
      if (cf.backend == GemmBackend::onednn && cf.precision == Precision::fp32 && blas >= 0)
        bench.annotate("onednn_over_openblas", ratio(c, static_cast<std::size_t>(blas)));
      if (cf.backend == GemmBackend::onednn && cf.precision == Precision::bf16 && own >= 0)
        bench.annotate("onednn_over_own", ratio(c, static_cast<std::size_t>(own)));
      const int dnnl_bf16 = index(Precision::bf16, GemmBackend::onednn);
      if (cf.backend == GemmBackend::amx && dnnl_bf16 >= 0)
        bench.annotate("amx_over_onednn", ratio(c, static_cast<std::size_t>(dnnl_bf16)));
      if (cf.precision == Precision::bf16 && blas >= 0) bench.annotate("over_fp32_openblas", ratio(c, static_cast<std::size_t>(blas)));
    }
  }
}
