#pragma once
// TOPO_ON_DEVICE(device, cpu_call, cuda_call): runs cpu_call on the CPU and cuda_call on a CUDA device.
// In a CPU-only build the CUDA branch is compiled out and a CUDA tensor is a topo::Error.
#include "kernels/device.hpp"
#include "kernels/error.hpp"

#if TOPO_WITH_CUDA
#define TOPO_ON_DEVICE(device, cpu_call, cuda_call) \
  do {                                              \
    if ((device).is_cuda()) {                       \
      cuda_call;                                    \
    } else {                                        \
      cpu_call;                                     \
    }                                               \
  } while (0)
#else
#define TOPO_ON_DEVICE(device, cpu_call, cuda_call)                                                  \
  do {                                                                                               \
    if ((device).is_cuda()) ::topo::fail("{} needs the CUDA backend, which this build lacks", (device).str()); \
    cpu_call;                                                                                        \
  } while (0)
#endif
