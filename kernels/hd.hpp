#pragma once
// TOPO_HD marks per-element / per-row math shared by the CPU and CUDA backends: compiled as
// __host__ __device__ by nvcc and as plain inline C++ elsewhere, so the CPU tests exercise it.
#if defined(__CUDACC__)
#define TOPO_HD __host__ __device__ __forceinline__
#else
#define TOPO_HD inline
#endif
