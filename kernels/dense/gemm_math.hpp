#pragma once
// GEMM launchers for CUDA (gemm_cuda.cu, cuBLAS). Row-major operands; the CPU side is OpenBLAS (gemm.cpp).
// There is no per-element math to share here: the libraries do the arithmetic.
#include <cstdint>
#include <string>

namespace topo::cuda {

// For i in [0, batch): c_i = alpha * op(a_i) @ op(b_i) + beta * c_i, row-major, op(a_i) [m, k], op(b_i) [k, n],
// a_i = a + i * stride_a (stride 0 shares an operand); lda/ldb/ldc are row-major leading dims. Device memory.
void gemm(bool trans_a, bool trans_b, std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, std::int64_t stride_a, const float* b, std::int64_t ldb,
          std::int64_t stride_b, float beta, float* c, std::int64_t ldc, std::int64_t stride_c);

// Opens cuBLAS now if no GEMM has (gemm does on its first call) and returns the path it was opened by; throws
// topo::Error naming the library when it cannot be opened or lacks an entry point. Needs no device.
std::string load_cublas();

}  // namespace topo::cuda
