#pragma once
// Per-op-category timing for `topo-train --profile`: every public kernel entry point opens a scope of its
// category; while profiling is on, the outermost scope on a thread adds its wall time to (phase, category),
// where the phase (forward / backward / optimizer) is set by whoever drives the step (the autograd engine
// marks backward). On CUDA each scope synchronises the device first, so times are the kernels' own.
// Off (the default) a scope costs one relaxed atomic load.
#include <array>
#include <cstdint>
#include <string>

namespace topo::profile {

// Attention: the fused dense and banded attention kernels (flash_attention), whose tile products would
// otherwise read as GEMM time next to the projections'.
enum class Category : std::uint8_t { Gemm, Sparse, LayerNorm, Softmax, Elementwise, Indexing, Loss, Optimizer, Graph,
                                     Attention, Count };
enum class Phase : std::uint8_t { Forward, Backward, Count };

const char* category_name(Category c);
const char* phase_name(Phase p);

void enable(bool on = true);
bool enabled();
void reset();

// The phase scopes are charged to (per thread); PhaseGuard restores the previous one.
void set_phase(Phase phase);
Phase phase();
class PhaseGuard {
 public:
  explicit PhaseGuard(Phase phase) : previous_(profile::phase()) { set_phase(phase); }
  ~PhaseGuard() { set_phase(previous_); }
  PhaseGuard(const PhaseGuard&) = delete;
  PhaseGuard& operator=(const PhaseGuard&) = delete;

 private:
  Phase previous_;
};

// Parallel regions opened while profiling is on, to see how many a step crosses (each is a fork and a join
// that a busy neighbour can stretch by a scheduler slice). Counted: parallel_for, parallel_rows, the CSR
// builders, batched GEMMs over the batch, and GEMMs big enough for OpenBLAS to thread (its M*N*K > 2^18 rule).
void count_parallel_region();
std::int64_t parallel_regions();

struct Entry {
  double seconds = 0;
  std::int64_t calls = 0;
};
using Table = std::array<std::array<Entry, static_cast<int>(Category::Count)>, static_cast<int>(Phase::Count)>;
Table snapshot();
// A human table: seconds and share per category, forward and backward, with totals.
std::string report();

class Scope {
 public:
  explicit Scope(Category category);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  Category category_;
  bool active_ = false;
  std::int64_t start_ns_ = 0;
};

}  // namespace topo::profile

#define TOPO_PROFILE(category) const ::topo::profile::Scope topo_profile_scope_(::topo::profile::Category::category)
