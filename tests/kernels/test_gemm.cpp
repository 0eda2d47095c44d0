#include <omp.h>

#include <array>
#include <fstream>
#include <string>

#include "kernels/dense/gemm.hpp"
#if TOPO_WITH_CUDA
#include "kernels/dense/gemm_math.hpp"
#endif
#include "kernels/dense/reference.hpp"
#include "kernels/profile.hpp"
#include "kernels/threads.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using topo::testing::random_uniform;

namespace {

Shape stored(bool trans, std::int64_t rows, std::int64_t cols) { return trans ? Shape{cols, rows} : Shape{rows, cols}; }

// Whether a file whose path contains `name` is mapped into this process.
[[maybe_unused]] bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find(name) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("2-D gemm and matmul match a naive loop for all four transpose combinations") {
  std::uint64_t seed = 61;
  std::vector<std::array<std::int64_t, 3>> sizes;
  for (std::int64_t m : {1, 7, 33})
    for (std::int64_t n : {1, 7, 33})
      for (std::int64_t k : {1, 7, 33}) sizes.push_back({m, n, k});
  sizes.push_back({257, 31, 33});
  sizes.push_back({31, 257, 7});
  sizes.push_back({33, 7, 257});
  for (const auto& [m, n, k] : sizes)
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        TOPO_CAPTURE(m);
        TOPO_CAPTURE(n);
        TOPO_CAPTURE(k);
        CAPTURE(ta);
        CAPTURE(tb);
        Tensor a = random_uniform(stored(ta, m, k), seed++), b = random_uniform(stored(tb, k, n), seed++);
        const std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>();
        Tensor c = matmul(a, b, ta, tb);
        REQUIRE(c.shape() == Shape{m, n});
        TOPO_CHECK_CLOSE(c.to_vector<float>(), reference::gemm(ta, tb, m, n, k, 1.f, av.data(), bv.data(), 0.f, nullptr),
                         1e-5, 1e-5);
        Tensor c0 = random_uniform({m, n}, seed++);
        const std::vector<float> c0v = c0.to_vector<float>();
        gemm(ta, tb, 0.5f, a, b, -2.f, c0);
        TOPO_CHECK_CLOSE(c0.to_vector<float>(), reference::gemm(ta, tb, m, n, k, 0.5f, av.data(), bv.data(), -2.f, c0v.data()),
                         1e-5, 1e-5);
      }
}

TEST_CASE("batched gemm and a shared 2-D b match per-item loops") {
  std::uint64_t seed = 71;
  struct Case {
    std::int64_t batch, m, n, k;
  };
  // Small items run parallel over the batch; the 2 x 129^3 case is big enough for one threaded sgemm per item.
  const Case cases[] = {{1, 7, 33, 31}, {3, 1, 7, 33}, {7, 33, 1, 7}, {16, 33, 33, 33}, {2, 129, 129, 129}};
  for (const Case& cs : cases)
    for (bool shared : {false, true})
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          CAPTURE(cs.batch);
          CAPTURE(cs.m);
          CAPTURE(shared);
          CAPTURE(ta);
          CAPTURE(tb);
          Shape as = stored(ta, cs.m, cs.k), bs = stored(tb, cs.k, cs.n);
          as.insert(as.begin(), cs.batch);
          if (!shared) bs.insert(bs.begin(), cs.batch);
          Tensor a = random_uniform(as, seed++), b = random_uniform(bs, seed++);
          Tensor c0 = random_uniform({cs.batch, cs.m, cs.n}, seed++);
          const std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>(), c0v = c0.to_vector<float>();
          std::vector<float> expected, expected_plain;
          for (std::int64_t i = 0; i < cs.batch; ++i) {
            const float* ai = av.data() + i * cs.m * cs.k;
            const float* bi = bv.data() + (shared ? 0 : i * cs.k * cs.n);
            const std::vector<float> item =
                reference::gemm(ta, tb, cs.m, cs.n, cs.k, 2.f, ai, bi, 0.5f, c0v.data() + i * cs.m * cs.n);
            expected.insert(expected.end(), item.begin(), item.end());
            const std::vector<float> plain = reference::gemm(ta, tb, cs.m, cs.n, cs.k, 1.f, ai, bi, 0.f, nullptr);
            expected_plain.insert(expected_plain.end(), plain.begin(), plain.end());
          }
          Tensor c = matmul(a, b, ta, tb);
          REQUIRE(c.shape() == Shape{cs.batch, cs.m, cs.n});
          TOPO_CHECK_CLOSE(c.to_vector<float>(), expected_plain, 1e-5, 1e-5);
          gemm(ta, tb, 2.f, a, b, 0.5f, c0);
          TOPO_CHECK_CLOSE(c0.to_vector<float>(), expected, 1e-5, 1e-5);
        }
}

