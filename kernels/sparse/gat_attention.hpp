#pragma once
// GAT's edge attention fused (Velickovic et al. 2018; DGL's GATConv between its projection and its bias):
//   out_v = sum_{u -> v} dropout(softmax_u(LeakyReLU(el_u + er_v))) z_u, per head.
// Equal (within float tolerance; the dropout mask bitwise) to gsddmm(u_add_v) -> leaky_relu -> edge_softmax ->
// dropout -> gspmm(u_mul_e, sum), but nothing per edge is kept: forward, backward or between them. The composition
// keeps ~3 [E, H] tensors from forward to backward and makes ~3 more in it, which on a graph of 21M edges and 8
// heads is 0.63 GiB each; here the largest scratch is node-sized. Per-edge math: gat_attention_math.hpp.
#include "kernels/sparse/format.hpp"
#include "kernels/sparse/gat_attention_math.hpp"

namespace topo {

struct GatAttentionOutput {
  Tensor out;  // [num_dst, H, F]
  Tensor lse;  // [num_dst, H]: log-sum-exp of the scores (-inf without in-edges), all the backward keeps
};
// in_csr: rows = destinations, indices = sources, eids = COO edge ids (the dropout mask's element of edge e and
// head h is e * H + h). el [num_src, H] (or [num_src, H, 1]), er [num_dst, H] (or [.., 1]), z [num_src, H, F].
// A destination without in-edges gets 0.
// Parallel strategy (CPU): destination rows in work-balanced ranges; per row, the scores of its in-edges (all
// heads) into a per-thread buffer, their softmax, then the weighted sum of source rows register-blocked
// (simd::accumulate_rows, as gspmm). No atomics; deterministic for any thread count.
GatAttentionOutput gat_attention(const CsrView& in_csr, const Tensor& el, const Tensor& er, const Tensor& z,
                                 float negative_slope, const GatDropout& drop = {});

struct GatAttentionGrads {
  Tensor del, der, dz;  // shapes of el, er, z
};
// out_csr is the same graph by source (rows = sources, indices = destinations, same edge ids). `forward` needs
// only lse (its out may be dropped). Two passes without atomics: over destinations (der, and the
// softmax's row term D_v = sum_e a'_e g_v . z_u into an [num_dst, H] scratch), then over sources (del, dz). Both
// remake each edge's weight from el, er, lse and the mask's counter. (The mask kept as bits was tried: reading
// them back by edge id cost as much as drawing them again.)
GatAttentionGrads gat_attention_backward(const CsrView& in_csr, const CsrView& out_csr, const Tensor& el,
                                         const Tensor& er, const Tensor& z, const GatAttentionOutput& forward,
                                         const Tensor& grad_out, float negative_slope, const GatDropout& drop = {});

}  // namespace topo
