#pragma once
// Linear-chain CRF over sentences concatenated without padding (the tagging task's batches), CPU only.
//
//   score(y) = start[y_0] + sum_t emissions[t, y_t] + sum_{t>0} transitions[y_{t-1}, y_t] + end[y_last]
//   NLL      = log Z - score(gold),   log Z = logsumexp over every allowed tag path (forward algorithm)
//
// Everything runs in log space in double (logsumexp with the maximum subtracted), so long sentences and large
// scores neither overflow nor underflow. Constraints (the tag scheme's impossible transitions, e.g. O -> I-X in
// IOB2) remove paths: their transitions are -inf in both the forward algorithm and Viterbi, so the model never
// spends probability on them and never decodes them. The gradient is exact: marginals from forward-backward
// minus the gold path's indicator counts (emissions, transitions, start, end).
// Parallel strategy: none; sentences are processed one after another on the host (K is small, T ~ 30).
#include <cstdint>
#include <vector>

#include "kernels/tensor.hpp"
#include "nn/module.hpp"
#include "nn/var.hpp"

namespace topo::nn {

// Allowed moves among K tags; empty vectors allow everything.
struct CrfConstraints {
  std::vector<std::uint8_t> transition;  // [K * K]: transition[i * K + j] = 1 when tag j may follow tag i
  std::vector<std::uint8_t> start;       // [K]: may begin a sentence
  std::vector<std::uint8_t> end;         // [K]: may end a sentence
};

// Mean over sentences of the negative log-likelihood of `tags` (int64 [N]); 0-d. emissions [N, K], transitions
// [K, K], start and end [K]; lengths sum to N, each >= 1. A gold path the constraints forbid is a topo::Error
// naming the sentence and position. Differentiable in emissions, transitions, start and end.
Var crf_nll(const Var& emissions, const Var& transitions, const Var& start, const Var& end,
            const std::vector<std::int64_t>& lengths, const Tensor& tags, const CrfConstraints& constraints = {});

// The highest-scoring allowed tag path of each sentence, concatenated: int64 [N] values (Viterbi).
std::vector<std::int64_t> crf_viterbi(const Tensor& emissions, const Tensor& transitions, const Tensor& start,
                                      const Tensor& end, const std::vector<std::int64_t>& lengths,
                                      const CrfConstraints& constraints = {});

// The CRF's parameters as a module (transitions [K, K], start [K], end [K], zeros at reset: the emissions
// alone decide until training says otherwise) and its constraints.
class LinearChainCrf : public Module {
 public:
  explicit LinearChainCrf(std::int64_t num_tags, CrfConstraints constraints = {});
  Var nll(const Var& emissions, const std::vector<std::int64_t>& lengths, const Tensor& tags) const {
    return crf_nll(emissions, transitions, start, end, lengths, tags, constraints_);
  }
  std::vector<std::int64_t> decode(const Tensor& emissions, const std::vector<std::int64_t>& lengths) const {
    return crf_viterbi(emissions, transitions.data(), start.data(), end.data(), lengths, constraints_);
  }
  const CrfConstraints& constraints() const { return constraints_; }
  Var transitions, start, end;

 private:
  CrfConstraints constraints_;
};

}  // namespace topo::nn