TEST_CASE("gemm edge cases: empty inner dim, empty result") {
  Tensor c = Tensor::full({3, 2}, 4.f);
  gemm(false, false, 1.f, Tensor::zeros({3, 0}), Tensor::zeros({0, 2}), 0.5f, c);
  CHECK(c.to_vector<float>() == std::vector<float>(6, 2.f));
  CHECK(matmul(Tensor::zeros({3, 0}), Tensor::zeros({0, 2})).to_vector<float>() == std::vector<float>(6, 0.f));
  CHECK(matmul(Tensor::zeros({0, 4}), Tensor::zeros({4, 2})).shape() == Shape{0, 2});
  CHECK(matmul(Tensor::zeros({2, 0, 4}), Tensor::zeros({4, 3})).shape() == Shape{2, 0, 3});
}

TEST_CASE("linear: x W^T + b equals a naive loop, below and above the one-thread size, and k = 0") {
  std::uint64_t seed = 500;
  for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{{1, 1, 1}, {7, 33, 5}, {600, 300, 300}, {3, 2, 0}}) {
    TOPO_CAPTURE(m);
    TOPO_CAPTURE(n);
    TOPO_CAPTURE(k);
    const Tensor x = random_uniform({m, k}, seed++), w = random_uniform({n, k}, seed++), b = random_uniform({n}, seed++);
    const std::vector<float> xv = x.to_vector<float>(), wv = w.to_vector<float>(), bv = b.to_vector<float>();
    std::vector<float> rows;  // the bias broadcast over the m rows: reference's c0 with beta = 1
    for (std::int64_t i = 0; i < m; ++i) rows.insert(rows.end(), bv.begin(), bv.end());
    const std::vector<float> want = reference::gemm(false, true, m, n, k, 1.f, xv.data(), wv.data(), 1.f, rows.data());
    const std::vector<float> got = linear(x, w, b).to_vector<float>();
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-4));
  }
  CHECK_THROWS_WITH_AS(linear(Tensor::zeros({4, 3}), Tensor::zeros({2, 3}), Tensor::zeros({3})),
                       doctest::Contains("bias [out]"), topo::Error);
  CHECK_THROWS_AS(linear(Tensor::zeros({4, 3}), Tensor::zeros({2, 5}), Tensor::zeros({2})), topo::Error);
}

TEST_CASE("gemm errors name both shapes") {
  const auto message = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const topo::Error& e) {
      return e.what();
    }
    return "";
  };
  std::string msg = message([] { matmul(Tensor::zeros({7, 31}), Tensor::zeros({33, 5})); });
  CHECK(msg.find("[7, 31]") != std::string::npos);
  CHECK(msg.find("[33, 5]") != std::string::npos);
  msg = message([] { matmul(Tensor::zeros({2, 3, 4}), Tensor::zeros({5, 4, 6})); });
  CHECK(msg.find("[2, 3, 4]") != std::string::npos);
  CHECK(msg.find("[5, 4, 6]") != std::string::npos);
  msg = message([] {
    Tensor c = Tensor::zeros({3, 3});
    gemm(false, false, 1.f, Tensor::zeros({3, 4}), Tensor::zeros({4, 5}), 0.f, c);
  });
  CHECK(msg.find("[3, 4]") != std::string::npos);
  CHECK(msg.find("[4, 5]") != std::string::npos);
  CHECK(msg.find("[3, 3]") != std::string::npos);
  CHECK_THROWS_AS(matmul(Tensor::zeros({4}), Tensor::zeros({4, 5})), topo::Error);
  CHECK_THROWS_AS(matmul(Tensor::zeros({3, 4}), Tensor::zeros({2, 4, 5})), topo::Error);
  CHECK_THROWS_AS(matmul(Tensor::zeros({3, 4}), Tensor::zeros({4, 5}, DType::I64)), topo::Error);
  CHECK(matmul(Tensor::zeros({3, 4}), Tensor::zeros({5, 4}), false, true).shape() == Shape{3, 5});
}

