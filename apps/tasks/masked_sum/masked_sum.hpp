#pragma once
// The Star-Transformer paper's masked-summation probe (Guo et al. 2019, §5.1; ../shared/docs/models.md §5).
// An example is X in R^{len x d}: feature 0 of each position is a mask in {0, 1} with exactly k ones,
// features 1..d-1 are U[0, 1). The target is the (d-1)-vector sum of the value features over the masked
// positions. Examples are generated per (seed, split, index) (apps/tasks/generated_regression.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "apps/tasks/generated_regression.hpp"

namespace topo::apps {

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

using MaskedSumExample = GeneratedExample;

class MaskedSumTask final : public ExampleGenerator {
 public:
  explicit MaskedSumTask(const MaskedSumSpec& spec);
  const MaskedSumSpec& spec() const { return spec_; }

  // x [length, d]: mask feature then d - 1 values per position; y [d - 1].
  GeneratedExample example(Split split, std::int64_t index) const override;
  std::int64_t input_dim() const override { return spec_.d; }
  std::int64_t output_dim() const override { return spec_.out_dim(); }
  std::int64_t max_length() const override { return spec_.n; }
  // The paper's baseline "always guess k/2 per output" (measured by constant_guess_mse, not the k/12 formula).
  float constant_guess() const override { return static_cast<float>(spec_.k) / 2.f; }
  std::string constant_guess_name() const override { return "always guess k/2 per output"; }

 private:
  MaskedSumSpec spec_;
};

// The probe as a training task: regression with MSE, `sizes` examples per split, evaluated in batches of
// `eval_batch`; the baseline is the constant k/2 guess.
class MaskedSumRegression final : public GeneratedRegression {
 public:
  MaskedSumRegression(const MaskedSumSpec& spec, Sizes sizes, std::int64_t eval_batch, std::int64_t max_length = 0)
      : GeneratedRegression(std::make_shared<MaskedSumTask>(spec), sizes, eval_batch, "masked-sum", max_length) {}
  const MaskedSumTask& data() const { return static_cast<const MaskedSumTask&>(generator()); }
};

}  // namespace topo::apps
