// GEMM on CUDA via cuBLAS. cuBLAS is column-major: a row-major C = op(A) op(B) is the column-major
// C^T = op(B)^T op(A)^T, so the operands are passed swapped with m and n exchanged, and no copy is made.
// One cuBLAS handle per device, created on first use and kept for the life of the process.
//
// cuBLAS is opened (dlopen) on the first GEMM on a CUDA device, not linked: a linked libcublas maps libcublasLt,
// whose load-time set-up leaves ~150 MB resident in every process that starts, on the CPU too (CUDA 13:
// a program that only links -lcublas has a 155 MB VmHWM against 1.6 MB; topo-train --help 230 MB). The CPU
// runs' peak memory is what users compare with DGL's (issue #36), so they do not pay for a GPU library.
#include <cublas_v2.h>
#include <dlfcn.h>

#include <climits>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/cuda_utils.cuh"
#include "kernels/dense/gemm_math.hpp"

#define TOPO_STRINGIFY_(x) #x
#define TOPO_STRINGIFY(x) TOPO_STRINGIFY_(x)

namespace topo::cuda {
namespace {

// The entry points this file calls, resolved from the library of the toolkit it was compiled against
// (libcublas.so.<CUBLAS_VER_MAJOR>): by the loader's search path first (LD_LIBRARY_PATH, the executable's
// RUNPATH), then in the toolkit's library directory as CMake found it.
struct CublasApi {
  std::string path;
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasSgemmStridedBatched) sgemm_strided_batched = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

CublasApi open_cublas() {
  const std::string soname = "libcublas.so." TOPO_STRINGIFY(CUBLAS_VER_MAJOR);
  CublasApi api;
  void* library = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  api.path = soname;
#ifdef TOPO_CUDA_LIBRARY_DIR
  if (!library) {
    api.path = std::string(TOPO_CUDA_LIBRARY_DIR) + "/" + soname;
    library = dlopen(api.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
#endif
  if (!library) {
    const char* why = dlerror();
    fail("gemm: opening cuBLAS", (soname + " (" + (why ? why : "not found") + ")").c_str());
  }
  auto resolve = [&](auto& entry, const char* name) {
    entry = reinterpret_cast<std::remove_reference_t<decltype(entry)>>(dlsym(library, name));
    if (!entry) fail("gemm: opening cuBLAS", (api.path + " has no " + name).c_str());
  };
  resolve(api.create, "cublasCreate_v2");
  resolve(api.sgemm, "cublasSgemm_v2");
  resolve(api.sgemm_strided_batched, "cublasSgemmStridedBatched");
  resolve(api.status_string, "cublasGetStatusString");
  return api;  // the library stays open for the life of the process
}

// Opened once; a failed open throws and is tried again by the next call.
const CublasApi& cublas() {
  static const CublasApi api = open_cublas();
  return api;
}

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) fail(what, cublas().status_string(status));
}

cublasHandle_t handle_for_current_device() {
  static std::mutex mutex;
  static std::vector<cublasHandle_t> handles;
  int device = 0;
  check(cudaGetDevice(&device), "gemm: cudaGetDevice");
  std::lock_guard<std::mutex> lock(mutex);
  if (handles.size() <= static_cast<std::size_t>(device)) handles.resize(device + 1, nullptr);
  if (!handles[device]) check_cublas(cublas().create(&handles[device]), "gemm: cublasCreate");
  return handles[device];
}

int as_int(std::int64_t v, const char* what) {
  if (v < 0 || v > INT_MAX) fail("gemm", what);
  return static_cast<int>(v);
}

}  // namespace

std::string load_cublas() { return cublas().path; }

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
    check_cublas(cublas().sgemm(handle, op_b, op_a, in, im, ik, &alpha, b, ildb, a, ilda, &beta, c, ildc),
                 "cublasSgemm");
  } else {
    check_cublas(cublas().sgemm_strided_batched(handle, op_b, op_a, in, im, ik, &alpha, b, ildb, stride_b, a, ilda,
                                           stride_a, &beta, c, ildc, stride_c,
                                           as_int(batch, "batch exceeds cuBLAS's int range")),
                 "cublasSgemmStridedBatched");
  }
}

}  // namespace topo::cuda
