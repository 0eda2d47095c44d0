// The CPU GEMM backend of each precision (gemm_backend.hpp); cpu::sgemm (gemm.cpp) reads it at every call.
#include "kernels/dense/gemm_backend.hpp"

#include <atomic>
#include <cstdlib>

#include <fmt/format.h>

#include "kernels/dense/gemm_bf16.hpp"
#include "kernels/dense/gemm_onednn.hpp"
#include "kernels/error.hpp"

namespace topo {
namespace {

const char* env_name(Precision p) { return p == Precision::bf16 ? "TOPO_GEMM_BF16" : "TOPO_GEMM_FP32"; }

// Why `b` cannot run precision p here (empty: it can).
std::string unavailable(Precision p, GemmBackend b) {
  if (b == GemmBackend::openblas && p == Precision::bf16)
    return "Debian's OpenBLAS 0.3.21 does not export its bf16 GEMM (cblas_sbgemm)";
  if (b == GemmBackend::own && p == Precision::fp32) return "the own kernel is bf16 only";
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
  }
  return "?";
}

GemmBackend parse_gemm_backend(std::string_view name) {
  for (GemmBackend b : {GemmBackend::openblas, GemmBackend::onednn, GemmBackend::own})
    if (name == gemm_backend_name(b)) return b;
  fail("GEMM backend '{}': expected openblas, onednn or own", name);
}

GemmCpu gemm_cpu() {
  GemmCpu c;
  c.onednn = cpu::onednn_built();
  c.avx512_bf16 = cpu::bf16_gemm_cpu_supported();
  c.amx_bf16 = c.onednn && cpu::onednn_amx();
  return c;
}

// Measured on Zen 4 (AVX512_BF16, no AMX; docs/performance/kernels.md, "GEMM backends"): oneDNN's sgemm ran
// 0.55-1.55x OpenBLAS at the models' shapes with no consistent winner, and its bf16 matmul 0.79-1.14x the own
// kernel, plus a JIT compile per new shape; so OpenBLAS and the own kernel stay there. AMX is reachable only
// through oneDNN, whose AMX tiles the own kernel cannot use: bf16 goes to oneDNN where it reports AMX (not yet
// measured on such a machine). fp32 stays OpenBLAS everywhere until oneDNN is measured faster on a CPU.
GemmBackend default_gemm_backend(Precision p, const GemmCpu& cpu) {
  if (p == Precision::fp32) return GemmBackend::openblas;
  return cpu.onednn && cpu.amx_bf16 ? GemmBackend::onednn : GemmBackend::own;
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
  return fmt::format("GEMM backends: fp32 {}{}, bf16 {}{}; {}", gemm_backend_name(gemm_backend(Precision::fp32)),
                     source(Precision::fp32), gemm_backend_name(gemm_backend(Precision::bf16)), source(Precision::bf16),
                     cpu::onednn_built() ? cpu::onednn_version() : std::string("no oneDNN in this build"));
}

}  // namespace topo
