// What a forward keeps for backward: an interior Var's data goes with its last handle unless a backward
// captured it, ops capture only what their backward reads, and a dropped-out leaf is made again, not kept.
#include "kernels/dense/gemm.hpp"
#include "kernels/dense/random.hpp"
#include "kernels/dense/reduce.hpp"
#include "kernels/storage.hpp"
#include "nn/ops.hpp"
#include "tests/nn/nn_testing.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::nn;

TEST_CASE("an interior Var's data goes with its last handle; what a backward reads stays, gradients unchanged") {
  // y = relu(x @ w) * c, c constant. relu's backward keeps its input (its derivative reads nothing else); the
  // scale keeps c, not its input; relu's output and the scaled tensor, which no backward reads, go with their
  // last handles.
  const auto live = [] { return static_cast<std::int64_t>(host_memory::stats().bytes_in_use); };
  Var x(topo::testing::random_uniform({512, 64}, 1), true), w(topo::testing::random_uniform({64, 128}, 2), true);
  Var c(topo::testing::random_uniform({512, 128}, 3));
  const std::int64_t before = live(), product = 512 * 128 * 4;
  Var h = matmul(x, w);
  CHECK(live() - before == product);
  h = relu(h);  // the product's last handle goes: relu keeps it as its input, so it stays
  CHECK(live() - before == 2 * product);
  Var y = mul(h, c);
  h = Var();  // relu's output: mul keeps only c, relu keeps its input, so it goes
  CHECK(live() - before == 2 * product);
  Var loss = sum_all(y);
  y = Var();  // the scaled tensor: no backward reads it, so it goes
  CHECK(live() - before >= product);
  CHECK(live() - before < product + 1024);  // the loss itself
  loss.backward();
  // The same gradients as a run that keeps every handle.
  Var x2(x.data(), true), w2(w.data(), true);
  Var h2 = relu(matmul(x2, w2));
  Var y2 = mul(h2, c);
  sum_all(y2).backward();
  CHECK(x.grad().to_vector<float>() == x2.grad().to_vector<float>());
  CHECK(w.grad().to_vector<float>() == w2.grad().to_vector<float>());
  CHECK(y2.data().defined());  // a Var with a handle keeps its data after backward
}

TEST_CASE("a dropped-out leaf is lazy: linear and matmul never make it whole, forward or backward; same values") {
  // [10,000, 257] spans three slabs of the backward's recompute (4,080 rows each), the last one short.
  const auto live = [] { return static_cast<std::int64_t>(host_memory::stats().bytes_in_use); };
  const std::int64_t rows = 10000, in = 257, out = 5;
  const float p = 0.3f;
  const Tensor xd = topo::testing::random_uniform({rows, in}, 11), g = topo::testing::random_uniform({rows, out}, 14);
  for (const bool x_grad : {false, true}) {
    for (const int op : {0, 1, 2}) {  // linear (with bias), matmul by [in, out], matmul by [out, in]^T
      TOPO_CAPTURE(x_grad);
      TOPO_CAPTURE(op);
      Var x(xd, x_grad);
      Var w(topo::testing::random_uniform(op == 1 ? Shape{in, out} : Shape{out, in}, 12), true);
      Var b(topo::testing::random_uniform({out}, 13), true);
      Generator gen(21);
      const std::uint64_t seed = gen.seed(), offset = gen.offset();
      const std::int64_t before = live();
      Var h = dropout(x, p, true, gen);
      CHECK(h.is_lazy());  // a recipe, not [rows, in] floats
      CHECK((h.shape() == Shape{rows, in} && h.size(-1) == in && h.dtype() == DType::F32 && h.device() == x.device()));
      Var y = op == 0 ? linear(h, w, b) : op == 1 ? matmul(h, w) : matmul(h, w, false, true);
      CHECK(h.is_lazy());  // projected slab by slab
      h = Var();
      CHECK(live() - before < rows * in * 4 / 2);  // nothing made or kept the [rows, in] dropped-out copy
      y.backward(g);
      // The gradients from the dropped-out data itself.
      const Tensor hd = topo::dropout(xd, p, seed, offset);
      Generator again(21);
      const Var lazy = dropout(x, p, true, again);
      CHECK(lazy.data().to_vector<float>() == hd.to_vector<float>());  // read whole, it is made: the same values
      CHECK(!lazy.is_lazy());
      TOPO_CHECK_CLOSE(y.data().to_vector<float>(),
                       (op == 0   ? topo::linear(hd, w.data(), b.data())
                        : op == 1 ? topo::matmul(hd, w.data())
                                  : topo::matmul(hd, w.data(), false, true))
                           .to_vector<float>(),
                       1e-5, 1e-5);
      // dw and db are sums over the 10,000 rows, taken slab by slab against one GEMM: another summation order,
      // and the GEMM kernels' own blocking differs per CPU (OpenBLAS's SkylakeX kernels: 1.6e-4 apart on an
      // entry of 3.36, a sum of terms whose magnitudes add to ~2,500). The tolerance grows with the row count
      // (1e-7 per row); a slab lost or counted twice is off by O(1).
      const double sum_atol = 1e-7 * static_cast<double>(rows);
      const Tensor dw = op == 1 ? topo::matmul(hd, g, true, false) : topo::matmul(g, hd, true, false);
      TOPO_CHECK_CLOSE(w.grad().to_vector<float>(), dw.to_vector<float>(), sum_atol, 1e-5);
      if (op == 0) TOPO_CHECK_CLOSE(b.grad().to_vector<float>(), topo::sum(g, 0).to_vector<float>(), sum_atol, 1e-5);
      if (x_grad) {
        const Tensor dh = op == 1 ? topo::matmul(g, w.data(), false, true) : topo::matmul(g, w.data());
        TOPO_CHECK_CLOSE(x.grad().to_vector<float>(), topo::dropout(dh, p, seed, offset).to_vector<float>(),
                         1e-5, 1e-5);
      }
    }
  }
}
