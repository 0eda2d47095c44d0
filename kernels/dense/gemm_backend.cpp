// The CPU GEMM backend of each precision (gemm_backend.hpp); cpu::sgemm (gemm.cpp) reads it at every call.
#include "kernels/dense/gemm_backend.hpp"

#include <atomic>
#include <cstdlib>

#include <fmt/format.h>

#include "kernels/dense/gemm_amx.hpp"
#include "kernels/dense/gemm_bf16.hpp"
#include "kernels/dense/gemm_onednn.hpp"
#include "kernels/error.hpp"
#include "kernels/threads.hpp"


namespace topo {
namespace {

const char* env_name(Precision p) { return p == Precision::bf16 ? "TOPO_GEMM_BF16" : "TOPO_GEMM_FP32"; }

// Why `b` cannot run precision p here (empty: it can).
std::string unavailable(Precision p, GemmBackend b) {
  if (b == GemmBackend::openblas && p == Precision::bf16)
    return "Debian's OpenBLAS 0.3.21 does not export its bf16 GEMM (cblas_sbgemm)";
  if (b == GemmBackend::own && p == Precision::fp32) return "the own kernel is bf16 only";
  if (b == GemmBackend::amx && p == Precision::fp32) return "the AMX kernel is bf16 only";
  if (b == GemmBackend::amx && !cpu::amx_gemm_supported())
    return "this CPU (or its kernel) offers no AMX tiles with bf16";
  if (b == GemmBackend::onednn && !cpu::onednn_built())
    return "this build has no oneDNN (configured with TOPO_ONEDNN=OFF, or libdnnl-dev not found)";
  if (p == Precision::bf16 && !cpu::bf16_gemm_cpu_supported()) return "this CPU does not report AVX512_BF16";
  return "";
}

GemmBackend initial(Precision p) {
  const char* env = std::getenv(env_name(p));
  if (!env || !*env) return default_gemm_backend(p, gemm_cpu());
  const GemmBackend b = parse_gemm_backend(env);
  const std::string why = unavailable(p, b);
  TOPO_CHECK(why.empty(), "{}={}: {} GEMMs cannot run on {}: {}", env_name(p), env, precision_name(p), env, why);
  return b;
}

std::atomic<GemmBackend>& slot(Precision p) {
  static std::atomic<GemmBackend> slots[2] = {initial(Precision::fp32), initial(Precision::bf16)};
  return slots[p == Precision::bf16 ? 1 : 0];
}

}  // namespace

const char* gemm_backend_name(GemmBackend b) {
  switch (b) {
    case GemmBackend::openblas: return "openblas";
    case GemmBackend::onednn: return "onednn";
    case GemmBackend::own: return "own";
    case GemmBackend::amx: return "amx";
  }
  return "?";
}

GemmBackend parse_gemm_backend(std::string_view name) {
  for (GemmBackend b : {GemmBackend::openblas, GemmBackend::onednn, GemmBackend::own, GemmBackend::amx})
    if (name == gemm_backend_name(b)) return b;
  fail("GEMM backend '{}': expected openblas, onednn, own or amx", name);
}

GemmCpu gemm_cpu() {
  GemmCpu c;
  c.onednn = cpu::onednn_built();
  c.avx512 = cpu_vector_features().avx512;
  c.avx512_bf16 = cpu::bf16_gemm_cpu_supported();
  c.amx_bf16 = c.onednn && cpu::onednn_amx();
  c.amx_tiles = cpu::amx_gemm_supported();
  return c;
}

// Measured with the backends interleaved (docs/performance/kernels.md, "GEMM backends"). Zen 4 (AVX512_BF16,
// no AMX): fp32 training steps of the three models ran 3-13% faster on oneDNN's sgemm than on OpenBLAS (11 of
// 12 model x width x length points, 1 thread; 4-10% on 2), its bf16 matmul 1-7% slower than the own kernel:
// fp32 oneDNN, bf16 own. Intel Xeon with AMX (2 threads): bf16 steps 1.25-2.85x faster on oneDNN (its AMX
// tiles, the only way to them) than on the own kernel at all 12 points, fp32 steps 0.99-1.27x on oneDNN's
// sgemm (9 of 12 faster, the others within 1.3%): both oneDNN. Intel Xeon Skylake-SP (AVX-512, neither bf16
// nor AMX): fp32 steps 1.01-1.14x faster on oneDNN at 2 threads (22 of 24 points in two runs), 0.90-1.14x at
// 1 (9 of 12): fp32 oneDNN. CPUs without AVX-512 (Zen 3: not measured) keep OpenBLAS, until figures say
// otherwise. AMX tiles, bf16 (2026-12-05, 2 threads): the own AMX kernel ran the three models' steps 1.05-1.31x
// faster than oneDNN's matmul, at all 12 points: amx. Re-measured at d = 300 on a busier host the same day:
// 0.99-1.16x, oneDNN ahead by 1.3% at one point of six (Star, n = 512; docs/performance/kernels.md).
GemmBackend default_gemm_backend(Precision p, const GemmCpu& cpu) {
  if (p == Precision::fp32)
    return cpu.onednn && (cpu.avx512 || cpu.avx512_bf16 || cpu.amx_bf16) ? GemmBackend::onednn : GemmBackend::openblas;
  if (cpu.amx_tiles) return GemmBackend::amx;
  return cpu.amx_bf16 ? GemmBackend::onednn : GemmBackend::own;
}

bool gemm_backend_available(Precision p, GemmBackend b) { return unavailable(p, b).empty(); }

GemmBackend gemm_backend(Precision p) { return slot(p).load(std::memory_order_relaxed); }

void set_gemm_backend(Precision p, GemmBackend b) {
  const std::string why = unavailable(p, b);
  TOPO_CHECK(why.empty(), "GEMM backend {} cannot run {} GEMMs: {}", gemm_backend_name(b), precision_name(p), why);
  slot(p).store(b, std::memory_order_relaxed);
}

std::string gemm_backend_line() {
  const auto source = [](Precision p) {
    const char* env = std::getenv(env_name(p));
    return env && *env ? fmt::format(" ({})", env_name(p)) : std::string();
  };
  return fmt::format("CPU GEMM backends: fp32 {}{}, bf16 {}{}; {}", gemm_backend_name(gemm_backend(Precision::fp32)),
                     source(Precision::fp32), gemm_backend_name(gemm_backend(Precision::bf16)), source(Precision::bf16),
                     cpu::onednn_built() ? cpu::onednn_version() : std::string("no oneDNN in this build"));
}

}  // namespace topo
