#pragma once
// Helpers for .cu files. Kept free of fmt and of Tensor so nvcc sees only plain C++ and the CUDA runtime.
#include <cuda_runtime.h>

#include <cstdint>

namespace topo::cuda {

// Throws topo::Error("CUDA error in <what>: <message>"). Defined in cuda_utils.cpp.
[[noreturn]] void fail(const char* what, const char* message);

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) fail(what, cudaGetErrorString(status));
}
// After a kernel launch: reports launch errors (bad configuration) at the op that caused them.
inline void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

inline unsigned blocks_for(std::int64_t n, int threads) {
  const std::int64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b < 65535 * 32 ? (b < 1 ? 1 : b) : 65535 * 32);
}

}  // namespace topo::cuda
