#pragma once
// Dense matrix products: OpenBLAS, oneDNN or the own bf16 kernel on the CPU (kernels/dense/gemm_backend.hpp),
// cuBLAS on CUDA (row-major throughout).
#include <string>
#include <string_view>

#include "kernels/tensor.hpp"

namespace topo {

// The process-wide precision of CPU GEMMs (`--precision`, issue #20). bf16: every CPU product (gemm, matmul,
// cpu::sgemm, hence the fused attention kernels' tiles too, as PyTorch's autocast runs attention's matmuls in
// bf16) rounds its two inputs to bf16 and accumulates in fp32 (oneDNN or kernels/dense/gemm_bf16.hpp); c, the weights,
// the gradients, the optimizer, LayerNorm, softmax and every reduction stay fp32. CUDA GEMMs stay fp32.
enum class Precision { fp32, bf16 };
const char* precision_name(Precision p);                // "fp32" / "bf16"
Precision parse_precision(std::string_view name);       // topo::Error naming any other value
bool bf16_gemm_supported();                             // the CPU has AVX512_BF16 (and AVX512F/BW/VL)
void set_gemm_precision(Precision p);                   // bf16 on a CPU without it: topo::Error
Precision gemm_precision();
// Sets the process's precision from a requested name (`--precision`): "bf16" on a CPU without AVX512_BF16, or
// with CUDA as the run's device (its GEMMs are cuBLAS fp32), falls back to fp32. Returns the precision in use
// and the log line that says what was asked and what runs. A name other than fp32 / bf16 is a topo::Error.
struct PrecisionChoice {
  Precision used = Precision::fp32;
  std::string line;
};
PrecisionChoice configure_gemm_precision(std::string_view requested, bool cuda_device = false);
// Sets a precision for a scope and restores the previous one (tests, benchmarks).
class GemmPrecisionGuard {
 public:
  explicit GemmPrecisionGuard(Precision p) : previous_(gemm_precision()) { set_gemm_precision(p); }
  ~GemmPrecisionGuard() { set_gemm_precision(previous_); }
  GemmPrecisionGuard(const GemmPrecisionGuard&) = delete;
  GemmPrecisionGuard& operator=(const GemmPrecisionGuard&) = delete;

 private:
  Precision previous_;
};

// c = alpha * op(a) @ op(b) + beta * c, op = transpose when the flag is set.
// 2-D: a [M,K] (or [K,M] transposed), b [K,N] (or [N,K]), c [M,N].
// Batched: a [B,M,K], b [B,K,N] -> c [B,M,N]; a 3-D `a` with a 2-D `b` shares b across the batch.
void gemm(bool trans_a, bool trans_b, float alpha, const Tensor& a, const Tensor& b, float beta, Tensor& c);

// A new tensor op(a) @ op(b), shapes as for gemm. Errors name both shapes.
Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a = false, bool trans_b = false);

// The affine map of a linear layer: x [N, in] @ weight [out, in]^T + bias [out] -> [N, out]. The bias rows are
// written first and the product accumulated onto them (one GEMM with beta = 1), instead of a GEMM that
// clears its output and an add that reads it back and writes a second tensor: one pass over the output
// instead of three, per projection of every model.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);
// The same into out [N, out] (which may be a row slice of a larger tensor: nn::linear_rows); bias may be
// undefined (out = x @ weight^T).
void linear_into(const Tensor& x, const Tensor& weight, const Tensor& bias, Tensor& out);

