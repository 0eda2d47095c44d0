// The CPU GEMM backends other than OpenBLAS: the own bf16 kernels (kernels/dense/gemm_bf16.*, gemm_amx.* on AMX
// tiles) and oneDNN (gemm_onednn.*, fp32 and bf16). bf16 against the scalar reference (bf16-rounded inputs, fp32
// dot: agreement to fp32 summation-order error, (k + 4) 2^-24 of sum |a b|) and against fp32 (within bf16's rounding of the
// inputs, 2^-7 of sum |a b|); oneDNN fp32 against the double-precision product within (k + 4) 2^-24. At awkward
// sizes, the four transpose combinations, alpha / beta (beta = 0 over NaN), row strides wider than the rows,
// and through cpu::sgemm / gemm with each backend at 1-3 threads (slabs), batched. The bf16 kernels need
// AVX512_BF16 (the AMX kernel AMX tiles too), oneDNN a build with it: where one is missing these tests say so and
// skip those checks.
#include <array>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "kernels/dense/gemm.hpp"
#include "kernels/dense/gemm_amx.hpp"
#include "kernels/dense/gemm_backend.hpp"
#include "kernels/dense/gemm_bf16.hpp"
#include "kernels/dense/gemm_onednn.hpp"
#include "kernels/threads.hpp"
#include "tests/support/testing.hpp"

using namespace topo;

namespace {

std::vector<float> random_vector(std::size_t size, std::uint64_t seed) {
  return testing::random_uniform({static_cast<std::int64_t>(size)}, seed).to_vector<float>();
}

struct GemmProblem {
  bool ta, tb;
  std::int64_t m, n, k, lda, ldb, ldc;
  std::vector<float> a, b, c0;
};

// op(a) [m, k], op(b) [k, n] stored with row strides padded by `pad` columns; c0 [m, ldc] random.
GemmProblem make_problem(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t pad,
                         std::uint64_t seed) {
  GemmProblem p{ta, tb, m, n, k, (ta ? m : k) + pad, (tb ? k : n) + pad, n + pad, {}, {}, {}};
  p.a = random_vector(static_cast<std::size_t>((ta ? k : m) * p.lda), seed);
  p.b = random_vector(static_cast<std::size_t>((tb ? n : k) * p.ldb), seed + 1);
  p.c0 = random_vector(static_cast<std::size_t>(m * p.ldc), seed + 2);
  return p;
}

float at_a(const GemmProblem& p, std::int64_t i, std::int64_t q) {
  return p.ta ? p.a[q * p.lda + i] : p.a[i * p.lda + q];
}
float at_b(const GemmProblem& p, std::int64_t q, std::int64_t j) {
  return p.tb ? p.b[j * p.ldb + q] : p.b[q * p.ldb + j];
}

// Per element of c: sum_q |a_iq b_qj| (in double), the scale every error bound below is relative to.
std::vector<double> abs_products(const GemmProblem& p) {
  std::vector<double> s(static_cast<std::size_t>(p.m * p.n));
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j)
      for (std::int64_t q = 0; q < p.k; ++q) s[i * p.n + j] += std::fabs(double(at_a(p, i, q)) * at_b(p, q, j));
  return s;
}

// Checks |got - want| <= |alpha| * rel * sum|ab| + 1e-6 * |beta c0| on the [m, n] part of c (stride ldc), and
// that the padding columns kept c0.
void check_within(const GemmProblem& p, const std::vector<float>& got, const std::vector<float>& want, float alpha,
                  float beta, double rel) {
  const std::vector<double> scale = abs_products(p);
  int bad = 0;
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.ldc; ++j) {
      const std::size_t e = static_cast<std::size_t>(i * p.ldc + j);
      if (j >= p.n) {
        if (!(got[e] == p.c0[e]) && bad++ < 5) FAIL_CHECK("padding column " << j << " of row " << i << " changed");
        continue;
      }
      const double tol = std::fabs(alpha) * rel * scale[i * p.n + j] + 1e-6 * std::fabs(beta * p.c0[e]) + 1e-30;
      if (!(std::fabs(double(got[e]) - want[e]) <= tol) && bad++ < 5)
        FAIL_CHECK("c[" << i << "," << j << "] = " << got[e] << ", expected " << want[e] << " within " << tol);
    }
  CHECK(bad == 0);
}

