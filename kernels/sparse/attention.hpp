#pragma once
// Fused sparse attention over a graph: out_v = sum_{u -> v} softmax_u(scale * q_v . k_u) v_u, per head.
// Equal (within float tolerance) to gsddmm(Dot) -> edge_softmax -> gspmm(UMulE, Sum), but one pass per
// destination that never materialises the [E, H] scores.
#include "kernels/sparse/format.hpp"

namespace topo {

struct AttentionOutput {
  Tensor out;  // [num_dst, H, dv]
  Tensor lse;  // [num_dst, H]: log-sum-exp of the scaled scores (-inf without in-edges), kept for backward
};
// in_csr: rows = destinations, indices = sources. q [num_dst, H, dk], k [num_src, H, dk], v [num_src, H, dv].
// A destination without in-edges gets 0.
// Parallel strategy (CPU): destination rows in work-balanced ranges; within a range, rows in blocks of <= 512
// in-edges (all scores of the block on the stack, then per row softmax and weighted v sum), heavier rows as
// an online softmax over chunks of 16 in-edges; no atomics, no heap scratch; deterministic for any thread count.
AttentionOutput sparse_attention(const CsrView& in_csr, const Tensor& q, const Tensor& k, const Tensor& v,
                                 float scale);

struct AttentionGrads {
  Tensor dq, dk, dv;
};
// out_csr is the same graph by source (rows = sources, indices = destinations, same edge ids).
// Two passes, both without atomics: over destinations (dq, and per-edge p and ds kept in [E, H] scratch),
// then over sources (dk, dv), so every output row has one writer and the result is deterministic.
AttentionGrads sparse_attention_backward(const CsrView& in_csr, const CsrView& out_csr, const Tensor& q,
                                         const Tensor& k, const Tensor& v, const AttentionOutput& forward,
                                         const Tensor& grad_out, float scale);

// k and v as the two halves of one projection: kv [num_src, 2, H, dh] (one GEMM of 2 dim columns writes it),
// q [num_dst, H, dh]. The same results as sparse_attention on the halves, read in place on the CPU (k and v
// rows 2 H dh apart); the backward returns dkv in kv's layout, so the projection's backward is one GEMM too.
AttentionOutput sparse_attention_kv(const CsrView& in_csr, const Tensor& q, const Tensor& kv, float scale);
struct AttentionKvGrads {
  Tensor dq, dkv;
};
AttentionKvGrads sparse_attention_kv_backward(const CsrView& in_csr, const CsrView& out_csr, const Tensor& q,
                                              const Tensor& kv, const AttentionOutput& forward, const Tensor& grad_out,
                                              float scale);

}  // namespace topo
