#pragma once
// The Multi-Scale Transformer paper's mirrored-summation probe (Guo et al., AAAI 2020, "Hierarchical or
// flexible"; ../shared/docs/models.md §5): a_1..a_N in R^d with U[0, 1) entries, target
// y = sum_{i=1..K} a_i ⊙ a_{N-i+1} in R^d. Small K needs only the two ends of the sequence; large K needs
// pairs from every distance, so the curve of MSE against K shows which attention scales a model can use.
// Examples are generated per (seed, split, index) (apps/tasks/generated_regression.hpp).
#include <cstdint>

#include "apps/tasks/generated_regression.hpp"

namespace topo::apps {

struct MirroredSumSpec {
  std::int64_t n = 100;  // sequence length N
  std::int64_t d = 50;   // features per position
  std::int64_t k = 10;   // pairs summed, 1 <= K <= N
  std::uint64_t seed = 1;
  void validate() const;  // throws naming the bad field
};

class MirroredSumTask final : public ExampleGenerator {
 public:
  explicit MirroredSumTask(const MirroredSumSpec& spec);
  const MirroredSumSpec& spec() const { return spec_; }

  // x [N, d]; y [d], summed in double in i order and rounded once.
  GeneratedExample example(Split split, std::int64_t index) const override;
  std::int64_t input_dim() const override { return spec_.d; }
  std::int64_t output_dim() const override { return spec_.d; }
  std::int64_t max_length() const override { return spec_.n; }
  // The target's mean: K/4 (E[a]E[a'] = 1/4 per pair), or 1/3 for the middle element's own square.
  float constant_guess() const override;
  std::string constant_guess_name() const override { return "always guess the target's mean per output"; }

 private:
  MirroredSumSpec spec_;
};

class MirroredSumRegression final : public GeneratedRegression {
 public:
  MirroredSumRegression(const MirroredSumSpec& spec, Sizes sizes, std::int64_t eval_batch, std::int64_t max_length = 0)
      : GeneratedRegression(std::make_shared<MirroredSumTask>(spec), sizes, eval_batch, "mirrored-sum", max_length) {}
};

}  // namespace topo::apps
