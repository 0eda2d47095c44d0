// Edge softmax on CUDA. Parallel strategy: one thread per (row, column); heads are few and rows short
// (ring + relay: 5 in-edges per satellite), so a thread walking its row three times beats a warp-wide
// reduction. Math from edge_softmax_math.hpp.
#include "kernels/cuda_utils.cuh"
#include "kernels/sparse/edge_softmax_math.hpp"

namespace topo::cuda {
namespace {

constexpr int kThreads = 256;

template <class Id>
__global__ void forward_kernel(const Id* indptr, const Id* eids, std::int64_t rows, const float* x, float* y,
                               std::int64_t cols) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < rows * cols;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t r = i / cols, c = i % cols;
    edge_softmax_group(eids, indptr[r], indptr[r + 1], x, y, cols, c);
  }
}

template <class Id>
__global__ void backward_kernel(const Id* indptr, const Id* eids, std::int64_t rows, const float* y, const float* dy,
                                float* dx, std::int64_t cols) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < rows * cols;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t r = i / cols, c = i % cols;
    edge_softmax_group_backward(eids, indptr[r], indptr[r + 1], y, dy, dx, cols, c);
  }
}

}  // namespace

void edge_softmax(const std::int32_t* indptr, const std::int32_t* eids, std::int64_t rows, const float* x, float* y,
                  std::int64_t cols) {
  if (rows * cols == 0) return;
  forward_kernel<<<blocks_for(rows * cols, kThreads), kThreads>>>(indptr, eids, rows, x, y, cols);
  check_launch("edge_softmax");
}
void edge_softmax(const std::int64_t* indptr, const std::int64_t* eids, std::int64_t rows, const float* x, float* y,
                  std::int64_t cols) {
  if (rows * cols == 0) return;
  forward_kernel<<<blocks_for(rows * cols, kThreads), kThreads>>>(indptr, eids, rows, x, y, cols);
  check_launch("edge_softmax");
}
void edge_softmax_backward(const std::int32_t* indptr, const std::int32_t* eids, std::int64_t rows, const float* y,
                           const float* dy, float* dx, std::int64_t cols) {
  if (rows * cols == 0) return;
  backward_kernel<<<blocks_for(rows * cols, kThreads), kThreads>>>(indptr, eids, rows, y, dy, dx, cols);
  check_launch("edge_softmax_backward");
}
void edge_softmax_backward(const std::int64_t* indptr, const std::int64_t* eids, std::int64_t rows, const float* y,
                           const float* dy, float* dx, std::int64_t cols) {
  if (rows * cols == 0) return;
  backward_kernel<<<blocks_for(rows * cols, kThreads), kThreads>>>(indptr, eids, rows, y, dy, dx, cols);
  check_launch("edge_softmax_backward");
}

}  // namespace topo::cuda
