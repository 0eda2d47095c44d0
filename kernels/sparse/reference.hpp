#pragma once
// Naive CPU references of the sparse kernels (llm.c's way, beside the kernels): every op written from its
// definition over a plain COO edge list, walking all edges for every destination (quadratic, on purpose: no
// CSR, no tiling, no threads), accumulating in double where it sums. The tests compare every backend against
// them (tests/kernels/test_op_table.cpp, test_spmm.cpp, test_sddmm_softmax.cpp, test_attention.cpp); nothing
// in the library calls them.
#include <cstdint>
#include <vector>

#include "kernels/sparse/sddmm_math.hpp"
#include "kernels/sparse/spmm_math.hpp"

namespace topo::reference {

// Edge e runs src[e] -> dst[e]; its id is its position (the kernels' COO edge id).
struct Coo {
  std::int64_t num_src = 0, num_dst = 0;
  std::vector<std::int64_t> src, dst;
  std::int64_t num_edges() const { return static_cast<std::int64_t>(src.size()); }
};

float spmm_message(MessageOp op, float u, float e);
// out [num_dst, H, D] = reduce over v's in-edges of message(uf[src, h, d], ef[e, h, De == 1 ? 0 : d]);
// uf [num_src, H, D] (empty for CopyE), ef [E, H, De] (empty for CopyU). A destination without in-edges is 0.
std::vector<float> gspmm(MessageOp op, SpmmReduce red, const Coo& g, const std::vector<float>& uf,
                         const std::vector<float>& ef, std::int64_t H, std::int64_t D, std::int64_t De);

// Per edge e: op(lhs[row of lt at e], rhs[row of rt at e]) with lhs, rhs [rows, H, D] -> [E, H, D] (Dot:
// [E, H, 1]). The row of U is src[e], of V dst[e], of E e itself.
std::int64_t target_row(Target t, const Coo& g, std::int64_t e);
std::int64_t target_rows(Target t, const Coo& g);
std::vector<float> gsddmm(SddmmOp op, const Coo& g, const std::vector<float>& lhs, Target lt,
                          const std::vector<float>& rhs, Target rt, std::int64_t H, std::int64_t D);

// Softmax of x [E, cols] over each destination's in-edges (by_src: each source's out-edges), per column; and
// its backward dx = y * (dy - sum over the same edges of dy * y).
std::vector<float> edge_softmax(const Coo& g, const std::vector<float>& x, std::int64_t cols, bool by_src = false);
std::vector<float> edge_softmax_backward(const Coo& g, const std::vector<float>& y, const std::vector<float>& dy,
                                         std::int64_t cols);

// Dense masked attention over the in-edges: out_t = sum_{u -> t} softmax_u(scale q_t . k_u) v_u per head, in
// double; q [num_dst, H, dk], k [num_src, H, dk], v [num_src, H, dv] -> [num_dst, H, dv].
std::vector<float> sparse_attention(const Coo& g, const std::vector<float>& q, const std::vector<float>& k,
                                    const std::vector<float>& v, std::int64_t H, std::int64_t dk, std::int64_t dv,
                                    float scale);
// Gradients of sum(out * R) straight from the softmax formulas, in double: with p the weights of t's in-edges,
// dv_u += p R_t, ds = p (R_t . v_u - sum_e p_e R_t . v_e), dq_t += scale ds k_u, dk_u += scale ds q_t.
struct AttentionGrads {
  std::vector<float> dq, dk, dv;
};
AttentionGrads sparse_attention_grads(const Coo& g, const std::vector<float>& q, const std::vector<float>& k,
                                      const std::vector<float>& v, const std::vector<float>& R, std::int64_t H,
                                      std::int64_t dk, std::int64_t dv, float scale);

// GAT's edge attention in double: per head, x_e = el[src] + er[dst], a = softmax over dst's in-edges of
// LeakyReLU(x), a' = a * keep(e H + h) with keep = 0 or 1 / (1 - p) drawn as topo::dropout draws element
// offset + e H + h of `seed` (p = 0: no dropout); out_t = sum a' z_src. el [num_src, H], er [num_dst, H],
// z [num_src, H, F] -> [num_dst, H, F].
struct GatMask {
  float p = 0.f;
  std::uint64_t seed = 0, offset = 0;
  double keep(std::int64_t element) const;
};
std::vector<float> gat_attention(const Coo& g, const std::vector<float>& el, const std::vector<float>& er,
                                 const std::vector<float>& z, std::int64_t H, std::int64_t F, float slope,
                                 const GatMask& mask = {});
// Gradients of sum(out * R) by the chain rule through each step: dz_u += a' R_t, da' = R_t . z_u,
// ds = a (keep da' - sum_e a keep da'), dx = ds LeakyReLU'(x) (slope at x <= 0), del += dx, der += dx.
struct GatGrads {
  std::vector<float> del, der, dz;
};
GatGrads gat_attention_grads(const Coo& g, const std::vector<float>& el, const std::vector<float>& er,
                             const std::vector<float>& z, const std::vector<float>& R, std::int64_t H, std::int64_t F,
                             float slope, const GatMask& mask = {});

}  // namespace topo::reference
