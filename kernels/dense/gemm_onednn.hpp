#pragma once
// CPU GEMMs through oneDNN (issue #41; Debian's libdnnl 2.6, built with GNU OpenMP). Only cpu::sgemm (gemm.cpp),
// gemm_backend.cpp, the tests and the benchmarks include this header. In a build without oneDNN (TOPO_ONEDNN=OFF,
// or a clang build) every function but onednn_built() throws topo::Error: gemm_backend.cpp never picks oneDNN
// there.
//
// Threads: both calls run on as many threads as OpenMP gives the calling thread (omp_get_max_threads(), which
// num_threads() sets), and on one inside an OpenMP region, as OpenBLAS's OpenMP build does; oneDNN has no pool
// of its own in this build. cpu::sgemm calls them on one thread per slab, so the slab policy (and the results'
// dependence on the thread count) is the same as with OpenBLAS.
#include <cstdint>
#include <string>

namespace topo::cpu {

bool onednn_built();          // TOPO_WITH_ONEDNN
std::string onednn_version(); // "oneDNN 2.6.3 (avx512_core_bf16)": the library and the ISA it dispatches to
bool onednn_amx();            // oneDNN's ISA on this CPU includes AMX tiles (avx512_core_amx)

// Row-major fp32 c = alpha * op(a) @ op(b) + beta * c through dnnl_sgemm; op(a) [m, k], op(b) [k, n], lda/ldb/ldc
// the row strides as stored (the cblas_sgemm contract).
void onednn_sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                  const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                  std::int64_t ldc);

// The same with a and b rounded to bf16 (round to nearest even, as cpu::sgemm_bf16 does) and fp32 accumulation:
// a oneDNN matmul primitive bf16 x bf16 -> f32 (AMX tiles where the CPU has them, AVX512_BF16 otherwise), alpha
// as its output scale, beta as a sum post-op (beta == 0 does not read c). Both operands are converted into
// per-thread buffers first (one pass each). One primitive per thread, transposes, alpha and beta serves every
// shape (runtime dimensions), except inside a cpu::RepeatedShapes scope, where each shape gets its own (compiled
// once, cached per thread; gemm_onednn.cpp says why, with figures). Requires AVX512_BF16.
void onednn_sgemm_bf16(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                       const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                       std::int64_t ldc);

// The matmul alone on operands already in bf16 (the bits of each element, compact: a [m, k] row-major or, with
// trans_a, [k, m]; b [k, n] or [n, k]): what onednn_sgemm_bf16 runs after converting, and the bf16 peak's
// measurement (bench/machine.cpp), which times the matrix units without the conversion.
void onednn_gemm_bf16_bits(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                           const std::uint16_t* a, const std::uint16_t* b, float beta, float* c, std::int64_t ldc);

}  // namespace topo::cpu
