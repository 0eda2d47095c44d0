#pragma once
// The Star-Transformer paper's masked-summation probe (Guo et al. 2019, §5.1; docs/models.md §5).
// An example is X in R^{len x d}: feature 0 of each position is a mask in {0, 1} with exactly k ones,
// features 1..d-1 are U[0, 1). The target is the (d-1)-vector sum of the value features over the masked
// positions. Every example is a pure function of (seed, split, index) — a counter-based stream per example —
// so the three splits are disjoint streams, regenerate identically, and any subset can be drawn in any order.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/tensor.hpp"
#include "models/model.hpp"

namespace topo::apps {

enum class Split { Train, Dev, Test };
std::string split_name(Split split);

struct MaskedSumSpec {
  std::int64_t n = 200;     // sequence length (the longest one when n_min > 0)
  std::int64_t n_min = 0;   // 0: every example has length n (the paper); else lengths uniform in [n_min, n]
  std::int64_t k = 10;      // masked positions per example (k <= shortest length)
  std::int64_t d = 10;      // features per position: 1 mask + (d - 1) values
  std::uint64_t seed = 1;
  // Throws topo::Error naming the inconsistent field.
  void validate() const;
  std::int64_t out_dim() const { return d - 1; }
};

struct MaskedSumExample {
  std::int64_t length = 0;
  std::vector<float> x;  // [length, d], row-major
  std::vector<float> y;  // [d - 1]
};

// Inputs as features (no token ids) plus float32 targets [B, d - 1].
struct RegressionBatch {
  models::SequenceBatch inputs;
  Tensor targets;
  RegressionBatch to(Device device) const { return {inputs.to(device), targets.to(device)}; }
};

class MaskedSumTask {
 public:
  explicit MaskedSumTask(const MaskedSumSpec& spec);
  const MaskedSumSpec& spec() const { return spec_; }

  MaskedSumExample example(Split split, std::int64_t index) const;
  // The examples `indices` of `split`, concatenated without padding (features [total, d]).
  RegressionBatch batch(Split split, const std::vector<std::int64_t>& indices) const;
  // The examples [begin, end) of `split`.
  RegressionBatch range(Split split, std::int64_t begin, std::int64_t end) const;

  // The paper's baseline "always guess k/2 per output", measured on examples [0, count) of `split`
  // (not the k/12 formula: the value reported is the one the model is compared with).
  double constant_guess_mse(Split split, std::int64_t count) const;
  float constant_guess() const { return static_cast<float>(spec_.k) / 2.f; }

 private:
  MaskedSumSpec spec_;
};

}  // namespace topo::apps
