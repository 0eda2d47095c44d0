// dist::Communicator on every rank of the job: each collective's result against what the ranks' inputs
// make it by construction (rank r contributes values derived from r).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/error.hpp"
#include "tests/mpi/mpi_testing.hpp"
#include "tests/support/testing.hpp"

using namespace topo;

namespace {
// Rank r's element i: small integers, so every sum is exact whatever the order.
float value(int rank, std::int64_t i) { return static_cast<float>((rank + 1) * 100 + i % 97); }
}  // namespace

TEST_CASE("communicator: rank and size describe the job") {
  dist::Communicator& w = testing::world();
  const int launched = dist::launcher_world_size();
  CHECK(w.size() == (launched > 0 ? launched : 1));
  CHECK(w.rank() >= 0);
  CHECK(w.rank() < w.size());
  CHECK(w.local_rank() >= 0);
  CHECK(w.is_root() == (w.rank() == 0));
  CHECK(w.backend() == (w.size() > 1 || launched > 0 ? (dist::built_with_nccl() ? "mpi+nccl" : "mpi") : "single"));
}

TEST_CASE("communicator: allreduce_sum of tensors at awkward sizes, blocking and not") {
  dist::Communicator& w = testing::world();
  for (std::int64_t n : {0, 1, 7, 33, 257, 100003}) {
    CAPTURE(n);
    std::vector<float> mine(static_cast<std::size_t>(n)), want(static_cast<std::size_t>(n), 0.f);
    for (std::int64_t i = 0; i < n; ++i) {
      mine[static_cast<std::size_t>(i)] = value(w.rank(), i);
      for (int r = 0; r < w.size(); ++r) want[static_cast<std::size_t>(i)] += value(r, i);
    }
    Tensor blocking = Tensor::from_vector(mine, {n});
    w.allreduce_sum(blocking);
    CHECK(blocking.to_vector<float>() == want);
    Tensor async = Tensor::from_vector(mine, {n});
    auto request = w.start_allreduce_sum(async);
    while (!request->test()) {
    }
    CHECK(request->test());  // stays complete
    request->wait();
    CHECK(async.to_vector<float>() == want);
  }
  Tensor ints = Tensor::zeros({3}, DType::I64);
  CHECK(testing::error_of([&] { w.allreduce_sum(ints); }).find("float32") != std::string::npos);
}

TEST_CASE("communicator: several allreduces in flight complete in any test order") {
  dist::Communicator& w = testing::world();
  std::vector<Tensor> buffers;
  std::vector<std::unique_ptr<dist::Request>> requests;
  for (int b = 0; b < 4; ++b) buffers.push_back(Tensor::full({1000 + b}, float(w.rank() + b)));
  for (Tensor& t : buffers) requests.push_back(w.start_allreduce_sum(t));
  for (auto it = requests.rbegin(); it != requests.rend(); ++it) (*it)->wait();
  const float ranks = float(w.size()), rank_sum = ranks * (ranks - 1) / 2;
  for (int b = 0; b < 4; ++b) CHECK(buffers[b].to_vector<float>() == std::vector<float>(1000 + b, rank_sum + ranks * b));
}

TEST_CASE("communicator: host scalars, broadcasts and the barrier") {
  dist::Communicator& w = testing::world();
  std::vector<double> scalars = {double(w.rank()), 0.25, -1.0};
  w.allreduce_sum(scalars);
  const double n = w.size();
  CHECK(scalars == std::vector<double>{n * (n - 1) / 2, 0.25 * n, -n});

  for (int root = 0; root < w.size(); ++root) {
    CAPTURE(root);
    Tensor t = Tensor::full({5, 3}, float(w.rank() * 10));
    w.broadcast(t, root);
    CHECK(t.to_vector<float>() == std::vector<float>(15, float(root * 10)));
    std::string bytes = w.rank() == root ? std::string("from root \0 with a zero", 23) : std::string("x");
    w.broadcast(bytes, root);
    CHECK(bytes == std::string("from root \0 with a zero", 23));
    nlohmann::json j = w.rank() == root ? nlohmann::json{{"root", root}, {"list", {1, 2}}} : nlohmann::json();
    dist::broadcast_json(w, j, root);
    CHECK(j == nlohmann::json{{"root", root}, {"list", {1, 2}}});
  }
  Tensor t = Tensor::zeros({1});
  CHECK(testing::error_of([&] { w.broadcast(t, w.size()); }).find("root") != std::string::npos);
  w.barrier();
}

TEST_CASE("communicator: a timeout must be positive") {
  auto alone = dist::single_process();
  CHECK(testing::error_of([&] { alone->set_timeout_seconds(0); }).find("positive") != std::string::npos);
  alone->set_timeout_seconds(2.5);
  CHECK(alone->timeout_seconds() == 2.5);
}
