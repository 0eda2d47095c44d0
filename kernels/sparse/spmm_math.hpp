#pragma once
// Generalized SpMM: out[v] = reduce over in-edges (u -> v, e) of message(u_feat[u], e_feat[e]).
// The message and reduce functions are composed here (DGL's binary-op x reducer templates) and shared by
// the CPU and CUDA backends.
#include <cmath>
#include <cstdint>

#include "kernels/hd.hpp"
#include "kernels/sparse/bcast_math.hpp"

namespace topo {

enum class MessageOp : std::uint8_t { CopyU, CopyE, UAddE, USubE, UMulE, UDivE };
enum class SpmmReduce : std::uint8_t { Sum, Max, Min, Mean };

constexpr bool message_uses_u(MessageOp op) { return op != MessageOp::CopyE; }
constexpr bool message_uses_e(MessageOp op) { return op != MessageOp::CopyU; }
// Whether gspmm reads the CSR's edge ids: for edge data, and for max / min, which record the winning edge. Where
// it does not (copy_u summed or averaged) a structure-only view will do (kernels/sparse/format.hpp).
constexpr bool spmm_reads_edge_ids(MessageOp op, SpmmReduce reduce) {
  return message_uses_e(op) || reduce == SpmmReduce::Max || reduce == SpmmReduce::Min;
}

TOPO_HD float message(MessageOp op, float u, float e) {
  switch (op) {
    case MessageOp::CopyU: return u;
    case MessageOp::CopyE: return e;
    case MessageOp::UAddE: return u + e;
    case MessageOp::USubE: return u - e;
    case MessageOp::UMulE: return u * e;
    case MessageOp::UDivE: return u / e;
  }
  return 0.f;
}

// Identity of the reduction: what an accumulator starts from.
TOPO_HD float reduce_identity(SpmmReduce r) {
  return r == SpmmReduce::Max ? -INFINITY : r == SpmmReduce::Min ? INFINITY : 0.f;
}

// Folds `value` into `acc`; returns true when `value` becomes the new arg (max/min), for argument tracking.
TOPO_HD bool reduce_fold(SpmmReduce r, float& acc, float value) {
  switch (r) {
    case SpmmReduce::Sum:
    case SpmmReduce::Mean: acc += value; return false;
    case SpmmReduce::Max: if (value > acc) { acc = value; return true; } return false;
    case SpmmReduce::Min: if (value < acc) { acc = value; return true; } return false;
  }
  return false;
}

// Final value of a row with `degree` entries. A row without entries gives 0 for every reducer (DGL's
// convention): max/min of nothing is 0, not +-inf, and its arg indices are -1.
TOPO_HD float reduce_finish(SpmmReduce r, float acc, std::int64_t degree) {
  if (degree == 0) return 0.f;
  return r == SpmmReduce::Mean ? acc / static_cast<float>(degree) : acc;
}

namespace cuda {
// csr rows are destinations: indptr [rows+1], indices (source ids) and eids [nnz], device memory.
// ufeat [num_src, lhs_len], efeat [E, rhs_len], out [rows, out_len]; arg_u/arg_e [rows, out_len] or null.
// `bcast` offsets, when present, point to device memory.
void gspmm(MessageOp op, SpmmReduce reduce, const std::int32_t* indptr, const std::int32_t* indices,
           const std::int32_t* eids, std::int64_t rows, const float* ufeat, const float* efeat, BcastView bcast,
           float* out, std::int64_t* arg_u, std::int64_t* arg_e);
void gspmm(MessageOp op, SpmmReduce reduce, const std::int64_t* indptr, const std::int64_t* indices,
           const std::int64_t* eids, std::int64_t rows, const float* ufeat, const float* efeat, BcastView bcast,
           float* out, std::int64_t* arg_u, std::int64_t* arg_e);
}  // namespace cuda

}  // namespace topo
