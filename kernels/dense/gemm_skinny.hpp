#pragma once
// Products with a narrow output (n <= kSkinnyMaxN columns) on the CPU: a graph layer's projection
// [N, 128] @ [128, 16] and its weight gradient [128, N] @ [N, 16]. A library GEMM packs the whole tall operand
// into its panel layout first; at these widths the packing cost as much as the product (OpenBLAS on Zen 3:
// 16% of a GCN epoch at 100k nodes against 11% in its kernel). These read it in place, once:
//  - rows (c = a @ op(b), a [m, k] not transposed): op(b) packed once into [k, n rounded up to the vector
//    width] floats (L1 at k = 128); blocks of rows, each row's n outputs held in registers over all of k. Rows
//    are independent, so any split over threads gives the same bits.
//  - tn (c = a^T @ b, a stored [k, m], b [k, n], k long): fixed blocks of kSkinnyBlockK rows of k each give a
//    partial [m, n] (rows of a read once, b's rows held in registers), summed over the blocks in order: the
//    same bits at any thread count.
// Accumulation: fp32 fused multiply-adds, k ascending per output element. AVX-512 vectors of 16 outputs where
// the build targets them, AVX2 + FMA vectors of 8 otherwise, a plain loop of the same order elsewhere: the same
// bits from all three.
#include <cstdint>

namespace topo::cpu {

inline constexpr std::int64_t kSkinnyMaxN = 32;
inline constexpr std::int64_t kSkinnyBlockK = 512;

// Whether the rows kernel takes op(a) [m, k] @ op(b) [k, n]: a not transposed, n <= kSkinnyMaxN, m >= 256
// (tall), k <= 1024 (op(b) packed stays in L1/L2).
bool skinny_rows_applies(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k);
// Whether the tn kernel takes it: a transposed, b not, n <= kSkinnyMaxN, m <= 1024, k >= 16 * max(m, n) and
// k >= 2 * kSkinnyBlockK (a weight gradient over many rows).
bool skinny_tn_applies(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k);

// c = alpha * a @ op(b) + beta * c (beta == 0: c is not read). Row-major; lda, ldb, ldc the row strides.
void skinny_gemm_rows(bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                      std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);
// c = alpha * a^T @ b + beta * c with a stored [k, m] (lda >= m) and b [k, n] (ldb >= n).
void skinny_gemm_tn(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
                    const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);

}  // namespace topo::cpu
