#pragma once
// Differentiable ops on Vars: each runs a kernel from kernels/dense and records its backward on the tape.
// Shapes follow the kernels (kernels/dense/*.hpp); errors name the offending shapes.
#include <cstdint>
#include <vector>

#include "kernels/dense/scale_bias_act_math.hpp"
#include "nn/autograd.hpp"
#include "nn/var.hpp"

namespace topo::nn {

// ---- linear algebra (ops_matmul.cpp)
// op(a) @ op(b). 2-D: [M,K] @ [K,N]; batched: [B,M,K] @ [B,K,N], or [B,M,K] @ [K,N] sharing b.
Var matmul(const Var& a, const Var& b, bool trans_a = false, bool trans_b = false);
// x [N, in] @ weight [out, in]^T + bias [out] -> [N, out] in one GEMM onto the bias rows (kernels' linear_into;
// bias may be undefined); the gradients of matmul and add. linear_rows with one part.
Var linear(const Var& x, const Var& weight, const Var& bias);
// linear(concat(xs, 0), weight, bias) without the concat: each part's rows projected into its row slice of
// one [sum of rows, out] output (a block's sources of several node types, one GEMM each); the backward
// reads the output gradient's slices in place. bias may be undefined.
Var linear_rows(const std::vector<Var>& xs, const Var& weight, const Var& bias);
// Fused dense self-attention over packed sequences (kernels/dense/flash_attention.hpp): q, k [rows, H, dk],
// v [rows, H, dv], sequence b owns `lengths[b]` consecutive rows and attends within them -> [rows, H, dv].
// Keeps only the row log-sum-exp for the backward (scores recomputed there), never an [L, L] tensor.
// With radii, banded (windowed) attention: query i sees the keys |i - j| <= radius of its sequence; radii are
// [B] (per sequence) or [B * H] (per sequence and head, e.g. one band per head group), empty = full.
Var flash_attention(const Var& q, const Var& k, const Var& v, const std::vector<std::int64_t>& lengths, float scale,
                    const std::vector<std::int64_t>& radii = {});
// The same with q, k, v interleaved in one Var qkv [rows, 3, H, dh] (one projection's output): read in place,
// and its gradient comes back in the same layout.
Var flash_attention_packed(const Var& qkv, const std::vector<std::int64_t>& lengths, float scale,
                           const std::vector<std::int64_t>& radii = {});

// ---- elementwise with broadcasting (ops_binary.cpp); backward sums the gradient back to each shape
Var add(const Var& a, const Var& b);
Var sub(const Var& a, const Var& b);
Var mul(const Var& a, const Var& b);
Var div(const Var& a, const Var& b);
Var add_scalar(const Var& x, float c);

Var operator+(const Var& a, const Var& b);
Var operator-(const Var& a, const Var& b);
Var operator*(const Var& a, const Var& b);
Var operator/(const Var& a, const Var& b);
Var operator+(const Var& a, float c);
Var operator+(float c, const Var& a);
Var operator-(const Var& a, float c);
Var operator-(float c, const Var& a);
Var operator*(const Var& a, float c);
Var operator*(float c, const Var& a);
Var operator/(const Var& a, float c);
Var operator/(float c, const Var& a);
Var operator-(const Var& a);

// ---- elementwise unary (ops_unary.cpp)
Var mul_scalar(const Var& x, float c);
Var neg(const Var& x);
Var relu(const Var& x);
Var leaky_relu(const Var& x, float slope = 0.01f);
Var gelu(const Var& x);  // tanh approximation
Var exp(const Var& x);
Var log(const Var& x);
Var tanh(const Var& x);
Var sigmoid(const Var& x);
Var elu(const Var& x, float alpha = 1.f);  // x > 0 ? x : alpha (e^x - 1), alpha > 0 (GAT's hidden activation)
// act(row_scale * x + bias) in one op (topo::scale_bias_act): x [N, ...]; row_scale: N elements, a constant
// (no gradient), or undefined; bias: numel / N elements or undefined. Backward keeps only the output (and the
// scale): the separate mul, add and activation would keep x and their intermediates.
Var scale_bias_act(const Var& x, const Tensor& row_scale, const Var& bias, EpilogueAct act, float slope = 0.01f);
// Zero-copy view with a new shape (one dim may be -1); the gradient is reshaped back.
Var reshape(const Var& x, const Shape& shape);

// ---- reductions and normalisation (ops_reduce.cpp); dim may be negative
Var sum(const Var& x, int dim, bool keepdim = false);
Var mean(const Var& x, int dim, bool keepdim = false);
// Max along dim; the gradient goes to the (first) arg-max of each slice.
Var max(const Var& x, int dim, bool keepdim = false);
Var sum_all(const Var& x);   // 0-d
Var mean_all(const Var& x);  // 0-d
// Along the last dimension.
Var softmax(const Var& x);
Var log_softmax(const Var& x);
// Over the last dimension D; gamma, beta: [D] or undefined Vars (no scale / no shift).
Var layer_norm(const Var& x, const Var& gamma, const Var& beta, float eps = 1e-5f);
// layer_norm(h + relu(x), gamma, beta) as one op (topo::residual_relu_layer_norm): no [rows, D] sum or relu
// tensor, forward or backward.
Var residual_relu_layer_norm(const Var& h, const Var& x, const Var& gamma, const Var& beta, float eps = 1e-5f);

// ---- randomness (ops_index.cpp)
// Counter-based dropout state: a mask is a function of (seed, offset); each dropout call consumes
// numel offsets, so successive masks never repeat. Not thread-safe: one generator per thread.
class Generator {
 public:
  explicit Generator(std::uint64_t seed = 0x5eed) : seed_(seed) {}
  std::uint64_t seed() const { return seed_; }
  std::uint64_t offset() const { return offset_; }
  void set_seed(std::uint64_t seed) {
    seed_ = seed;
    offset_ = 0;
  }
  // Returns the current offset and advances it by n.
  std::uint64_t advance(std::uint64_t n) {
    const std::uint64_t at = offset_;
    offset_ += n;
    return at;
  }