namespace cpu {
// GEMMs with M*N*K at or below this run on one thread outside OpenMP regions: a parallel region costs a fork
// and a join, and with topograph's short spin (GOMP_SPINCOUNT=1000, kernels/threads.hpp) an idle thread is
// asleep and must be woken — several microseconds, as long as a 64 x 100 x 100 product takes on one core
// (~10 us at ~100 GFLOP/s). TOPO_GEMM_SINGLE_THREAD_MNK overrides it.
inline constexpr std::int64_t kSingleThreadGemmMnk = std::int64_t{1} << 20;
std::int64_t single_thread_gemm_mnk();  // kSingleThreadGemmMnk or the environment's value (read once)
// Above it, the product is cut along the longer of M and N into gemm_chunks(m, n, k) chunks, a number fixed by
// the shape and the machine, never by the thread count, so that every row's sum is the same at any thread count
// whatever the backend's kernel does at the edge of a call (OpenBLAS's Zen 3 kernels round the last rows of a
// call apart). Each thread runs whole chunks, one single-threaded sgemm each (OpenBLAS's OpenMP build runs
// single-threaded inside a region). At the models' shapes (e.g. 800 x 100 x 100, 2048 x 300 x 300) one slab per
// thread ran 1.4-2.0x one thread on 2 cores where OpenBLAS's own threading of the same call ran 0.5-1.9x
// (docs/performance/threads.md); six chunks instead cost one thread 0-6% there and two threads nothing
// measurable (Zen 3). Every chunk is at least kMinSlabMnk and kMinChunkLen long, so a product near the threshold
// uses fewer threads than there are. TOPO_GEMM_SPLIT=0 hands the calls above the threshold to OpenBLAS's
// threading instead (for comparisons).
inline constexpr std::int64_t kMinSlabMnk = std::int64_t{1} << 19;
inline constexpr std::int64_t kMinChunkLen = 16;
// At most max(6, the processors OpenMP sees) chunks: 1, 2, 3 and 6 threads split six evenly.
std::int64_t gemm_chunks(std::int64_t m, std::int64_t n, std::int64_t k);
// A product with K at least this many times max(M, N) (a weight gradient over a batch's rows) is cut along K
// instead into split_k_parts(m, n, k) slabs (at least kMinSlabMnk and kMinSplitKLen each, at most max(6, the
// processors)), fixed like the chunks by the shape and the machine alone; each slab's partial [M, N] is added
// into c in slab order (gemm.cpp: split_k), so these too are the same bits at any thread count.
inline constexpr std::int64_t kSplitKRatio = 16;
inline constexpr std::int64_t kMinSplitKLen = 64;
std::int64_t split_k_parts(std::int64_t m, std::int64_t n, std::int64_t k);
bool split_gemm();  // false when TOPO_GEMM_SPLIT=0 (read once)
// fp32 products with a narrow output go to the own kernels of gemm_skinny.hpp (whatever the backend) unless
// TOPO_GEMM_SKINNY=0 (read once; for comparisons).
bool skinny_gemm();

// Marks the calling thread's products, while it lives, as a few shapes repeated many times (the fused
// attention's tiles): a backend that compiles kernels per shape (oneDNN's bf16 matmul, gemm_onednn.cpp) keeps
// one per shape inside the scope and runs one kernel for every shape outside it, where shapes change with each
// batch. A thread's own flag: set it inside a parallel region's body, not around the region.
class RepeatedShapes {
 public:
  RepeatedShapes();
  ~RepeatedShapes();
  RepeatedShapes(const RepeatedShapes&) = delete;
  RepeatedShapes& operator=(const RepeatedShapes&) = delete;

 private:
  bool was_;
};
bool repeated_shapes();  // whether the calling thread is inside a RepeatedShapes scope

// Raw row-major cblas_sgemm on host pointers: c = alpha * op(a) @ op(b) + beta * c, op(a) [m, k], op(b) [k, n],
// lda/ldb/ldc the row strides. Inside an OpenMP region it runs single-threaded (the fused kernels' per-tile
// products); outside, one thread up to single_thread_gemm_mnk(), chunks over the threads above (see above).
// Each of those calls runs the backend of the precision (gemm_backend.hpp: OpenBLAS, oneDNN or the own bf16
// kernel; same policy; TOPO_GEMM_SPLIT=0 hands the big calls to OpenBLAS's or oneDNN's own threading and does not
// apply to the own kernel, which has none).
void sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
           std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);
}  // namespace cpu

}  // namespace topo