// fp32 truth in double: c = alpha op(a) op(b) + beta c0 (beta == 0: c0 not read).
std::vector<float> exact(const GemmProblem& p, float alpha, float beta) {
  std::vector<float> c = p.c0;
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      double dot = 0;
      for (std::int64_t q = 0; q < p.k; ++q) dot += double(at_a(p, i, q)) * at_b(p, q, j);
      const std::size_t e = static_cast<std::size_t>(i * p.ldc + j);
      c[e] = static_cast<float>(alpha * dot + (beta == 0.f ? 0.0 : double(beta) * p.c0[e]));
    }
  return c;
}

// Error bounds relative to sum |a b|. Against the reference (same rounded inputs): fp32 summation in another
// order, at most ~(k + 2) units of 2^-24. Against fp32: bf16 keeps 8 significant bits, so rounding to nearest
// moves an input by at most 2^-8 of itself and a product of two by at most 2 * 2^-8 + 2^-16, plus the fp32 sums.
double reference_tolerance(std::int64_t k) { return (double(k) + 4) * std::ldexp(1.0, -24); }
double fp32_tolerance(std::int64_t k) { return std::ldexp(1.0, -7) * 1.01 + reference_tolerance(k); }

bool kernel_available() {
  if (cpu::bf16_gemm_cpu_supported()) return true;
  MESSAGE("this CPU does not report AVX512_BF16: the bf16 GEMM cannot run here (fp32 fallback checked instead)");
  return false;
}

const std::vector<std::int64_t> kSizes = {1, 7, 17, 33, 100};
const std::vector<std::int64_t> kDepths = {1, 2, 7, 33, 300, 513};  // odd K, K = 1, two K blocks (513 > 384)

// Calls check(p) on a problem per m in ms, n in ns, k in ks and transpose pair (row strides padded by 0-2 on
// some), with the shape CAPTUREd; above max_mnk only square m = n with k <= 300 (keeps the double loops short).
template <class Check>
void for_each_problem(const std::vector<std::int64_t>& ms, const std::vector<std::int64_t>& ks, std::int64_t max_mnk,
                      std::uint64_t seed, Check&& check) {
  for (std::int64_t m : ms)
    for (std::int64_t n : ms)
      for (std::int64_t k : ks)
        for (bool ta : {false, true})
          for (bool tb : {false, true}) {
            if (m * n * k > max_mnk && (m != n || k > 300)) continue;
            const std::int64_t pad = (m + n + k) % 3;  // ld > cols on some
            CAPTURE(m);
            CAPTURE(n);
            CAPTURE(k);
            CAPTURE(ta);
            CAPTURE(tb);
            CAPTURE(pad);
            check(make_problem(ta, tb, m, n, k, pad, seed));
            seed += 3;
          }
}

using GemmCall = void (*)(bool, bool, std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t,
                          const float*, std::int64_t, float, float*, std::int64_t);

// A bf16 kernel's edges: beta = 0 does not read c (NaN there leaves the product finite) for each alpha, k = 0
// scales c by beta, alpha = 0 leaves beta c (zero here).
void check_scale_edges(GemmCall call, std::int64_t m, std::initializer_list<float> alphas, std::uint64_t seed) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (float alpha : alphas) {
    CAPTURE(alpha);
    GemmProblem p = make_problem(false, true, m, 37, 300, 2, seed);
    for (float& x : p.c0) x = nan;
    std::vector<float> got = p.c0;
    call(false, true, m, 37, 300, alpha, p.a.data(), p.lda, p.b.data(), p.ldb, 0.f, got.data(), p.ldc);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < 37; ++j) REQUIRE(std::isfinite(got[i * p.ldc + j]));
  }
  const GemmProblem q = make_problem(true, false, 9, 40, 50, 0, seed + 14);
  std::vector<float> got = q.c0;
  call(true, false, 9, 40, 0, 2.f, q.a.data(), q.lda, q.b.data(), q.ldb, 3.f, got.data(), q.ldc);
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == 3.f * q.c0[i]);
  got = q.c0;
  call(true, false, 9, 40, 50, 0.f, q.a.data(), q.lda, q.b.data(), q.ldb, 0.f, got.data(), q.ldc);
  for (float x : got) CHECK(x == 0.f);
}

}  // namespace

