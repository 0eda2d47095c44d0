#pragma once
// Dense matrix products: OpenBLAS cblas_sgemm on the CPU, cuBLAS on CUDA (row-major throughout).
#include "kernels/tensor.hpp"

namespace topo {

// c = alpha * op(a) @ op(b) + beta * c, op = transpose when the flag is set.
// 2-D: a [M,K] (or [K,M] transposed), b [K,N] (or [N,K]), c [M,N].
// Batched: a [B,M,K], b [B,K,N] -> c [B,M,N]; a 3-D `a` with a 2-D `b` shares b across the batch.
void gemm(bool trans_a, bool trans_b, float alpha, const Tensor& a, const Tensor& b, float beta, Tensor& c);

// A new tensor op(a) @ op(b), shapes as for gemm. Errors name both shapes.
Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a = false, bool trans_b = false);

namespace cpu {
// GEMMs with M*N*K at or below this run on one thread outside OpenMP regions. Threading one costs a fork and
// a join, and with topograph's short spin (GOMP_SPINCOUNT=1000, kernels/threads.hpp) the second thread is
// asleep and must be woken: tens of microseconds, as long as a 320 x 100 x 100 product takes on one core.
// TOPO_GEMM_SINGLE_THREAD_MNK overrides it (0: OpenBLAS's own rule alone).
inline constexpr std::int64_t kSingleThreadGemmMnk = std::int64_t{1} << 23;
std::int64_t single_thread_gemm_mnk();  // kSingleThreadGemmMnk or the environment's value (read once)

// Raw row-major cblas_sgemm on host pointers: c = alpha * op(a) @ op(b) + beta * c, op(a) [m, k], op(b) [k, n],
// lda/ldb/ldc the row strides. Inside an OpenMP region OpenBLAS runs it single-threaded (the fused kernels'
// per-tile products); outside, one thread up to single_thread_gemm_mnk(), OpenBLAS's threads above.
void sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
           std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);
}  // namespace cpu

}  // namespace topo
