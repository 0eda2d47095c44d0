#pragma once
// The project's own bf16 GEMM on AMX tiles (Intel Xeon, Sapphire Rapids on; issue #41). Only cpu::sgemm
// (gemm.cpp), gemm_backend.cpp, the tests and the benchmarks include this header.
//
// Why it exists: at the models' widths (K or N of 300-1,200) oneDNN 2.6's bf16 matmul runs 800-850 GFLOP/s on
// the 2-core Xeon with AMX where its 2048^3 product runs ~1,850 (docs/performance/kernels.md, "GEMM backends").
// This kernel converts while it packs and keeps a 2 x 2 block of accumulator tiles (32 x 32 of c) over all of K
// (a weight gradient's K in chunks of at most 384: gemm_amx.cpp).
#include <cstdint>

namespace topo::cpu {

// The CPU reports AMX tiles with bf16 (CPUID leaf 7: AMX-TILE, AMX-BF16) and AVX512_BF16, and Linux granted this
// process the tile data state (arch_prctl ARCH_REQ_XCOMP_PERM, asked once).
bool amx_gemm_supported();

// Row-major c = alpha * op(a) @ op(b) + beta * c (the cblas_sgemm contract: op(a) [m, k], op(b) [k, n], lda/ldb/
// ldc the row strides as stored) with a and b rounded to bf16 (nearest even, as cpu::sgemm_bf16 and oneDNN's
// path round them) and fp32 accumulation; beta == 0 does not read c. Single-threaded (cpu::sgemm cuts the
// product into chunks fixed by the shape, one call each); a product's bits are a function of its shape and
// transposes. Requires amx_gemm_supported().
void amx_sgemm_bf16(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                    const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                    std::int64_t ldc);

}  // namespace topo::cpu
