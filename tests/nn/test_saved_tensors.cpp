// What a forward keeps for backward: an interior Var's data goes with its last handle unless a backward
// captured it, and ops capture only what their backward reads.
#include "kernels/storage.hpp"
#include "nn/ops.hpp"
#include "tests/nn/nn_testing.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::nn;

TEST_CASE("an interior Var's data goes with its last handle; what a backward reads stays, gradients unchanged") {
  // y = relu(x @ w) * c, c constant. relu's backward keeps its input and output; the scale keeps c, not its
  // input; the scaled tensor, which no backward reads, goes with its last handle.
  const auto live = [] { return static_cast<std::int64_t>(host_memory::stats().bytes_in_use); };
  Var x(topo::testing::random_uniform({512, 64}, 1), true), w(topo::testing::random_uniform({64, 128}, 2), true);
  Var c(topo::testing::random_uniform({512, 128}, 3));
  const std::int64_t before = live(), product = 512 * 128 * 4;
  Var h = matmul(x, w);
  CHECK(live() - before == product);
  h = relu(h);  // the product's last handle goes: relu keeps its input and output, so it stays
  CHECK(live() - before == 2 * product);
  Var y = mul(h, c);
  h = Var();  // relu's output: its tensor stays captured by relu's backward; mul keeps only c
  CHECK(live() - before == 3 * product);
  Var loss = sum_all(y);
  y = Var();  // the scaled tensor: no backward reads it, so it goes
  CHECK(live() - before >= 2 * product);
  CHECK(live() - before < 2 * product + 1024);  // the loss itself
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
