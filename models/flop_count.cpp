// The parts every model's FLOP count shares (see flop_count.hpp for what is counted).
#include "models/flop_count.hpp"

#include "kernels/error.hpp"

namespace topo::models {

double total_tokens(const std::vector<std::int64_t>& lengths) {
  double n = 0;
  for (std::int64_t len : lengths) {
    TOPO_CHECK(len >= 1, "flop count: sentence length {} (must be >= 1)", len);
    n += static_cast<double>(len);
  }
  return n;
}

double embedding_flops(const EmbeddingConfig& e, std::int64_t tokens) {
  const std::int64_t width = e.input_dim > 0 ? e.input_dim : e.embedding_dim;
  return width > 0 && width != e.hidden ? matmul_flops(static_cast<double>(tokens), static_cast<double>(width),
                                                       static_cast<double>(e.hidden))
                                        : 0.0;
}

}  // namespace topo::models
