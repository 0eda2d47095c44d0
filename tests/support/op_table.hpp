#pragma once
// The op table (issue #37, ggml's test-backend-ops): every differentiable op the kernels expose, once, as
// data: a name, how to make its inputs at a given size (shapes, dtypes, deterministic random values), its
// call through nn (so one call runs on whatever device the inputs are on and autograd gives the backward),
// and its naive CPU reference, which lives beside the kernel (kernels/dense/reference.hpp,
// kernels/sparse/reference.hpp). Three walkers read it:
//   tests/kernels/test_op_table.cpp    CPU forward against the reference at awkward sizes, and every gradient
//                                      against central finite differences (nn::gradcheck);
//   tests/gpu/test_op_table_gpu.cpp    CUDA against the CPU, forward and every gradient, same problems;
//   bench/ops_bench.cpp (`topo-bench ops`) each entry timed at its bench size on every device present.
// Adding an op is one entry here (and its reference beside its kernel); all three pick it up.
//
// Layering: this library (topo_op_table) sits above nn and graph; tests/ and bench/ link it, nothing else.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "kernels/sparse/reference.hpp"
#include "nn/gradcheck.hpp"
#include "nn/var.hpp"

namespace topo::optable {

// One op at one size: its operands on one device, and what the call needs besides them.
struct Problem {
  std::vector<Tensor> inputs;  // float32 operands; input i becomes the call's x[i]
  std::vector<bool> grad;      // per input: differentiated (and finite-differenced) or held constant
  std::vector<Tensor> ids;     // integer operands (ids, targets): never differentiated
  // Sparse ops: the graph as the references see it (host COO, edge id = position) and as the call sees it
  // (one relation "rel" from node type "src" to "dst", on the problem's device).
  reference::Coo coo;
  HeteroGraph graph;
  std::vector<std::int64_t> lengths, radii;  // dense attention: packed sequence lengths, band radii

  Block block() const;
  Device device() const;
  // The same problem with every tensor (and the graph) on `device`.
  Problem to(Device device) const;
  // Bytes of every operand (the minimum an op reads); topo-bench adds the output's.
  double input_bytes() const;
  // The shapes, for messages and the bench's JSON: "[7, 33] [33]".
  std::string shapes() const;
};

struct Op {
  Op(std::string name_, std::vector<std::int64_t> sizes_, std::int64_t grad_max_size_, std::int64_t bench_size_)
      : name(std::move(name_)), sizes(std::move(sizes_)), grad_max_size(grad_max_size_), bench_size(bench_size_) {}
  std::string name;                 // "family/variant", e.g. "gspmm/u_mul_e/max"
  std::vector<std::int64_t> sizes;  // the awkward sizes the tests walk (what a size means is the entry's)
  std::int64_t grad_max_size = 7;   // gradients are finite-differenced at sizes up to this (cost: 2 forwards
                                    // per input element)
  std::int64_t bench_size = 0;      // the size topo-bench times
  std::function<Problem(std::int64_t size, std::uint64_t seed)> make;  // on the CPU
  // The op through nn on x (one Var per problem input, on the problem's device).
  std::function<nn::Var(const Problem&, const std::vector<nn::Var>& x)> call;
  // The forward from the reference on the host (the problem is on the CPU).
  std::function<std::vector<float>(const Problem&)> reference;
  // Forward against the reference, and CUDA against the CPU (forward and gradients): |a-b| <= atol + rtol|b|.
  double atol = 1e-5, rtol = 1e-4;
  nn::GradcheckOptions gradcheck = {};
  // Floating-point operations of one forward at the problem (0: counted as memory-bound only).
  std::function<double(const Problem&)> flops;
};

// Every entry, dense then sparse; built once.
const std::vector<Op>& op_table();
// The parts (op_table.cpp gathers them): dense ops, and the sparse ops over a graph.
void add_dense_ops(std::vector<Op>& table);
void add_sparse_ops(std::vector<Op>& table);

// Shared by the entries. Uniform [lo, hi) float32 from a seeded generator; `margin` > 0 moves every value that
// far away from 0 (finite differences must not straddle relu's kink, log's and div's poles).
Tensor uniform(const Shape& shape, std::uint64_t seed, float lo = -1.f, float hi = 1.f, float margin = 0.f);
std::vector<float> host(const Tensor& t);
// A problem of these operands, every float input differentiated.
Problem problem(std::vector<Tensor> inputs, std::vector<Tensor> ids = {});

// The seed of an entry's problem at size n (FNV-1a of the name, mixed with n): stable when entries are added.
std::uint64_t seed_of(const std::string& name, std::int64_t n);

// The problem's inputs as leaves; with_grad: those the problem differentiates require grad.
std::vector<nn::Var> leaves(const Problem& p, bool with_grad);

// One forward (and, with a defined grad_out, one backward seeded with it) of `op` on the problem's device.
struct Outcome {
  Tensor out;
  std::vector<Tensor> grads;  // per input: its gradient, undefined where the problem holds it constant
};
Outcome run(const Op& op, const Problem& p, const Tensor& grad_out = Tensor());

}  // namespace topo::optable