TEST_CASE("round_to_bf16 rounds to nearest even and keeps specials") {
  CHECK(cpu::round_to_bf16(1.f) == 1.f);
  CHECK(cpu::round_to_bf16(1.f + std::ldexp(1.f, -8)) == 1.f);  // halfway: to the even mantissa (1.0)
  CHECK(cpu::round_to_bf16(1.f + 3 * std::ldexp(1.f, -8)) == 1.f + std::ldexp(1.f, -6));  // halfway: up to even
  CHECK(cpu::round_to_bf16(1.f + std::ldexp(1.f, -8) + std::ldexp(1.f, -20)) == 1.f + std::ldexp(1.f, -7));
  CHECK(cpu::round_to_bf16(-3.f) == -3.f);
  CHECK(std::isinf(cpu::round_to_bf16(std::numeric_limits<float>::infinity())));
  CHECK(std::isnan(cpu::round_to_bf16(std::numeric_limits<float>::quiet_NaN())));
  CHECK(std::isinf(cpu::round_to_bf16(std::numeric_limits<float>::max())));  // rounds past the largest bf16
}

TEST_CASE("precision: names parse, a bad one is an error naming it, bf16 needs the CPU feature") {
  CHECK(parse_precision("fp32") == Precision::fp32);
  CHECK(parse_precision("bf16") == Precision::bf16);
  CHECK(testing::error_of([] { (void)parse_precision("fp16"); }).find("'fp16'") != std::string::npos);
  CHECK(gemm_precision() == Precision::fp32);  // the default
  const PrecisionChoice on_cuda = configure_gemm_precision("bf16", true);
  CHECK(on_cuda.used == Precision::fp32);
  CHECK(on_cuda.line.find("fp32 used") != std::string::npos);
  if (bf16_gemm_supported()) {
    const PrecisionChoice c = configure_gemm_precision("bf16");
    CHECK(c.used == Precision::bf16);
    CHECK(gemm_precision() == Precision::bf16);
    {
      GemmPrecisionGuard g(Precision::fp32);
      CHECK(gemm_precision() == Precision::fp32);
    }
    CHECK(gemm_precision() == Precision::bf16);
  } else {
    MESSAGE("this CPU does not report AVX512_BF16: bf16 falls back to fp32");
    const PrecisionChoice c = configure_gemm_precision("bf16");
    CHECK(c.used == Precision::fp32);
    CHECK(c.line.find("AVX512_BF16") != std::string::npos);
    CHECK(!testing::error_of([] { set_gemm_precision(Precision::bf16); }).empty());
  }
  set_gemm_precision(Precision::fp32);
}

TEST_CASE("sgemm_bf16 matches its scalar reference and fp32 within bf16 rounding: sizes, transposes, strides") {
  if (!kernel_available()) return;
  for_each_problem(kSizes, kDepths, 100 * 100 * 33, 2001, [](const GemmProblem& p) {
    const float alpha = 0.75f, beta = -0.5f;
    std::vector<float> got = p.c0, ref = p.c0;
    cpu::sgemm_bf16(p.ta, p.tb, p.m, p.n, p.k, alpha, p.a.data(), p.lda, p.b.data(), p.ldb, beta, got.data(), p.ldc);
    cpu::sgemm_bf16_reference(p.ta, p.tb, p.m, p.n, p.k, alpha, p.a.data(), p.lda, p.b.data(), p.ldb, beta, ref.data(),
                              p.ldc);
    check_within(p, got, ref, alpha, beta, reference_tolerance(p.k));
    check_within(p, got, exact(p, alpha, beta), alpha, beta, fp32_tolerance(p.k));
  });
}

