// Suite `ops`: every entry of the op table (tests/support/op_table.hpp, the table the op tests walk) timed at
// its bench size on every device present: the forward alone ("NAME fwd") and forward + backward through
// autograd ("NAME fwd+bwd"), named "NAME@device". `--sizes N,...` times every entry at those sizes instead
// (what a size means is the entry's: rows, a matrix side, a sequence length, a graph's destinations).
//
// Work, the minimum an op must do (harness.hpp's rule): the forward reads every operand (and a sparse op's
// int32 in-CSR: indptr, indices, edge ids) once and writes its output once; the backward reads the operands
// and the output's gradient once more and writes every differentiated operand's gradient once. Flops are the
// entry's count of one forward (GEMMs, attention, the sparse ops' per-edge products); the backward is counted
// as twice the forward (the GEMM rule: two products per product). Ops without flops are judged as memory-bound
// only. CPU results are judged against this machine's measured limits like every suite. CUDA results carry
// their GB/s and GFLOP/s in `cuda_gbs` / `cuda_gflops` only: the harness measures no GPU limits, and judging a
// GPU against the CPU's triad would mean nothing. Each CUDA timing ends by reading one element of the result
// back (the copy waits for the device), so it covers the kernels, not just their launches.
#include <string>

#include "bench/harness.hpp"
#include "tests/support/op_table.hpp"
#include "tests/support/random_data.hpp"

namespace {

using namespace topo;
using optable::Op;
using optable::Problem;

// Waits for `t`'s device (a one-element copy back) without copying the whole result.
void wait_for(const Tensor& t) {
  if (t.device().is_cuda() && t.numel() > 0) (void)t.reshape({-1}).slice_rows(0, 1).to_vector<float>();
}

struct OpWork {
  bench::Work forward, both;
};
OpWork work_of(const Op& op, const Problem& p, const Tensor& out) {
  double graph = 0, grads = 0;
  if (p.coo.num_dst > 0) graph = 4.0 * static_cast<double>(p.coo.num_dst + 1 + 2 * p.coo.num_edges());
  for (std::size_t i = 0; i < p.inputs.size(); ++i)
    if (p.grad[i]) grads += static_cast<double>(p.inputs[i].nbytes());
  const double out_bytes = static_cast<double>(out.nbytes()), flops = op.flops ? op.flops(p) : 0.0;
  const double fwd = p.input_bytes() + graph + out_bytes, bwd = p.input_bytes() + graph + out_bytes + grads;
  return {{.bytes_moved = fwd, .flops = flops, .working_set_bytes = fwd},
          {.bytes_moved = fwd + bwd, .flops = 3 * flops, .working_set_bytes = fwd + grads}};
}

void bench_op(bench::Runner& bench, const Op& op, std::int64_t size, Device device) {
  const std::string name = op.name + "@" + (device.is_cuda() ? "cuda" : "cpu") + " n=" + std::to_string(size);
  if (bench.skipped(name + " fwd") && bench.skipped(name + " fwd+bwd")) return;  // --only: not even its inputs
  const Problem p = op.make(size, optable::seed_of(op.name, size)).to(device);
  const std::vector<nn::Var> plain = optable::leaves(p, false);
  const Tensor out = op.call(p, plain).data();
  const Tensor grad_out = testing::random_uniform(out.shape(), 8).to(device);
  const OpWork w = work_of(op, p, out);
  const nlohmann::json extra = {
      {"op", op.name}, {"size", size}, {"shapes", p.shapes()}, {"device", device.is_cuda() ? "cuda" : "cpu"}};
  const auto forward = [&] { wait_for(op.call(p, plain).data()); };
  const auto both = [&] {
    const std::vector<nn::Var> x = optable::leaves(p, true);
    const nn::Var y = op.call(p, x);
    y.backward(grad_out);
    wait_for(x[0].grad().defined() ? x[0].grad() : y.data());
  };
  for (const auto& [suffix, fn, work] : {std::tuple{" fwd", std::function<void()>(forward), w.forward},
                                         std::tuple{" fwd+bwd", std::function<void()>(both), w.both}}) {
    if (!device.is_cuda()) {
      bench.run(name + suffix, work, fn, extra);
      continue;
    }
    // CUDA: no GPU limits to judge against; the figures go in the record as they are.
    const bench::Result r = bench.run(name + suffix, {}, fn, extra);
    const double s = r.stats.median_ms * 1e-3;
    bench.annotate("cuda_gbs", work.bytes_moved / s * 1e-9);
    bench.annotate("cuda_gflops", work.flops > 0 ? nlohmann::json(work.flops / s * 1e-9) : nlohmann::json());
  }
}

}  // namespace

TOPO_BENCH_SUITE(ops,
                 "every op of the op table (the one the op tests walk), forward and forward+backward, per device") {
  std::vector<Device> devices = {Device::cpu()};
  if (cuda_available()) devices.push_back(Device::cuda());
  for (const Op& op : optable::op_table()) {
    for (std::int64_t size : bench.sizes().empty() ? std::vector<std::int64_t>{op.bench_size} : bench.sizes())
      for (Device d : devices) bench_op(bench, op, size, d);
  }
}
