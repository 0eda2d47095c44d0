#pragma once
// Per-sentence pooling of token states over a batch concatenated without padding.
#include <cstdint>
#include <string>
#include <vector>

#include "nn/var.hpp"

namespace topo::models {

enum class Pooling { Sum, Mean, Max };
// "sum", "mean", "max"; throws naming an unknown one.
Pooling parse_pooling(const std::string& name);
std::string pooling_name(Pooling pooling);

// tokens [total, H] with sentence b owning rows [offset_b, offset_b + lengths[b]) -> [B, H].
// Equal lengths L: a zero-copy reshape to [B, L, H] and a reduction over dim 1. Otherwise the rows are
// gathered into [B, max_len, H] with missing positions pointing at one appended pad row (0 for sum/mean,
// -inf for max, so it never wins: every sentence has >= 1 token) — built from differentiable ops only, so
// the backward needs nothing new. Mean divides by the true lengths.
nn::Var pool_sentences(const nn::Var& tokens, const std::vector<std::int64_t>& lengths, Pooling pooling);

}  // namespace topo::models
