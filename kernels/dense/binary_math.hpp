#pragma once
// Elementwise binary math and the broadcast plan shared by the CPU and CUDA backends.
// Plain C++ (no fmt, no Tensor) so nvcc sees it unchanged.
#include <cstdint>

#include "kernels/hd.hpp"

namespace topo {

enum class BinaryOp : std::uint8_t { Add, Sub, Mul, Div };

TOPO_HD float binary_apply(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
  }
  return 0.f;
}

// A broadcast between a, b and their result, with adjacent dims merged when both operands treat them alike
// (both present, or the same one broadcast): equal shapes collapse to one dim, a row over [R, D] to two.
// strides are in elements of each operand, 0 along a broadcast dim. The last dim is the fastest.
inline constexpr int kMaxBroadcastDims = 8;
struct BroadcastPlan {
  int ndim = 1;
  std::int64_t shape[kMaxBroadcastDims] = {1};
  std::int64_t stride_a[kMaxBroadcastDims] = {0};
  std::int64_t stride_b[kMaxBroadcastDims] = {0};
};

// Offsets into a and b of result row `row` (a row = one index of every dim but the last).
TOPO_HD void broadcast_row_offsets(const BroadcastPlan& plan, std::int64_t row, std::int64_t& off_a,
                                   std::int64_t& off_b) {
  off_a = 0;
  off_b = 0;
  for (int d = plan.ndim - 2; d >= 0; --d) {
    const std::int64_t i = row % plan.shape[d];
    row /= plan.shape[d];
    off_a += i * plan.stride_a[d];
    off_b += i * plan.stride_b[d];
  }
}

// Elementwise scalar math for axpy: dst + alpha * src.
TOPO_HD float axpy_apply(float dst, float alpha, float src) { return dst + alpha * src; }

namespace cuda {
// Device launchers (binary_cuda.cu); pointers are device memory.
// c = a op b under `plan`; n = number of result elements.
void binary(BinaryOp op, const BroadcastPlan& plan, const float* a, const float* b, float* c, std::int64_t n);
// y = x op c for a host scalar c.
void binary_scalar(BinaryOp op, const float* x, float c, float* y, std::int64_t n);
void axpy(float* dst, float alpha, const float* src, std::int64_t n);
void fill(float* dst, float value, std::int64_t n);
}  // namespace cuda

}  // namespace topo
