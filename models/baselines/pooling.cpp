#include "models/baselines/pooling.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "kernels/error.hpp"
#include "nn/ops.hpp"

namespace topo::models {

Pooling parse_pooling(const std::string& name) {
  if (name == "sum") return Pooling::Sum;
  if (name == "mean") return Pooling::Mean;
  if (name == "max") return Pooling::Max;
  fail("unknown pooling '{}': expected sum, mean or max", name);
}

std::string pooling_name(Pooling pooling) {
  switch (pooling) {
    case Pooling::Sum: return "sum";
    case Pooling::Mean: return "mean";
    case Pooling::Max: return "max";
  }
  return "?";
}

nn::Var pool_sentences(const nn::Var& tokens, const std::vector<std::int64_t>& lengths, Pooling pooling) {
  TOPO_CHECK(tokens.defined() && tokens.ndim() == 2, "pool_sentences: tokens must be [total, H], got {}",
             tokens.defined() ? tokens.data().str() : std::string("undefined"));
  TOPO_CHECK(!lengths.empty(), "pool_sentences: empty batch");
  for (std::size_t b = 0; b < lengths.size(); ++b)
    TOPO_CHECK(lengths[b] >= 1, "pool_sentences: sentence {} has length {} (must be >= 1)", b, lengths[b]);
  const std::int64_t total = std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0});
  TOPO_CHECK(total == tokens.size(0), "pool_sentences: lengths sum to {} but tokens has {} rows", total,
             tokens.size(0));
  const auto batch = static_cast<std::int64_t>(lengths.size());
  const std::int64_t hidden = tokens.size(1);
  const std::int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  const bool equal = std::all_of(lengths.begin(), lengths.end(), [&](std::int64_t l) { return l == longest; });

  nn::Var grid;  // [B, longest, H]
  if (equal) {
    grid = nn::reshape(tokens, {batch, longest, hidden});
  } else {
    const float pad_value = pooling == Pooling::Max ? -std::numeric_limits<float>::infinity() : 0.f;
    const nn::Var pad(Tensor::full({1, hidden}, pad_value, tokens.device()));
    const nn::Var padded = nn::concat({tokens, pad}, 0);  // row `total` is the pad row
    std::vector<std::int64_t> index(static_cast<std::size_t>(batch * longest), total);
    std::int64_t offset = 0;
    for (std::int64_t b = 0; b < batch; ++b) {
      const std::int64_t len = lengths[static_cast<std::size_t>(b)];
      for (std::int64_t i = 0; i < len; ++i) index[static_cast<std::size_t>(b * longest + i)] = offset + i;
      offset += len;
    }
    const Tensor index_t = Tensor::from_vector(index, {batch * longest}, tokens.device());
    grid = nn::reshape(nn::index_select(padded, index_t), {batch, longest, hidden});
  }
  switch (pooling) {
    case Pooling::Sum: return nn::sum(grid, 1);
    case Pooling::Max: return nn::max(grid, 1);
    case Pooling::Mean: {
      if (equal) return nn::mean(grid, 1);
      std::vector<float> inv(lengths.size());
      for (std::size_t b = 0; b < lengths.size(); ++b) inv[b] = 1.f / static_cast<float>(lengths[b]);
      const nn::Var scale(Tensor::from_vector(inv, {batch, 1}, tokens.device()));
      return nn::mul(nn::sum(grid, 1), scale);
    }
  }
  fail("pool_sentences: unknown pooling");
}

}  // namespace topo::models
