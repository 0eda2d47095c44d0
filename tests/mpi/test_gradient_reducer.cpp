// dist::GradientReducer on every rank: after a step each parameter's gradient is sum_r w_r * g_r, where
// rank r's shard (r + 2 examples: uneven) has weight w_r = its share of all examples. Every rank computes
// every rank's g_r itself (the data are a function of r), so the expected sum is known locally. With two
// ranks the sum of two floats has one rounding whatever the algorithm: the check is bitwise there. Every
// bucket layout, with and without overlap, must give the same bits.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <vector>

#include "dist/gradient_reducer.hpp"
#include "nn/ops.hpp"
#include "tests/mpi/mpi_testing.hpp"
#include "tests/support/testing.hpp"

using namespace topo;

namespace {

struct Net {
  nn::Var w1{testing::random_uniform({6, 5}, 11), true};
  nn::Var b1{testing::random_uniform({5}, 12), true};  // used twice: its gradient is final after both uses
  nn::Var w2{testing::random_uniform({5, 3}, 13), true};
  nn::Var unused{testing::random_uniform({4}, 14), true};
  nn::Var rank0_only{testing::random_uniform({3}, 15), true};  // only rank 0's examples use it
  nn::Var frozen{testing::random_uniform({3}, 16), false};
  std::vector<nn::Var> params() const { return {w1, b1, w2, unused, rank0_only, frozen}; }

  std::int64_t examples(int rank) const { return rank + 2; }
  // Mean over rank `rank`'s examples of |y|^2, y = (tanh(x W1 + b1) + b1) W2 (+ rank0_only on rank 0) + frozen.
  nn::Var loss(int rank) const {
    const nn::Var x(testing::random_uniform({examples(rank), 6}, 100 + static_cast<std::uint64_t>(rank)));
    nn::Var h = nn::add(nn::tanh(nn::add(nn::matmul(x, w1), b1)), b1);
    nn::Var y = nn::add(nn::matmul(h, w2), frozen);
    if (rank == 0) y = nn::add(y, rank0_only);
    return nn::mean_all(nn::mul(y, y));
  }
  void zero_grad() {
    for (nn::Var& p : params()) p.zero_grad();
  }
};

double share(const Net& net, int rank, int ranks) {
  std::int64_t total = 0;
  for (int r = 0; r < ranks; ++r) total += net.examples(r);
  return double(net.examples(rank)) / double(total);
}

// sum_r w_r * g_r in rank order, each product rounded to float first (as the reducer packs it).
std::map<const nn::VarImpl*, std::vector<float>> expected_gradients(Net& net, int ranks) {
  std::map<const nn::VarImpl*, std::vector<float>> sum;
  for (int r = 0; r < ranks; ++r) {
    net.zero_grad();
    net.loss(r).backward();
    const float w = static_cast<float>(share(net, r, ranks));
    for (const nn::Var& p : net.params()) {
      if (!p.grad().defined()) continue;
      const std::vector<float> g = p.grad().to_vector<float>();
      std::vector<float> scaled(g.size());
      for (std::size_t i = 0; i < g.size(); ++i) scaled[i] = w * g[i];
      auto [slot, fresh] = sum.try_emplace(p.impl().get(), scaled);
      if (!fresh)
        for (std::size_t i = 0; i < g.size(); ++i) slot->second[i] = slot->second[i] + scaled[i];
    }
  }
  net.zero_grad();
  return sum;
}

}  // namespace

TEST_CASE("gradient reducer: the weighted sum over ranks, for every bucket layout, with and without overlap") {
  dist::Communicator& w = testing::world();
  Net net;
  const auto expected = expected_gradients(net, w.size());
  for (std::int64_t bucket_bytes : {std::int64_t{1}, std::int64_t{64}, std::int64_t{1} << 20})
    for (bool overlap : {true, false}) {
      CAPTURE(bucket_bytes);
      CAPTURE(overlap);
      dist::GradientReducer reducer(w, net.params(), {bucket_bytes, overlap});
      CHECK(reducer.num_buckets() == (bucket_bytes == 1 ? 5 : bucket_bytes == 64 ? 4 : 1));  // the frozen one is left out
      for (int step = 0; step < 2; ++step) {  // a second step reuses the buckets
        reducer.begin_step(share(net, w.rank(), w.size()));
        const nn::Var loss = net.loss(w.rank());
        {
          nn::BackwardObserverScope watch(reducer);
          loss.backward();
        }
        std::vector<double> sums = {1.0, double(w.rank())};
        reducer.finish_step(sums);
        CHECK(sums == std::vector<double>{double(w.size()), double(w.size() * (w.size() - 1) / 2)});
        // Overlap: every bucket starts inside backward, the unused parameter's too (it is known unreachable
        // before the first node runs, so it does not hold back the buckets after it).
        if (overlap) CHECK(reducer.stats().buckets_started_in_backward == reducer.num_buckets() * (step + 1));
        if (!overlap) CHECK(reducer.stats().buckets_started_in_backward == 0);
        CHECK(!net.unused.grad().defined());  // no rank used it: no gradient, as in one process
        CHECK(!net.frozen.grad().defined());
        for (const nn::Var& p : {net.w1, net.b1, net.w2, net.rank0_only}) {
          REQUIRE(p.grad().defined());
          const std::vector<float>& want = expected.at(p.impl().get());
          if (w.size() <= 2)
            CHECK(p.grad().to_vector<float>() == want);  // bitwise
          else
            TOPO_CHECK_CLOSE(p.grad().to_vector<float>(), want, 1e-6, 1e-5);
        }
        net.zero_grad();
      }
    }
}

TEST_CASE("gradient reducer: a rank without examples takes part with zeros") {
  dist::Communicator& w = testing::world();
  Net net;
  // Only rank 0 has examples (weight 1); the others start and finish the step without a backward.
  dist::GradientReducer reducer(w, net.params(), {64, true});
  net.loss(0).backward();
  const std::vector<float> alone = net.w2.grad().to_vector<float>();
  net.zero_grad();
  reducer.begin_step(w.rank() == 0 ? 1.0 : 0.0);
  if (w.rank() == 0) {
    nn::BackwardObserverScope watch(reducer);
    net.loss(0).backward();
  }
  std::vector<double> sums;
  reducer.finish_step(sums);
  CHECK(net.w2.grad().to_vector<float>() == alone);
  CHECK(net.rank0_only.grad().defined());
}

TEST_CASE("gradient reducer: a step must start without gradients") {
  Net net;
  auto alone = dist::single_process();
  dist::GradientReducer reducer(*alone, net.params());
  net.loss(0).backward();
  CHECK(testing::error_of([&] { reducer.begin_step(1.0); }).find("zero_grad") != std::string::npos);
  net.zero_grad();
  reducer.begin_step(1.0);
  CHECK(testing::error_of([&] { reducer.begin_step(1.0); }).find("twice") != std::string::npos);
}
