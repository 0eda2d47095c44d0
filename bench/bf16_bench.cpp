// Suite `bf16`: what a bf16 GEMM could gain on this CPU, measured before writing one (issue #20; the GEMM
// since written is kernels/dense/gemm_bf16.*, timed by suite gemm_bf16). Two register-only loops on one
// thread, 12 independent accumulator chains each (more than latency x ports):
// vfmadd231ps (16 fp32 FMAs = 32 flops per instruction) and vdpbf16ps (AVX512_BF16: 32 bf16 products summed
// in pairs into 16 fp32 lanes = 64 flops per instruction). A bf16 GEMM built on vdpbf16ps is compute-bound
// like sgemm at this project's shapes, so its ceiling over sgemm is the ratio of these two rates. (The other
// route, OpenBLAS's cblas_sbgemm, is declared in Debian's cblas.h but not exported by its libopenblas 0.3.21.)
// Built only where the compiler targets AVX512_BF16 (-march=native on such a CPU); elsewhere the suite says so.
#include <fmt/core.h>
#include <immintrin.h>

#include "bench/harness.hpp"

namespace {
constexpr long kIters = 2'000'000;
constexpr int kChains = 12;
}  // namespace

TOPO_BENCH_SUITE(bf16, "fp32 FMA vs AVX512_BF16 dot-product instruction throughput, one thread, in registers") {
#if defined(__AVX512BF16__) && defined(__AVX512F__)
  float sink = 0.f;
  const __m512 x = _mm512_set1_ps(1e-9f), y = _mm512_set1_ps(1.f);
  const __m512bh xb = (__m512bh)_mm512_set1_epi16(0x3f80), yb = (__m512bh)_mm512_set1_epi16(0x3000);
  // The accumulators are locals of each timed call (not captured) so they stay in registers.
  const auto drain = [&](const __m512* acc) {
    // Through memory, not _mm512_reduce_add_ps: GCC 12's expansion starts from _mm256_undefined_pd, which
    // -Wuninitialized reports.
    alignas(64) float lanes[16];
    for (int j = 0; j < kChains; ++j) {
      _mm512_store_ps(lanes, acc[j]);
      for (float x : lanes) sink += x;
    }
  };
  const topo::bench::Result fp32 = bench.run("fp32 fma", {.flops = kIters * kChains * 32.0}, [&] {
    __m512 acc[kChains];
    for (__m512& a : acc) a = _mm512_setzero_ps();
    for (long i = 0; i < kIters; ++i) {
#pragma GCC unroll 12
      for (int j = 0; j < kChains; ++j) acc[j] = _mm512_fmadd_ps(x, y, acc[j]);
      __asm__ volatile("" ::"v"(acc[0]), "v"(acc[kChains - 1]));
    }
    drain(acc);
  });
  const topo::bench::Result bf16 = bench.run("bf16 dpbf16ps", {.flops = kIters * kChains * 64.0}, [&] {
    __m512 acc[kChains];
    for (__m512& a : acc) a = _mm512_setzero_ps();
    for (long i = 0; i < kIters; ++i) {
#pragma GCC unroll 12
      for (int j = 0; j < kChains; ++j) acc[j] = _mm512_dpbf16_ps(acc[j], xb, yb);
      __asm__ volatile("" ::"v"(acc[0]), "v"(acc[kChains - 1]));
    }
    drain(acc);
  });
  bench.annotate("bf16_over_fp32_flop_rate", bf16.gflops / fp32.gflops);
  bench.annotate("sink", sink);  // keeps the loops' results live
#else
  fmt::print("bf16: this build does not target AVX512_BF16 (compile with -march=native on a CPU that has it)\n");
  (void)bench;
#endif
}
