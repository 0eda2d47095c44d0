#pragma once
// Naive CPU references of the dense kernels, kept beside them as llm.c keeps its reference forwards: plain
// loops over row-major host arrays, written from each op's definition alone (no tiling, no threads, no SIMD,
// none of the kernels' shared *_math.hpp row code except the op enums), accumulating in double. Tests compare
// every backend against them (tests/kernels/test_op_table.cpp walks tests/support/op_table.hpp); nothing in
// the library calls them.
#include <cstdint>
#include <vector>

#include "kernels/dense/binary_math.hpp"
#include "kernels/dense/reduce_math.hpp"
#include "kernels/dense/unary_math.hpp"
#include "kernels/tensor.hpp"

namespace topo::reference {

// c = alpha * op(a) @ op(b) + beta * c0 for one [m, n] item; a, b, c0 row-major as stored (a [m, k] or, with
// ta, [k, m]; b [k, n] or, with tb, [n, k]); c0 may be null (beta ignored).
std::vector<float> gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                        const float* b, float beta, const float* c0);

// The flat index into an operand shaped `s` that element `flat` of the broadcast result shaped `out` reads:
// numpy's rule written out (align from the right; a size-1 dim always reads index 0).
std::int64_t broadcast_source_index(const Shape& out, const Shape& s, std::int64_t flat);
// The broadcast result shape of a and b (each dim equal or 1; the caller's shapes must broadcast).
Shape broadcast_result_shape(const Shape& a, const Shape& b);
float binary_op(BinaryOp op, float a, float b);
// a (shaped sa) op b (shaped sb), numpy-broadcast -> broadcast_result_shape(sa, sb).
std::vector<float> binary(BinaryOp op, const std::vector<float>& a, const Shape& sa, const std::vector<float>& b,
                          const Shape& sb);

// f(x) from the textbook formula in double (Gelu: the tanh approximation, as GPT-2 and llm.c use).
float unary_op(UnaryOp op, float x, float alpha);
std::vector<float> unary(UnaryOp op, const std::vector<float>& x, float alpha);

// Over the last dim of x [rows, cols]: exp(x - max) / sum, or its log (x - max - log sum).
std::vector<float> softmax(const std::vector<float>& x, std::int64_t cols, bool log);
// (x - mean) / sqrt(var + eps) * gamma + beta over the last dim (biased variance); gamma, beta [cols] or null.
std::vector<float> layer_norm(const std::vector<float>& x, std::int64_t cols, const float* gamma, const float* beta,
                              float eps);
// x viewed as [outer, len, inner] reduced over len -> [outer, inner] (Max: len >= 1).
std::vector<float> reduce(ReduceOp op, const std::vector<float>& x, std::int64_t outer, std::int64_t len,
                          std::int64_t inner);

// Row gather: out[i, :] = x[ids[i], :] for x [rows, cols]. Row scatter-add: out [rows, cols] = 0, then
// out[ids[i], :] += src[i, :] (the gather's backward). An id of -1 (kNoRow) reads/writes nothing.
std::vector<float> gather_rows(const std::vector<float>& x, std::int64_t cols, const std::vector<std::int64_t>& ids);
std::vector<float> scatter_add_rows(std::int64_t rows, std::int64_t cols, const std::vector<std::int64_t>& ids,
                                    const std::vector<float>& src);

// Concatenation of 3-D tensors (host) along `dim` by explicit coordinates; out_shape receives the result's shape.
std::vector<float> concat(const std::vector<Tensor>& xs, int dim, Shape& out_shape);

// Mean over rows with t != ignore of log(sum_j exp(x_j)) - x_t, logits x [n, c]; 0 when every row is ignored.
double cross_entropy(const std::vector<float>& x, const std::vector<std::int64_t>& t, std::int64_t n, std::int64_t c,
                     std::int64_t ignore);
// mean((p - t)^2) over every element; 0 for empty inputs.
double mse(const std::vector<float>& p, const std::vector<float>& t);

// Dense attention of packed sequences, straight from softmax(scale q k^T) v per sequence and head:
// q, k [rows, heads, dk], v [rows, heads, dv] with rows = sum(lengths) -> out [rows, heads, dv], in double.
// radii as the fused kernel takes them: empty (full), [B] per sequence or [B * heads] per (sequence, head);
// query i of a sequence sees key j of the same sequence when |i - j| <= radius.
struct DenseAttentionProblem {
  std::vector<std::int64_t> lengths;
  std::int64_t heads = 1, dk = 1, dv = 1;
  float scale = 1.f;
  std::vector<std::int64_t> radii = {};
  bool sees(std::size_t b, std::int64_t h, std::int64_t i, std::int64_t j) const;
  std::int64_t rows() const;
};
std::vector<double> dense_attention(const DenseAttentionProblem& p, const std::vector<double>& q,
                                    const std::vector<double>& k, const std::vector<double>& v);

}  // namespace topo::reference
