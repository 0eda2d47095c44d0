// The op table (tests/support/op_table.hpp) walked on the CPU: every entry's forward against its naive
// reference (kernels/dense/reference.hpp, kernels/sparse/reference.hpp) at each of its awkward sizes, and
// every gradient against central finite differences (nn::gradcheck) at the sizes where that stays cheap.
// tests/gpu/test_op_table_gpu.cpp walks the same table comparing CUDA with the CPU.
#include <algorithm>
#include <set>

#include "tests/nn/nn_testing.hpp"
#include "tests/support/op_table.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::optable;

TEST_CASE("op table: names are unique and every entry is complete") {
  std::set<std::string> names;
  for (const Op& op : op_table()) {
    CAPTURE(op.name);
    CHECK(names.insert(op.name).second);
    CHECK_FALSE(op.sizes.empty());
    CHECK(op.bench_size > 0);
    CHECK((op.make && op.call && op.reference));
  }
  // The families the issue names, each present.
  for (const char* family : {"matmul", "linear", "unary/", "binary/", "softmax", "log_softmax", "layer_norm",
                             "reduce/", "scale_bias_act/", "index_select", "embedding", "cross_entropy", "gspmm/copy_u/sum",
                             "gspmm/u_mul_e/max", "gspmm/u_mul_e/mean", "gsddmm/u_dot_v", "gsddmm/u_add_v",
                             "gsddmm/u_mul_v", "edge_softmax", "sparse_attention", "flash_attention", "concat"}) {
    CAPTURE(family);
    CHECK(std::any_of(names.begin(), names.end(), [&](const std::string& n) { return n.rfind(family, 0) == 0; }));
  }
}

TEST_CASE("op table: every op's CPU forward equals its reference at awkward sizes") {
  for (const Op& op : op_table())
    for (std::int64_t n : op.sizes) {
      CAPTURE(op.name);
      CAPTURE(n);
      const Problem p = op.make(n, seed_of(op.name, n));
      CAPTURE(p.shapes());
      const Outcome o = run(op, p);
      TOPO_CHECK_CLOSE(o.out.to_vector<float>(), op.reference(p), op.atol, op.rtol);
    }
}

TEST_CASE("op table: every op's gradients equal central finite differences") {
  for (const Op& op : op_table())
    for (std::int64_t n : op.sizes) {
      if (n > op.grad_max_size) continue;
      CAPTURE(op.name);
      CAPTURE(n);
      const Problem p = op.make(n, seed_of(op.name, n));
      CAPTURE(p.shapes());
      TOPO_GRADCHECK([&](const std::vector<nn::Var>& x) { return op.call(p, x); }, leaves(p, true), op.gradcheck);
    }
}
