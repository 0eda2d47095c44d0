#pragma once
// Which library runs the CPU's GEMMs, per precision (issue #41): OpenBLAS, oneDNN, or the project's own bf16
// kernels (kernels/dense/gemm_bf16.hpp on AVX512_BF16, kernels/dense/gemm_amx.hpp on AMX tiles). cpu::sgemm keeps
// its threading (one thread, or chunks over the threads) for all of them; only the single-threaded product
// inside changes.
//
// The choice is a fixed rule of the CPU's features and the build (default_gemm_backend), derived from the
// measurements in docs/performance/kernels.md, never a timing taken at run time: a run, its --resume and a run
// with the same seed run the same kernels on the same machine, so their results stay bitwise identical.
// TOPO_GEMM_FP32=openblas|onednn and TOPO_GEMM_BF16=own|amx|onednn replace the rule for a process (comparisons).
#include <string>
#include <string_view>

#include "kernels/dense/gemm.hpp"

namespace topo {

// own: the AVX512_BF16 kernel (gemm_bf16.hpp); amx: the own AMX kernel (gemm_amx.hpp).
enum class GemmBackend { openblas, onednn, own, amx };
const char* gemm_backend_name(GemmBackend b);         // "openblas" / "onednn" / "own" / "amx"
GemmBackend parse_gemm_backend(std::string_view name);  // topo::Error naming any other value

// What the rule looks at.
struct GemmCpu {
  bool onednn = false;  // the build has oneDNN (TOPO_ONEDNN)
  bool avx512 = false;  // AVX-512 F, CD, BW, DQ, VL (oneDNN's avx512_core; Intel Skylake-SP and later, Zen 4)
  bool avx512_bf16 = false;
  bool amx_bf16 = false;  // oneDNN dispatches to AMX tiles here
  bool amx_tiles = false;  // the own AMX kernel can run (cpu::amx_gemm_supported: CPUID and the kernel's grant)
};
GemmCpu gemm_cpu();  // this process's

// The rule (pure), with oneDNN in the build: AVX512_BF16 without AMX (Zen 4): fp32 oneDNN, bf16 the own kernel;
// AMX (Intel Xeon): fp32 oneDNN, bf16 amx (the own AMX kernel); AVX-512 without either (Intel Skylake-SP): fp32
// oneDNN; every other CPU: fp32 OpenBLAS. Without oneDNN: OpenBLAS, and bf16 on the AMX kernel or the own
// AVX512_BF16 kernel.
// (Why, with the figures and what is not measured yet: docs/performance/kernels.md, "GEMM backends".)
GemmBackend default_gemm_backend(Precision p, const GemmCpu& cpu);
// Whether `b` can run GEMMs of precision p in this process: openblas: fp32 only; own: bf16 only; amx: bf16 only,
// on AMX tiles; onednn: either, when built with it (bf16 also needs AVX512_BF16, as every bf16 GEMM does).
bool gemm_backend_available(Precision p, GemmBackend b);

// The backend of each precision: the rule's (or the environment's) until set_gemm_backend. An unavailable
// backend is a topo::Error naming what is missing.
GemmBackend gemm_backend(Precision p);
void set_gemm_backend(Precision p, GemmBackend b);
// The backend GEMMs use now (at gemm_precision()).
inline GemmBackend active_gemm_backend() { return gemm_backend(gemm_precision()); }

// One log line: "CPU GEMM backends: fp32 onednn, bf16 own; oneDNN 2.6.3 (avx512_core_bf16)", a backend set by
// TOPO_GEMM_FP32 / TOPO_GEMM_BF16 followed by that variable's name in parentheses.
std::string gemm_backend_line();

// Sets a precision's backend for a scope and restores the previous one (tests, benchmarks).
class GemmBackendGuard {
 public:
  GemmBackendGuard(Precision p, GemmBackend b) : precision_(p), previous_(gemm_backend(p)) { set_gemm_backend(p, b); }
  ~GemmBackendGuard() { set_gemm_backend(precision_, previous_); }
  GemmBackendGuard(const GemmBackendGuard&) = delete;
  GemmBackendGuard& operator=(const GemmBackendGuard&) = delete;

 private:
  Precision precision_;
  GemmBackend previous_;
};

}  // namespace topo
