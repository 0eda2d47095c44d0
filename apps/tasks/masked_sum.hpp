#pragma once
// The Star-Transformer paper's masked-summation probe (Guo et al. 2019, §5.1; docs/models.md §5).
// An example is X in R^{len x d}: feature 0 of each position is a mask in {0, 1} with exactly k ones,
// features 1..d-1 are U[0, 1). The target is the (d-1)-vector sum of the value features over the masked
// positions. Every example is a pure function of (seed, split, index) — a counter-based stream per example —
// so the three splits are disjoint streams, regenerate identically, and any subset can be drawn in any order.
#include <cstdint>
#include <string>
#include <vector>

#include "apps/tasks/task.hpp"
#include "kernels/tensor.hpp"
#include "models/model.hpp"

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

struct MaskedSumExample {
  std::int64_t length = 0;
  std::vector<float> x;  // [length, d], row-major
  std::vector<float> y;  // [d - 1]
};

class MaskedSumTask {
 public:
  explicit MaskedSumTask(const MaskedSumSpec& spec);
  const MaskedSumSpec& spec() const { return spec_; }

  MaskedSumExample example(Split split, std::int64_t index) const;
  // The examples `indices` of `split`, concatenated without padding: features [total, d] (no token ids),
  // float32 targets [B, d - 1].
  TaskBatch batch(Split split, const std::vector<std::int64_t>& indices) const;
  // The examples [begin, end) of `split`.
  TaskBatch range(Split split, std::int64_t begin, std::int64_t end) const;

  // The paper's baseline "always guess k/2 per output", measured on examples [0, count) of `split`
  // (not the k/12 formula: the value reported is the one the model is compared with).
  double constant_guess_mse(Split split, std::int64_t count) const;
  float constant_guess() const { return static_cast<float>(spec_.k) / 2.f; }

 private:
  MaskedSumSpec spec_;
};

// The probe as a training task: regression with MSE, `sizes` examples per split, evaluated in batches of
// `eval_batch`; the baseline is the constant k/2 guess.
class MaskedSumRegression final : public Task {
 public:
  struct Sizes {
    std::int64_t train = 10000, dev = 10000, test = 10000;
  };
  MaskedSumRegression(const MaskedSumSpec& spec, Sizes sizes, std::int64_t eval_batch);
  const MaskedSumTask& data() const { return data_; }

  std::int64_t input_dim() const override { return data_.spec().d; }
  std::int64_t max_length() const override { return data_.spec().n; }
  std::shared_ptr<models::SequenceModel> make_model(std::shared_ptr<models::SequenceEncoder> encoder,
                                                    const models::HeadOptions& head) const override;
  std::int64_t size(Split split) const override;
  TaskBatch batch(Split split, const std::vector<std::int64_t>& indices) const override {
    return data_.batch(split, indices);
  }
  nn::Var loss(const nn::Var& output, const Tensor& targets) const override;
  std::string metric() const override { return "mse"; }
  bool higher_is_better() const override { return false; }
  Evaluation evaluate(models::SequenceModel& model, Split split, Device device) const override;
  nlohmann::json baseline(Split split) const override;

 private:
  MaskedSumTask data_;
  Sizes sizes_;
  std::int64_t eval_batch_;
};

// Mean squared error of `model` over examples [0, count) of `split`, per output element.
double evaluate_mse(models::SequenceModel& model, const MaskedSumTask& task, Split split, std::int64_t count,
                    std::int64_t batch, Device device);

}  // namespace topo::apps