TEST_CASE("sgemm_bf16: beta = 0 ignores NaN in c, beta = 1 accumulates, k = 0 and alpha = 0 scale c") {
  if (!kernel_available()) return;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const auto& shape : std::vector<std::array<std::int64_t, 3>>{{13, 37, 300}, {1, 1, 1}, {25, 16, 600}}) {
    const std::int64_t m = shape[0], n = shape[1], k = shape[2];  // not a structured binding: clang 14's CAPTURE
    CAPTURE(m);
    GemmProblem p = make_problem(false, true, m, n, k, 2, 77);
    for (float& x : p.c0) x = nan;
    std::vector<float> got = p.c0;
    cpu::sgemm_bf16(false, true, m, n, k, 1.f, p.a.data(), p.lda, p.b.data(), p.ldb, 0.f, got.data(), p.ldc);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) REQUIRE(std::isfinite(got[i * p.ldc + j]));
    std::vector<float> ref = p.c0;
    cpu::sgemm_bf16_reference(false, true, m, n, k, 1.f, p.a.data(), p.lda, p.b.data(), p.ldb, 0.f, ref.data(), p.ldc);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) CHECK(std::fabs(got[i * p.ldc + j] - ref[i * p.ldc + j]) <= 1e-4f);
  }
  GemmProblem p = make_problem(true, false, 9, 40, 50, 0, 91);
  std::vector<float> got = p.c0;
  cpu::sgemm_bf16(true, false, 9, 40, 50, 2.f, p.a.data(), p.lda, p.b.data(), p.ldb, 1.f, got.data(), p.ldc);
  check_within(p, got, exact(p, 2.f, 1.f), 2.f, 1.f, fp32_tolerance(50));
  got = p.c0;
  cpu::sgemm_bf16(true, false, 9, 40, 0, 2.f, p.a.data(), p.lda, p.b.data(), p.ldb, 3.f, got.data(), p.ldc);
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == 3.f * p.c0[i]);
  got = p.c0;
  cpu::sgemm_bf16(true, false, 9, 40, 50, 0.f, p.a.data(), p.lda, p.b.data(), p.ldb, 0.f, got.data(), p.ldc);
  for (float x : got) CHECK(x == 0.f);
}

// The bf16 backends this process can run (none without AVX512_BF16).
std::vector<GemmBackend> bf16_backends() {
  std::vector<GemmBackend> out;
  for (GemmBackend b : {GemmBackend::own, GemmBackend::amx, GemmBackend::onednn})
    if (gemm_backend_available(Precision::bf16, b)) out.push_back(b);
  return out;
}

bool amx_available() {
  if (cpu::amx_gemm_supported()) return true;
  MESSAGE("this CPU (or its kernel) offers no AMX tiles with bf16: the AMX kernel's checks are skipped");
  return false;
}

bool onednn_available() {
  if (cpu::onednn_built()) return true;
  MESSAGE("this build has no oneDNN (TOPO_ONEDNN): its checks are skipped");
  return false;
}

TEST_CASE("gemm at Precision::bf16, each backend: 1, 2, 3 threads, single calls and slabs, batched, within bf16 of fp32") {
  if (!kernel_available()) return;
  const int before = num_threads();
  const std::int64_t t = cpu::single_thread_gemm_mnk();
  // Below the single-thread size, and above it (slabs along M, then along N).
  const std::vector<std::array<std::int64_t, 3>> sizes = {
      {33, 17, 100}, {t / (37 * 41) + 3, 37, 41}, {37, t / (37 * 41) + 3, 41}, {1021, 67, 59}};
  std::uint64_t seed = 3001;
  for (GemmBackend backend : bf16_backends()) {
    const GemmBackendGuard use(Precision::bf16, backend);
    CAPTURE(std::string(gemm_backend_name(backend)));  // the name: doctest prints a char* as its address
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      for (const std::array<std::int64_t, 3>& size : sizes)
        for (bool ta : {false, true})
          for (bool tb : {false, true}) {
            const std::int64_t m = size[0], n = size[1], k = size[2];
            CAPTURE(threads);
            CAPTURE(m);
            CAPTURE(n);
            CAPTURE(k);
            CAPTURE(ta);
            CAPTURE(tb);
            const GemmProblem p = make_problem(ta, tb, m, n, k, 0, seed);
            seed += 3;
            Tensor a = Tensor::from_vector(p.a, ta ? Shape{k, m} : Shape{m, k});
            Tensor b = Tensor::from_vector(p.b, tb ? Shape{n, k} : Shape{k, n});
            Tensor c = Tensor::from_vector(p.c0, {m, n});
            {
              GemmPrecisionGuard g(Precision::bf16);
              gemm(ta, tb, 0.5f, a, b, -2.f, c);
            }
            std::vector<float> ref = p.c0;
            cpu::sgemm_bf16_reference(ta, tb, m, n, k, 0.5f, p.a.data(), p.lda, p.b.data(), p.ldb, -2.f, ref.data(), p.ldc);
            check_within(p, c.to_vector<float>(), ref, 0.5f, -2.f, reference_tolerance(k));
          }
    }
    set_num_threads(before);
    // Batched small items run parallel over the batch (cpu::sgemm inside the region: one thread each).
    Tensor a = testing::random_uniform({6, 19, 33}, 41), b = testing::random_uniform({6, 33, 21}, 42);
    const Tensor want = matmul(a, b);
    Tensor got;
    {
      GemmPrecisionGuard g(Precision::bf16);
      got = matmul(a, b);
    }
    TOPO_CHECK_CLOSE(got.to_vector<float>(), want.to_vector<float>(), 33 * fp32_tolerance(33), 0);  // |a b| <= 1
  }
  CHECK(gemm_precision() == Precision::fp32);
}

