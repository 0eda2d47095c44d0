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
// Raw row-major cblas_sgemm on host pointers: c = alpha * op(a) @ op(b) + beta * c, op(a) [m, k], op(b) [k, n],
// lda/ldb/ldc the row strides. Inside an OpenMP region OpenBLAS runs it single-threaded (the fused kernels'
// per-tile products); outside, it threads above M*N*K = 2^18.
void sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
           std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);
}  // namespace cpu

}  // namespace topo
