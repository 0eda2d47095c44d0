// The narrow-output products (kernels/dense/gemm_skinny.hpp) against the naive loop at awkward sizes: every
// width up to kSkinnyMaxN around the 8-float vectors, row blocks with a remainder, strided operands, beta 0
// (c never read: NaN stays out) and beta != 0; the same bits at 1, 2 and 3 threads; and cpu::sgemm handing
// these shapes to them.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/dense/gemm.hpp"
#include "kernels/dense/gemm_skinny.hpp"
#include "kernels/dense/reference.hpp"
#include "kernels/threads.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using topo::testing::random_uniform;

namespace {

// c (ldc = n + 3 columns, the extra ones must stay as they were) from one call at `threads`.
std::vector<float> run_rows(int threads, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float beta,
                            const std::vector<float>& a, std::int64_t lda, const std::vector<float>& b,
                            std::int64_t ldb, const std::vector<float>& c0) {
  set_num_threads(threads);
  std::vector<float> c = c0;
  cpu::skinny_gemm_rows(tb, m, n, k, 0.5f, a.data(), lda, b.data(), ldb, beta, c.data(), n + 3);
  return c;
}

}  // namespace

TEST_CASE("skinny rows: a [m, k] @ op(b) [k, n] for every width up to 32 equals the naive loop, at any thread count") {
  const int before = num_threads();
  std::uint64_t seed = 71;
  for (std::int64_t n : {1, 7, 8, 9, 16, 17, 24, 31, 32})
    for (const auto& [m, k] : {std::pair<std::int64_t, std::int64_t>{257, 1}, {1003, 5}, {300, 128}, {259, 301}})
      for (bool tb : {false, true})
        for (float beta : {0.f, -2.f}) {
          CAPTURE(n);
          TOPO_CAPTURE(m);
          TOPO_CAPTURE(k);
          CAPTURE(tb);
          CAPTURE(beta);
          REQUIRE(cpu::skinny_rows_applies(false, m, n, k));
          const std::int64_t lda = k + 2, ldb = (tb ? k : n) + 1;
          const auto a = random_uniform({m, lda}, seed++).to_vector<float>();
          const auto b = random_uniform({tb ? n : k, ldb}, seed++).to_vector<float>();
          std::vector<float> c0 = random_uniform({m, n + 3}, seed++).to_vector<float>();
          if (beta == 0.f)
            for (std::int64_t i = 0; i < m; ++i)
              for (std::int64_t j = 0; j < n; ++j) c0[i * (n + 3) + j] = std::numeric_limits<float>::quiet_NaN();
          // The naive product on dense copies of the operands.
          std::vector<float> ad(m * k), bd(k * n), cd(m * n);
          for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t kk = 0; kk < k; ++kk) ad[i * k + kk] = a[i * lda + kk];
          for (std::int64_t kk = 0; kk < k; ++kk)
            for (std::int64_t j = 0; j < n; ++j) bd[kk * n + j] = tb ? b[j * ldb + kk] : b[kk * ldb + j];
          for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j) cd[i * n + j] = beta == 0.f ? 0.f : c0[i * (n + 3) + j];
          const auto want = reference::gemm(false, false, m, n, k, 0.5f, ad.data(), bd.data(), beta, cd.data());
          const auto one = run_rows(1, tb, m, n, k, beta, a, lda, b, ldb, c0);
          for (std::int64_t i = 0; i < m; ++i) {
            for (std::int64_t j = 0; j < n; ++j)
              REQUIRE(one[i * (n + 3) + j] == doctest::Approx(want[i * n + j]).epsilon(1e-5).scale(1.0));
            for (std::int64_t j = n; j < n + 3; ++j) REQUIRE(one[i * (n + 3) + j] == c0[i * (n + 3) + j]);
          }
          CHECK(run_rows(2, tb, m, n, k, beta, a, lda, b, ldb, c0) == one);
          CHECK(run_rows(3, tb, m, n, k, beta, a, lda, b, ldb, c0) == one);
        }
  set_num_threads(before);
}