#if TOPO_WITH_CUDA
// A CUDA build opens cuBLAS on the first GEMM on a device: linked, it left ~150 MB resident in every process
// (kernels/dense/gemm_cuda.cu). No other case of this program runs on a device, so nothing has opened it before.
TEST_CASE("CPU GEMMs of a CUDA build leave cuBLAS unopened; it opens without a device, on demand") {
  const Tensor c = matmul(random_uniform({64, 48}, 1), random_uniform({48, 32}, 2));
  CHECK(c.shape() == Shape{64, 32});
  CHECK_FALSE(mapped("libcublas"));
  const std::string path = cuda::load_cublas();
  CHECK(path.find("libcublas.so.") != std::string::npos);
  CHECK(mapped("libcublas"));
  CHECK(cuda::load_cublas() == path);  // opened once
}
#endif

TEST_CASE("gemm below the single-thread size opens no parallel region and leaves the thread count as it was") {
  const int before = num_threads();
  set_num_threads(2);
  profile::reset();
  profile::enable();
  // 64 x 100 x 100 (a projection of 4 sentences of 16 tokens) is below the threshold; big_m x 100 x 100 is the
  // smallest such product above it.
  const std::int64_t small_m = 64, big_m = cpu::single_thread_gemm_mnk() / (100 * 100) + 1;
  REQUIRE(small_m * 100 * 100 <= cpu::single_thread_gemm_mnk());
  const Tensor a_small = random_uniform({small_m, 100}, 1), b = random_uniform({100, 100}, 2);
  const Tensor c_small = matmul(a_small, b);
  CHECK(profile::parallel_regions() == 0);
  CHECK(omp_get_max_threads() == 2);
  const Tensor a_big = random_uniform({big_m, 100}, 3);
  const Tensor c_big = matmul(a_big, b);
  CHECK(profile::parallel_regions() == 1);
  CHECK(omp_get_max_threads() == 2);
  profile::enable(false);
  profile::reset();
  // Both still equal the naive product.
  const auto check_product = [&](const Tensor& a, const Tensor& c) {
    const std::vector<float> want =
        reference::gemm(false, false, a.shape()[0], 100, 100, 1.f, a.data<float>(), b.data<float>(), 0.f, nullptr);
    const float* got = c.data<float>();
    for (std::size_t i = 0; i < want.size(); i += 97) REQUIRE(got[i] == doctest::Approx(want[i]).epsilon(1e-4));
  };
  check_product(a_small, c_small);
  check_product(a_big, c_big);
  set_num_threads(before);
}

TEST_CASE("gemm above the single-thread size, cut into chunks over the threads, equals a naive loop") {
  // Slabs along M when M >= N and along N otherwise, for every transpose combination, with beta != 0, at
  // 2 and 3 threads (3 does not divide the lengths: uneven slabs); sizes just above the threshold and well
  // above it, odd everywhere; the last two with K >= kSplitKRatio * max(M, N): slabs of K, partials added.
  const int before = num_threads();
  std::uint64_t seed = 901;
  const std::int64_t t = cpu::single_thread_gemm_mnk();
  const std::vector<std::array<std::int64_t, 3>> sizes = {
      {t / (37 * 41) + 3, 37, 41}, {37, t / (37 * 41) + 3, 41}, {1021, 67, 59}, {67, 1021, 59}, {333, 333, 31},
      {37, 41, t / (37 * 41) + 3}, {61, 29, 16 * 61 + 7}};
  REQUIRE(sizes[5][2] >= cpu::kSplitKRatio * 41);
  REQUIRE(sizes[6][2] >= cpu::kSplitKRatio * 61);
  REQUIRE(61 * 29 * sizes[6][2] > t);
  for (int threads : {2, 3}) {
    set_num_threads(threads);
    for (const auto& [m, n, k] : sizes)
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          CAPTURE(threads);
          TOPO_CAPTURE(m);
          TOPO_CAPTURE(n);
          TOPO_CAPTURE(k);
          CAPTURE(ta);
          CAPTURE(tb);
          REQUIRE(m * n * k > t);
          Tensor a = random_uniform(stored(ta, m, k), seed++), b = random_uniform(stored(tb, k, n), seed++);
          Tensor c = random_uniform({m, n}, seed++);
          const std::vector<float> c0 = c.to_vector<float>();
          profile::reset();
          profile::enable();
          gemm(ta, tb, 0.5f, a, b, -2.f, c);
          CHECK(profile::parallel_regions() == 1);
          profile::enable(false);
          profile::reset();
          const std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>();
          TOPO_CHECK_CLOSE(c.to_vector<float>(), reference::gemm(ta, tb, m, n, k, 0.5f, av.data(), bv.data(), -2.f, c0.data()),
                           1e-4, 1e-4);
        }
  }
  set_num_threads(before);
}
