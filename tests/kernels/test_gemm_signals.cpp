// GEMMs interrupted by signals. oneDNN 2.x's JIT fp32 GEMM points rsp into a heap buffer while it runs (oneDNN
// issue #4845), so a signal handler that runs on that thread writes its frame into the heap: malloc aborts
// later ("corrupted size vs. prev_size"), which is how topo-train died when SIGINT or SIGTERM reached it
// inside a GEMM (scripts/stop_signal_test.sh). gemm_onednn.cpp holds the asynchronous signals while oneDNN
// runs. Here a timer sends SIGALRM to the process every 20 us while every CPU GEMM backend multiplies on one and
// two threads, called directly (oneDNN's own OpenMP threads) and through cpu::sgemm (its slabs); the heap
// is churned between calls so corruption aborts the test, and every product is checked.
#include <signal.h>
#include <sys/time.h>

#include <atomic>
#include <chrono>
#include <cmath>
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

// SIGALRM lands on whichever thread runs (OpenMP's workers too): a lock-free atomic, which a handler may touch.
std::atomic<int> g_alarms{0};
static_assert(std::atomic<int>::is_always_lock_free);
extern "C" void count_alarm(int) {  // its frame is written below the interrupted rsp
  g_alarms.fetch_add(1, std::memory_order_relaxed);
}

// SIGALRM to the process every `period_us` for the guard's life (no SA_ONSTACK: handlers rarely ask for it).
class AlarmStorm {
 public:
  explicit AlarmStorm(long period_us) {
    struct sigaction action {};
    action.sa_handler = count_alarm;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &action, &old_);
    const itimerval timer{{0, period_us}, {0, period_us}};
    setitimer(ITIMER_REAL, &timer, nullptr);
  }
  ~AlarmStorm() {
    const itimerval off{};
    setitimer(ITIMER_REAL, &off, nullptr);
    sigaction(SIGALRM, &old_, nullptr);
  }
  AlarmStorm(const AlarmStorm&) = delete;
  AlarmStorm& operator=(const AlarmStorm&) = delete;

 private:
  struct sigaction old_ {};
};

using Call = void (*)(bool, bool, std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t,
                      const float*, std::int64_t, float, float*, std::int64_t);

// Runs `call` on [n, n] x [n, n] for `seconds` with fresh heap blocks each time; returns how many products
// differed from the first one beyond `tol` of sum |a b| (n = 96: every product is checked against call 0's).
int products_under_alarms(Call call, std::int64_t n, double seconds, double tol) {
  const auto a = testing::random_uniform({n, n}, 11).to_vector<float>();
  const auto b = testing::random_uniform({n, n}, 12).to_vector<float>();
  std::vector<float> first(static_cast<std::size_t>(n * n));
  call(false, true, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, first.data(), n);
  int wrong = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    std::vector<std::vector<float>> churn;  // blocks around c, so a stray write lands in malloc's metadata
    for (int i = 0; i < 8; ++i) churn.emplace_back(static_cast<std::size_t>(64 + 97 * i), 1.f);
    std::vector<float> c(static_cast<std::size_t>(n * n), 0.f);
    call(false, true, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
    for (std::size_t e = 0; e < c.size(); ++e)
      if (!(std::fabs(c[e] - first[e]) <= tol * n)) {
        ++wrong;
        break;
      }
  }
  return wrong;
}

void through_sgemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                   std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  cpu::sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace

TEST_CASE("GEMMs under a storm of signals: the heap stays intact and every product is right, each backend, 1 and 2 threads") {
  struct Case {
    const char* name;
    Precision precision;
    GemmBackend backend;
    Call direct;  // the backend's single product, called outside any parallel region
  };
  std::vector<Case> cases = {{"openblas fp32", Precision::fp32, GemmBackend::openblas, nullptr}};
  if (cpu::onednn_built()) cases.push_back({"onednn fp32", Precision::fp32, GemmBackend::onednn, &cpu::onednn_sgemm});
  else MESSAGE("this build has no oneDNN: only OpenBLAS and the own bf16 kernel are checked");
  if (cpu::bf16_gemm_cpu_supported()) {
    cases.push_back({"own bf16", Precision::bf16, GemmBackend::own, &cpu::sgemm_bf16});
    if (cpu::onednn_built())
      cases.push_back({"onednn bf16", Precision::bf16, GemmBackend::onednn, &cpu::onednn_sgemm_bf16});
    if (cpu::amx_gemm_supported())  // the tile state (8 KiB) in every signal frame
      cases.push_back({"amx bf16", Precision::bf16, GemmBackend::amx, &cpu::amx_sgemm_bf16});
  }
  const int saved_threads = num_threads();
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const GemmPrecisionGuard precision(c.precision);
    const GemmBackendGuard backend(c.precision, c.backend);
    const double tol = c.precision == Precision::bf16 ? 1e-5 : 1e-6;  // the same call twice: same order, same bits
    for (int threads : {1, 2}) {
      CAPTURE(threads);
      set_num_threads(threads);
      g_alarms.store(0);
      {
        const AlarmStorm storm(20);
        CHECK(products_under_alarms(&through_sgemm, 192, 0.25, tol) == 0);
        if (c.direct) CHECK(products_under_alarms(c.direct, 192, 0.25, tol) == 0);
      }
      CHECK(g_alarms.load() > 100);  // the storm reached the process: the checks above ran under it
    }
  }
  set_num_threads(saved_threads);
}