TEST_CASE("oneDNN bf16 matches the bf16 reference, oneDNN fp32 the exact product: sizes 1-130, transposes, strides") {
  if (!onednn_available() || !kernel_available()) return;
  for_each_problem({1, 7, 33, 130}, {1, 7, 33, 300}, 130 * 130 * 7, 5001, [](const GemmProblem& p) {
    const float alpha = 0.75f, beta = -0.5f;
    std::vector<float> got = p.c0, ref = p.c0;
    cpu::onednn_sgemm_bf16(p.ta, p.tb, p.m, p.n, p.k, alpha, p.a.data(), p.lda, p.b.data(), p.ldb, beta, got.data(),
                           p.ldc);
    cpu::sgemm_bf16_reference(p.ta, p.tb, p.m, p.n, p.k, alpha, p.a.data(), p.lda, p.b.data(), p.ldb, beta, ref.data(),
                              p.ldc);
    check_within(p, got, ref, alpha, beta, reference_tolerance(p.k));
    got = p.c0;
    cpu::onednn_sgemm(p.ta, p.tb, p.m, p.n, p.k, alpha, p.a.data(), p.lda, p.b.data(), p.ldb, beta, got.data(), p.ldc);
    check_within(p, got, exact(p, alpha, beta), alpha, beta, reference_tolerance(p.k));
  });
}

TEST_CASE("AMX bf16 kernel matches the bf16 reference: sizes across its 32 x 32 blocks, transposes, strides, scales") {
  if (!amx_available()) return;
  // alpha = 1 with beta = 0 or 1 stores the tiles straight into c (loading c first for beta = 1); other scales
  // combine a product taken apart. m, n cross the 16-row tiles and 32-wide blocks, k the 32-deep tiles.
  const std::array<std::array<float, 2>, 3> scales = {{{1.f, 0.f}, {1.f, 1.f}, {0.75f, -0.5f}}};
  std::size_t call = 0;
  for_each_problem({1, 7, 16, 33, 70}, {1, 2, 7, 33, 64, 300}, 70 * 70 * 33, 6001, [&](const GemmProblem& p) {
    const float alpha = scales[call % scales.size()][0], beta = scales[call % scales.size()][1];
    ++call;
    CAPTURE(alpha);
    CAPTURE(beta);
    std::vector<float> got = p.c0, ref = p.c0;
    cpu::amx_sgemm_bf16(p.ta, p.tb, p.m, p.n, p.k, alpha, p.a.data(), p.lda, p.b.data(), p.ldb, beta, got.data(),
                        p.ldc);
    cpu::sgemm_bf16_reference(p.ta, p.tb, p.m, p.n, p.k, alpha, p.a.data(), p.lda, p.b.data(), p.ldb, beta, ref.data(),
                              p.ldc);
    check_within(p, got, ref, alpha, beta, reference_tolerance(p.k));
  });
  // A deep k (chunks of k, each after the first added onto c) and a wide n (op(b)'s tiles packed in parts: at
  // k = 384, 1,344 columns fill the kernel's 1 MiB).
  const std::vector<std::array<std::int64_t, 3>> large = {{40, 200, 4100}, {3, 1400, 384}};
  for (const std::array<std::int64_t, 3>& shape : large)
    for (float beta : {0.f, 1.f})
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          const std::int64_t m = shape[0], n = shape[1], k = shape[2];
          CAPTURE(m);
          CAPTURE(n);
          CAPTURE(k);
          CAPTURE(beta);
          CAPTURE(ta);
          CAPTURE(tb);
          const GemmProblem p = make_problem(ta, tb, m, n, k, 1, 6301);
          std::vector<float> got = p.c0, ref = p.c0;
          cpu::amx_sgemm_bf16(ta, tb, m, n, k, 1.f, p.a.data(), p.lda, p.b.data(), p.ldb, beta, got.data(), p.ldc);
          cpu::sgemm_bf16_reference(ta, tb, m, n, k, 1.f, p.a.data(), p.lda, p.b.data(), p.ldb, beta, ref.data(),
                                    p.ldc);
          check_within(p, got, ref, 1.f, beta, reference_tolerance(k));
        }
}