TEST_CASE("skinny tn: a^T [m, k] @ b [k, n] over long k equals the naive loop, the same bits at any thread count") {
  const int before = num_threads();
  std::uint64_t seed = 171;
  for (std::int64_t n : {1, 8, 9, 16, 23, 32})
    for (const auto& [m, k] : {std::pair<std::int64_t, std::int64_t>{1, 1024}, {5, 1537}, {128, 40001}, {130, 4099}})
      for (float beta : {0.f, 3.f}) {
        CAPTURE(n);
        TOPO_CAPTURE(m);
        TOPO_CAPTURE(k);
        CAPTURE(beta);
        REQUIRE(cpu::skinny_tn_applies(true, false, m, n, k));
        const std::int64_t lda = m + 1, ldb = n + 2;
        const auto a = random_uniform({k, lda}, seed++).to_vector<float>();
        const auto b = random_uniform({k, ldb}, seed++).to_vector<float>();
        const auto c0 = random_uniform({m, n}, seed++).to_vector<float>();
        std::vector<double> want(m * n, 0.0);
        for (std::int64_t kk = 0; kk < k; ++kk)
          for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j) want[i * n + j] += double(a[kk * lda + i]) * b[kk * ldb + j];
        std::vector<float> got[3];
        for (int threads : {1, 2, 3}) {
          set_num_threads(threads);
          got[threads - 1] = c0;
          if (beta == 0.f) std::fill(got[threads - 1].begin(), got[threads - 1].end(), std::nanf(""));
          cpu::skinny_gemm_tn(m, n, k, 2.f, a.data(), lda, b.data(), ldb, beta, got[threads - 1].data(), n);
        }
        for (std::int64_t i = 0; i < m * n; ++i)
          REQUIRE(got[0][i] == doctest::Approx(2.0 * want[i] + beta * c0[i]).epsilon(1e-4).scale(std::sqrt(double(k))));
        CHECK(got[1] == got[0]);
        CHECK(got[2] == got[0]);
      }
  set_num_threads(before);
}

TEST_CASE("cpu::sgemm hands narrow fp32 products to the skinny kernels") {
  const Tensor a = random_uniform({1000, 128}, 5), w = random_uniform({128, 16}, 6);
  const Tensor forward = matmul(a, w);
  std::vector<float> direct(1000 * 16);
  cpu::skinny_gemm_rows(false, 1000, 16, 128, 1.f, a.data<float>(), 128, w.data<float>(), 16, 0.f, direct.data(), 16);
  CHECK(forward.to_vector<float>() == direct);  // bit for bit: the same kernel
  const Tensor big = random_uniform({5000, 64}, 8), gg = random_uniform({5000, 16}, 9);
  const Tensor grad = matmul(big, gg, true, false);  // [64, 16], a weight gradient
  std::vector<float> tn(64 * 16);
  cpu::skinny_gemm_tn(64, 16, 5000, 1.f, big.data<float>(), 64, gg.data<float>(), 16, 0.f, tn.data(), 16);
  CHECK(grad.to_vector<float>() == tn);
}

// Whatever the vector width a width picks (8 lanes up to n = 8, 16 above on AVX-512 builds, a plain loop
// elsewhere), every output is the same chain of fused multiply-adds, k ascending (tn: per fixed block of k, the
// blocks' partials then added in order): equal, bit for bit, to that chain written out.
TEST_CASE("skinny kernels equal their FMA chain bit for bit at every width") {
  const std::int64_t m = 300, k = 37, tn_m = 20, tn_k = 3 * cpu::kSkinnyBlockK + 11;
  for (std::int64_t n : {1, 5, 8, 9, 16, 17, 24, 32}) {
    CAPTURE(n);
    const std::vector<float> a = random_uniform({m, k}, 1).to_vector<float>(), b = random_uniform({k, n}, 2).to_vector<float>();
    std::vector<float> c(static_cast<std::size_t>(m * n));
    cpu::skinny_gemm_rows(false, m, n, k, 1.f, a.data(), k, b.data(), n, 0.f, c.data(), n);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        float acc = 0.f;
        for (std::int64_t kk = 0; kk < k; ++kk) acc = std::fma(a[i * k + kk], b[kk * n + j], acc);
        REQUIRE(c[i * n + j] == acc);
      }
    const std::vector<float> at = random_uniform({tn_k, tn_m}, 3).to_vector<float>(),
                             g = random_uniform({tn_k, n}, 4).to_vector<float>();
    REQUIRE(cpu::skinny_tn_applies(true, false, tn_m, n, tn_k));
    std::vector<float> w(static_cast<std::size_t>(tn_m * n));
    cpu::skinny_gemm_tn(tn_m, n, tn_k, 1.f, at.data(), tn_m, g.data(), n, 0.f, w.data(), n);
    const std::int64_t block = std::max(cpu::kSkinnyBlockK, (tn_k + 63) / 64);
    for (std::int64_t i = 0; i < tn_m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        float sum = 0.f;
        for (std::int64_t k0 = 0; k0 < tn_k; k0 += block) {
          float partial = 0.f;
          for (std::int64_t kk = k0; kk < std::min(tn_k, k0 + block); ++kk)
            partial = std::fma(at[kk * tn_m + i], g[kk * n + j], partial);
          sum += partial;
        }
        REQUIRE(w[i * n + j] == sum);
      }
  }
}
