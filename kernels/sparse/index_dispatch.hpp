#pragma once
// TOPO_DISPATCH_INDEX(dtype, Id, body): runs `body` with Id = int32_t or int64_t to match a graph's index dtype.
// Only these two instantiations exist, which keeps nvcc's template work bounded.
#include <cstdint>

#include "kernels/dtype.hpp"
#include "kernels/error.hpp"

#define TOPO_DISPATCH_INDEX(dtype, Id, ...)                                             \
  do {                                                                                  \
    if ((dtype) == ::topo::DType::I32) {                                                \
      using Id = std::int32_t;                                                          \
      __VA_ARGS__;                                                                      \
    } else if ((dtype) == ::topo::DType::I64) {                                         \
      using Id = std::int64_t;                                                          \
      __VA_ARGS__;                                                                      \
    } else {                                                                            \
      ::topo::fail("graph index arrays must be int32 or int64, got {}", ::topo::dtype_name(dtype)); \
    }                                                                                   \
  } while (0)
