#include "kernels/dense/flash_attention.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/dense/unary.hpp"
#include "kernels/profile.hpp"
#include "tests/support/testing.hpp"

using namespace topo;

TEST_CASE("profile: outermost kernel scopes are charged to their category and phase, only while enabled") {
  profile::reset();
  const Tensor a = testing::random_uniform({64, 64}, 1);
  (void)matmul(a, a);  // disabled: not recorded
  CHECK(profile::snapshot()[0][static_cast<int>(profile::Category::Gemm)].calls == 0);
  profile::enable();
  (void)matmul(a, a);
  {
    const profile::PhaseGuard backward(profile::Phase::Backward);
    (void)relu(a);
    (void)relu(a);
  }
  profile::enable(false);
  const profile::Table t = profile::snapshot();
  CHECK(t[0][static_cast<int>(profile::Category::Gemm)].calls == 1);  // matmul -> gemm nests: counted once
  CHECK(t[1][static_cast<int>(profile::Category::Elementwise)].calls == 2);
  CHECK(t[0][static_cast<int>(profile::Category::Elementwise)].calls == 0);
  CHECK(t[0][static_cast<int>(profile::Category::Gemm)].seconds > 0);
  CHECK(profile::report().find("gemm") != std::string::npos);
  profile::reset();
}

TEST_CASE("profile: the fused attention kernels are their own category, not GEMM time") {
  profile::reset();
  profile::enable();
  const Tensor q = testing::random_uniform({12, 2, 8}, 2);  // two sequences of 5 and 7 rows, 2 heads of 8
  (void)flash_attention(q, q, q, {5, 7}, 0.35f);
  profile::enable(false);
  const profile::Table t = profile::snapshot();
  CHECK(t[0][static_cast<int>(profile::Category::Attention)].calls == 1);
  CHECK(t[0][static_cast<int>(profile::Category::Gemm)].calls == 0);  // its tile products nest inside
  CHECK(profile::report().find("fused attention") != std::string::npos);
  profile::reset();
}
