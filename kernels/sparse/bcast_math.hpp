#pragma once
// Plain broadcast description the CPU and CUDA kernels share.
#include <cstdint>

#include "kernels/hd.hpp"

namespace topo {

struct BcastView {
  std::int64_t out_len = 1;     // output elements per row (for dot, excluding the reduced dim)
  std::int64_t lhs_len = 1;     // elements per lhs row
  std::int64_t rhs_len = 1;     // elements per rhs row
  std::int64_t reduce_len = 1;  // dot: length of the reduced last dim; 1 otherwise
  const std::int64_t* lhs_off = nullptr;  // null: no broadcasting, offset f * reduce_len
  const std::int64_t* rhs_off = nullptr;
};

TOPO_HD std::int64_t bcast_lhs(const BcastView& b, std::int64_t f) {
  return b.lhs_off ? b.lhs_off[f] : f * b.reduce_len;
}
TOPO_HD std::int64_t bcast_rhs(const BcastView& b, std::int64_t f) {
  return b.rhs_off ? b.rhs_off[f] : f * b.reduce_len;
}

}  // namespace topo
