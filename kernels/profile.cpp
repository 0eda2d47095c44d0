#include "kernels/profile.hpp"

#include <atomic>
#include <chrono>
#include <mutex>

#include <fmt/format.h>

#if TOPO_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#include "kernels/device.hpp"

namespace topo::profile {
namespace {

std::atomic<bool> g_enabled{false};
std::atomic<std::int64_t> g_regions{0};
std::mutex g_mutex;
Table g_table;
thread_local Phase t_phase = Phase::Forward;
thread_local int t_depth = 0;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Device work is asynchronous: wait for it so a scope measures its own kernels, not its predecessor's.
void synchronize_devices() {
#if TOPO_WITH_CUDA
  if (cuda_available()) cudaDeviceSynchronize();
#endif
}

}  // namespace

const char* category_name(Category c) {
  static const char* names[] = {"gemm",    "sparse (spmm/sddmm/softmax/attention)", "layer norm", "softmax",
                                "elementwise", "indexing (gather/scatter/concat)", "loss", "optimizer", "graph formats",
                                "fused attention (dense/band)"};
  return names[static_cast<int>(c)];
}
const char* phase_name(Phase p) { return p == Phase::Forward ? "forward" : "backward"; }

void enable(bool on) { g_enabled.store(on, std::memory_order_relaxed); }
bool enabled() { return g_enabled.load(std::memory_order_relaxed); }
void reset() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_table = Table{};
  g_regions.store(0, std::memory_order_relaxed);
}
void count_parallel_region() {
  if (enabled()) g_regions.fetch_add(1, std::memory_order_relaxed);
}
std::int64_t parallel_regions() { return g_regions.load(std::memory_order_relaxed); }
void set_phase(Phase phase) { t_phase = phase; }
Phase phase() { return t_phase; }

Table snapshot() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_table;
}

Scope::Scope(Category category) : category_(category) {
  if (!enabled() || t_depth++ > 0) return;  // only the outermost scope records (ops call ops)
  active_ = true;
  synchronize_devices();
  start_ns_ = now_ns();
}

Scope::~Scope() {
  if (!active_) {
    if (t_depth > 0) --t_depth;
    return;
  }
  synchronize_devices();
  const double seconds = static_cast<double>(now_ns() - start_ns_) * 1e-9;
  --t_depth;
  std::lock_guard<std::mutex> lock(g_mutex);
  Entry& e = g_table[static_cast<int>(t_phase)][static_cast<int>(category_)];
  e.seconds += seconds;
  e.calls += 1;
}

std::string report() {
  const Table t = snapshot();
  double total = 0;
  for (const auto& row : t)
    for (const Entry& e : row) total += e.seconds;
  std::string out = fmt::format("{:<40} {:>12} {:>12} {:>8}\n", "op category", "forward s", "backward s", "share");
  for (int c = 0; c < static_cast<int>(Category::Count); ++c) {
    const double f = t[0][c].seconds, b = t[1][c].seconds;
    if (t[0][c].calls + t[1][c].calls == 0) continue;
    out += fmt::format("{:<40} {:>12.3f} {:>12.3f} {:>7.1f}%\n", category_name(static_cast<Category>(c)), f, b,
                       total > 0 ? 100.0 * (f + b) / total : 0.0);
  }
  double tf = 0, tb = 0;
  for (int c = 0; c < static_cast<int>(Category::Count); ++c) tf += t[0][c].seconds, tb += t[1][c].seconds;
  out += fmt::format("{:<40} {:>12.3f} {:>12.3f}\n", "total in kernels", tf, tb);
  out += fmt::format("{:<40} {:>12}\n", "parallel regions opened", parallel_regions());
  return out;
}

}  // namespace topo::profile
