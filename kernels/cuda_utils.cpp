// Host side of cuda_utils.cuh: turns CUDA failures into topo::Error (compiled in every build; the
// declaration is only reachable from .cu files, which exist only when CUDA is on).
#include "kernels/error.hpp"

namespace topo::cuda {
[[noreturn]] void fail(const char* what, const char* message) { topo::fail("CUDA error in {}: {}", what, message); }
}  // namespace topo::cuda