 private:
  std::uint64_t seed_;
  std::uint64_t offset_ = 0;
};
// The generator used when none is passed: one per thread (each starts at seed 0x5eed), so concurrent
// trainings in one process each see the masks a sequential run would. set_seed reseeds the calling thread's.
Generator& default_generator();
void set_seed(std::uint64_t seed);

// Training: zeroes each element with probability p and scales the rest by 1/(1-p). Not training (or
// p == 0): returns x itself. p must be in [0, 1).
Var dropout(const Var& x, float p, bool training, Generator& gen = default_generator());

// ---- indexing and shape (ops_index.cpp); index tensors are int32/int64, never differentiated
// weight [V, D], ids of any shape -> ids.shape + [D].
Var embedding(const Var& weight, const Tensor& ids);
// Row look-ups summed over several tables in one pass (topo::embedding_sum): out[i] = sum over t of
// tables[t][ids[t][i]], ids[t][i] == kNoRow (-1) leaving table t out of row i. tables[t] [V_t, D], ids[t] [M]
// -> [M, D]; each table that requires grad gets the scatter-add of out's gradient over its ids.
Var embedding_sum(const std::vector<Var>& tables, const std::vector<Tensor>& ids);
// x [N, ...], index [M] -> [M, ...]; backward scatters-adds rows.
Var index_select(const Var& x, const Tensor& index);
Var concat(const std::vector<Var>& xs, int dim);
// Pieces along dim with the given sizes (summing to x.size(dim)).
std::vector<Var> split(const Var& x, const std::vector<std::int64_t>& sizes, int dim);

// ---- losses (ops_loss.cpp), 0-d results
// logits [N, C], targets int64 [N]; mean over rows whose target != ignore_index (0 when all are ignored).
Var cross_entropy(const Var& logits, const Tensor& targets, std::int64_t ignore_index = -100);
// mean((pred - target)^2); both may require grad.
Var mse(const Var& pred, const Var& target);

}  // namespace topo::nn