TEST_CASE("AMX bf16 kernel: beta = 0 ignores NaN in c, k = 0 and alpha = 0 scale c, a repeated call is the same") {
  if (!amx_available()) return;
  check_scale_edges(&cpu::amx_sgemm_bf16, 45, {1.f, 2.f}, 78);  // alpha = 1: tiles stored into c; 2: combined apart
  const Tensor a = testing::random_uniform({3000, 300}, 9), b = testing::random_uniform({300, 300}, 10);
  const GemmPrecisionGuard g(Precision::bf16);
  const GemmBackendGuard use(Precision::bf16, GemmBackend::amx);
  CHECK(matmul(a, b, false, true).to_vector<float>() == matmul(a, b, false, true).to_vector<float>());
}

TEST_CASE("oneDNN: beta = 0 ignores NaN in c, k = 0 and alpha = 0 scale c, a repeated call is bitwise the same") {
  if (!onednn_available() || !kernel_available()) return;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  GemmProblem p = make_problem(false, true, 13, 37, 300, 2, 77);
  for (float& x : p.c0) x = nan;
  std::vector<float> got = p.c0;
  cpu::onednn_sgemm(false, true, 13, 37, 300, 1.f, p.a.data(), p.lda, p.b.data(), p.ldb, 0.f, got.data(), p.ldc);
  for (std::int64_t i = 0; i < 13; ++i)
    for (std::int64_t j = 0; j < 37; ++j) REQUIRE(std::isfinite(got[i * p.ldc + j]));
  check_scale_edges(&cpu::onednn_sgemm_bf16, 13, {1.f}, 77);
  // Run to run: the same product twice through gemm at 2 threads (slabs) is bitwise identical.
  const int before = num_threads();
  set_num_threads(2);
  const Tensor a = testing::random_uniform({3000, 300}, 7), b = testing::random_uniform({300, 300}, 8);
  for (Precision precision : {Precision::fp32, Precision::bf16}) {
    const GemmPrecisionGuard g(precision);
    const GemmBackendGuard use(precision, GemmBackend::onednn);
    CHECK(matmul(a, b, false, true).to_vector<float>() == matmul(a, b, false, true).to_vector<float>());
  }
  set_num_threads(before);
}

TEST_CASE("every backend: a product cut into slabs of rows, columns or K is bitwise the same at 1, 2 and 3 threads") {
  // Slabs give each row (column) of c the same single-threaded sum over k at any thread count, and a weight
  // gradient's slabs of K (cpu::kSplitKRatio) are fixed by the shape and added in slab order. A backend whose
  // blocking followed the slab's size, or a K split that followed the thread count, would make results depend
  // on the thread count, and a run that changes its count between steps (apps/train/thread_tuner.hpp) would
  // not repeat.
  const int before = num_threads();
  const Tensor a = testing::random_uniform({2048, 300}, 11), b = testing::random_uniform({300, 300}, 12);
  const Tensor x = testing::random_uniform({8192, 300}, 13), g = testing::random_uniform({8192, 100}, 14);
  REQUIRE(8192 >= cpu::kSplitKRatio * 300);
  REQUIRE(cpu::split_k_parts(100, 300, 8192) > 1);
  for (Precision precision : {Precision::fp32, Precision::bf16})
    for (GemmBackend backend : {GemmBackend::openblas, GemmBackend::onednn, GemmBackend::own, GemmBackend::amx}) {
      if (!gemm_backend_available(precision, backend)) continue;
      CAPTURE(std::string(precision_name(precision)));
      CAPTURE(std::string(gemm_backend_name(backend)));  // the name: doctest prints a char* as its address
      const GemmPrecisionGuard guard(precision);
      const GemmBackendGuard use(precision, backend);
      set_num_threads(1);
      const std::vector<float> rows = matmul(a, b, false, true).to_vector<float>();  // [2048, 300]: slabs of M
      const std::vector<float> cols = matmul(b, a, false, true).to_vector<float>();  // [300, 2048]: slabs of N
      const std::vector<float> ks = matmul(g, x, true, false).to_vector<float>();    // [100, 300] over K = 8192
      for (int threads : {2, 3}) {
        CAPTURE(threads);
        set_num_threads(threads);
        CHECK(matmul(a, b, false, true).to_vector<float>() == rows);
        CHECK(matmul(b, a, false, true).to_vector<float>() == cols);
        CHECK(matmul(g, x, true, false).to_vector<float>() == ks);
      }
    }
  set_num_threads(before);
}

