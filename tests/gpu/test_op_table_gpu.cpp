// The op table (tests/support/op_table.hpp) walked on CUDA: every entry at each of its awkward sizes and once
// more at its bench size, the same problem on both devices, forward and every input's gradient (one backward
// seeded with the same random gradient) against the CPU's. The CPU side is itself checked against the
// references and finite differences by tests/kernels/test_op_table.cpp, so this test is the CUDA backend's half
// of one harness. Runs only where a CUDA device exists (the gpu executable exits 77 otherwise) but always
// compiles.
#include "tests/support/op_table.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::optable;

TEST_CASE("gpu: every op in the table equals the CPU, forward and gradients, at awkward sizes and its bench size") {
  const Device gpu = Device::cuda();
  for (const Op& op : op_table()) {
    // The awkward sizes, then the bench size: the large shapes (rows of 1026 floats, 16,384-node graphs of
    // 6 heads x 50) where the CUDA kernels switch from one thread or warp per row to a block per row.
    std::vector<std::int64_t> sizes = op.sizes;
    sizes.push_back(op.bench_size);
    for (std::int64_t n : sizes) {
      CAPTURE(op.name);
      CAPTURE(n);
      const Problem pc = op.make(n, seed_of(op.name, n));
      CAPTURE(pc.shapes());
      const Problem pg = pc.to(gpu);
      const Tensor grad_out = testing::random_uniform(run(op, pc).out.shape(), seed_of(op.name, -n));
      const Outcome c = run(op, pc, grad_out), g = run(op, pg, grad_out.to(gpu));
      REQUIRE(g.out.device().is_cuda());
      TOPO_CHECK_CLOSE(g.out.to_vector<float>(), c.out.to_vector<float>(), op.atol, op.rtol);
      // Gradients sum over more terms than the forward (a weight's over every row): a tenth of a per-mille.
      for (std::size_t i = 0; i < c.grads.size(); ++i) {
        CAPTURE(i);
        REQUIRE(g.grads[i].defined() == c.grads[i].defined());
        if (c.grads[i].defined())
          TOPO_CHECK_CLOSE(g.grads[i].to_vector<float>(), c.grads[i].to_vector<float>(), 1e-4, 1e-3);
      }
    }
  }
}
