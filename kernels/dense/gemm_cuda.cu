// GEMM on CUDA via cuBLAS. cuBLAS is column-major: a row-major C = op(A) op(B) is the column-major
// C^T = op(B)^T op(A)^T, so the operands are passed swapped with m and n exchanged, and no copy is made.
// One cuBLAS handle per device, created on first use and kept for the life of the process.
#include <cublas_v2.h>

#include <climits>
#include <mutex>
#include <vector>

#include "kernels/cuda_utils.cuh"
#include "kernels/dense/gemm_math.hpp"

namespace topo::cuda {
namespace {

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) fail(what, cublasGetStatusString(status));
}

cublasHandle_t handle_for_current_device() {
  static std::mutex mutex;
  static std::vector<cublasHandle_t> handles;
  int device = 0;
  check(cudaGetDevice(&device), "gemm: cudaGetDevice");
  std::lock_guard<std::mutex> lock(mutex);
  if (handles.size() <= static_cast<std::size_t>(device)) handles.resize(device + 1, nullptr);
  if (!handles[device]) check_cublas(cublasCreate(&handles[device]), "gemm: cublasCreate");
  return handles[device];
}

int as_int(std::int64_t v, const char* what) {
  if (v < 0 || v > INT_MAX) fail("gemm", what);
  return static_cast<int>(v);
}

}  // namespace

void gemm(bool trans_a, bool trans_b, std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, std::int64_t stride_a, const float* b, std::int64_t ldb,
          std::int64_t stride_b, float beta, float* c, std::int64_t ldc, std::int64_t stride_c) {
  if (batch == 0 || m == 0 || n == 0) return;
  cublasHandle_t handle = handle_for_current_device();
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int im = as_int(m, "m exceeds cuBLAS's int range"), in = as_int(n, "n exceeds cuBLAS's int range");
  const int ik = as_int(k, "k exceeds cuBLAS's int range");
  const int ilda = as_int(lda, "lda exceeds cuBLAS's int range"), ildb = as_int(ldb, "ldb exceeds cuBLAS's int range");
  const int ildc = as_int(ldc, "ldc exceeds cuBLAS's int range");
  if (batch == 1) {
    check_cublas(cublasSgemm(handle, op_b, op_a, in, im, ik, &alpha, b, ildb, a, ilda, &beta, c, ildc),
                 "cublasSgemm");
  } else {
    check_cublas(cublasSgemmStridedBatched(handle, op_b, op_a, in, im, ik, &alpha, b, ildb, stride_b, a, ilda,
                                           stride_a, &beta, c, ildc, stride_c,
                                           as_int(batch, "batch exceeds cuBLAS's int range")),
                 "cublasSgemmStridedBatched");
  }
}

}  // namespace topo::cuda