TEST_CASE("GEMM backends: the rule, what each backend can run, clear errors, the guard restores") {
  const GemmCpu zen4{.onednn = true, .avx512_bf16 = true};
  const GemmCpu amx{.onednn = true, .avx512_bf16 = true, .amx_bf16 = true, .amx_tiles = true};
  CHECK(default_gemm_backend(Precision::fp32, zen4) == GemmBackend::onednn);
  CHECK(default_gemm_backend(Precision::bf16, zen4) == GemmBackend::own);
  CHECK(default_gemm_backend(Precision::fp32, amx) == GemmBackend::onednn);
  CHECK(default_gemm_backend(Precision::bf16, amx) == GemmBackend::amx);  // the own kernel on the tiles
  CHECK(default_gemm_backend(Precision::bf16, {.avx512_bf16 = true, .amx_tiles = true}) == GemmBackend::amx);  // no oneDNN
  // Tiles the kernel may not use (no grant from Linux) leave oneDNN's.
  CHECK(default_gemm_backend(Precision::bf16, {.onednn = true, .avx512_bf16 = true, .amx_bf16 = true}) == GemmBackend::onednn);
  CHECK(default_gemm_backend(Precision::fp32, {.onednn = true, .avx512 = true}) == GemmBackend::onednn);  // Skylake-SP
  CHECK(default_gemm_backend(Precision::bf16, {.onednn = true, .avx512 = true}) == GemmBackend::own);
  CHECK(default_gemm_backend(Precision::fp32, {.onednn = true}) == GemmBackend::openblas);  // AVX2 only: not measured
  CHECK(default_gemm_backend(Precision::fp32, {.onednn = false, .avx512_bf16 = true}) == GemmBackend::openblas);
  CHECK(default_gemm_backend(Precision::bf16, {.onednn = false, .avx512_bf16 = true}) == GemmBackend::own);
  CHECK(parse_gemm_backend("onednn") == GemmBackend::onednn);
  CHECK(parse_gemm_backend("amx") == GemmBackend::amx);
  CHECK_FALSE(gemm_backend_available(Precision::fp32, GemmBackend::amx));
  CHECK(gemm_backend_available(Precision::bf16, GemmBackend::amx) == cpu::amx_gemm_supported());
  CHECK_THROWS_WITH_AS(parse_gemm_backend("mkl"), doctest::Contains("'mkl'"), Error);
  CHECK_FALSE(gemm_backend_available(Precision::bf16, GemmBackend::openblas));
  CHECK_FALSE(gemm_backend_available(Precision::fp32, GemmBackend::own));
  CHECK_THROWS_WITH_AS(set_gemm_backend(Precision::bf16, GemmBackend::openblas), doctest::Contains("cblas_sbgemm"), Error);
  CHECK(gemm_backend_available(Precision::fp32, GemmBackend::onednn) == cpu::onednn_built());
  // The process's choice is the rule's (the tests run without TOPO_GEMM_FP32 / TOPO_GEMM_BF16).
  CHECK(gemm_backend(Precision::fp32) == default_gemm_backend(Precision::fp32, gemm_cpu()));
  CHECK(gemm_backend(Precision::bf16) == default_gemm_backend(Precision::bf16, gemm_cpu()));
  const GemmBackend before = gemm_backend(Precision::fp32);
  {
    const GemmBackendGuard use(Precision::fp32, GemmBackend::openblas);
    CHECK(gemm_backend(Precision::fp32) == GemmBackend::openblas);
    CHECK(gemm_backend_line().find("fp32 openblas") != std::string::npos);
  }
  CHECK(gemm_backend(Precision::fp32) == before);
}
