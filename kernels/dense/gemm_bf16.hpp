#pragma once
// bf16 GEMM on fp32 operands (issue #20): the inputs are rounded to bf16 while they are packed, the products
// are accumulated in fp32 by AVX512_BF16's vdpbf16ps, and c stays fp32. Only cpu::sgemm (gemm.cpp), the tests
// and the benchmarks include this header; it is CPU-only and stays out of every CUDA translation unit.
#include <cstdint>

namespace topo::cpu {

// True where the CPU reports AVX512_BF16 (and AVX512F/BW/VL): the only CPUs sgemm_bf16 may run on. The
// kernel is compiled with function-level target attributes, so every build has it (TOPO_NATIVE=OFF too)
// and this runtime check decides.
bool bf16_gemm_cpu_supported();

// Row-major c = alpha * op(a) @ op(b) + beta * c, shapes and strides as cpu::sgemm: op(a) [m, k], op(b) [k, n],
// lda/ldb/ldc the row strides of a, b, c as stored. a and b are rounded to bf16 (round to nearest even);
// products and sums are fp32. beta == 0 never reads c (NaN in c does not propagate). One thread: the
// caller (cpu::sgemm) cuts the product into slabs across threads. Requires bf16_gemm_cpu_supported().
void sgemm_bf16(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                std::int64_t ldc);

// The readable truth the tests compare sgemm_bf16 against (llm.c style): each element of a and b rounded to
// bf16, then a plain fp32 dot product over k in order, c = alpha * dot + beta * c (beta == 0: c not read).
void sgemm_bf16_reference(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                          std::int64_t ldc);

// fp32 -> bf16 -> fp32, round to nearest even (NaN stays NaN): what the kernel does to every input element.
float round_to_bf16(float x);

}  // namespace topo::cpu
