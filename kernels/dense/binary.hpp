#pragma once
// Elementwise binary ops with numpy broadcasting (shapes aligned from the right; each dim equal or 1).
// The common cases have fast paths: equal shapes, a row vector over [..., D], and a scalar.
#include "kernels/dense/binary_math.hpp"
#include "kernels/tensor.hpp"

namespace topo {

// BinaryOp lives in binary_math.hpp (shared with the CUDA kernels).

// The broadcast shape of a and b; throws topo::Error naming both shapes when they do not broadcast.
Shape broadcast_shape(const Shape& a, const Shape& b);

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
inline Tensor add(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Add, a, b); }
inline Tensor sub(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Sub, a, b); }
inline Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); }
inline Tensor div(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Div, a, b); }

// x + c and x * c for a scalar c.
Tensor add_scalar(const Tensor& x, float c);
Tensor mul_scalar(const Tensor& x, float c);

// Sums `grad` (shaped like a broadcast result) down to `shape`: the backward of broadcasting.
Tensor sum_to_shape(const Tensor& grad, const Shape& shape);

// In place: dst += alpha * src (same shape, same device). Gradient accumulation and optimizer updates use it.
void axpy_(Tensor& dst, float alpha, const Tensor& src);
// In place: every element set to `value`.
void fill_(Tensor& dst, float value);

}  // namespace topo
