#pragma once
// Generalized SDDMM: for every edge (u -> v, e), out[e] = op(lhs[target], rhs[target]) with targets among
// the source node u, the destination node v and the edge e. Shared by the CPU and CUDA backends.
#include <cstdint>

#include "kernels/hd.hpp"
#include "kernels/sparse/bcast_math.hpp"

namespace topo {

enum class SddmmOp : std::uint8_t { Add, Sub, Mul, Div, Dot, CopyLhs, CopyRhs };
enum class Target : std::uint8_t { U, V, E };

constexpr bool sddmm_uses_lhs(SddmmOp op) { return op != SddmmOp::CopyRhs; }
constexpr bool sddmm_uses_rhs(SddmmOp op) { return op != SddmmOp::CopyLhs; }

// Row of `target` for the edge (u, v, e).
TOPO_HD std::int64_t target_row(Target t, std::int64_t u, std::int64_t v, std::int64_t e) {
  return t == Target::U ? u : t == Target::V ? v : e;
}

// One output element; `l` and `r` point at the operands' elements (for Dot, at K-long chunks).
TOPO_HD float sddmm_element(SddmmOp op, const float* l, const float* r, std::int64_t k) {
  switch (op) {
    case SddmmOp::Add: return *l + *r;
    case SddmmOp::Sub: return *l - *r;
    case SddmmOp::Mul: return *l * *r;
    case SddmmOp::Div: return *l / *r;
    case SddmmOp::Dot: {
      float s = 0.f;
      for (std::int64_t i = 0; i < k; ++i) s += l[i] * r[i];
      return s;
    }
    case SddmmOp::CopyLhs: return *l;
    case SddmmOp::CopyRhs: return *r;
  }
  return 0.f;
}

namespace cuda {
// csr rows are destinations (v), indices sources (u), eids edge ids; out [nnz, out_len] indexed by eid.
void gsddmm(SddmmOp op, const std::int32_t* indptr, const std::int32_t* indices, const std::int32_t* eids,
            std::int64_t rows, const float* lhs, const float* rhs, Target lhs_target, Target rhs_target,
            BcastView bcast, float* out);
void gsddmm(SddmmOp op, const std::int64_t* indptr, const std::int64_t* indices, const std::int64_t* eids,
            std::int64_t rows, const float* lhs, const float* rhs, Target lhs_target, Target rhs_target,
            BcastView bcast, float* out);
}  // namespace cuda

}  // namespace topo
