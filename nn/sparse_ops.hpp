#pragma once
// Differentiable sparse ops over one relation of a graph: each forward is a kernel from kernels/sparse and
// each backward is expressed with the same kernels on the reverse graph (DGL's scheme), e.g. the gradient
// of copy_u + sum with respect to the source features is copy_u + sum over the out-CSR (rows = sources).
//
// Feature layouts follow the kernels: node features [num_nodes, ...], edge features [num_edges, ...] by COO
// edge id; the trailing (per-row) shapes broadcast numpy-style (edge weights [E, H, 1] against node
// features [N, H, D]), and a broadcast operand's gradient is summed back over the broadcast dims.
#include <string>

#include "graph/heterograph.hpp"
#include "kernels/sparse/format.hpp"
#include "kernels/sparse/sddmm_math.hpp"
#include "kernels/sparse/spmm_math.hpp"
#include "nn/autograd.hpp"
#include "nn/var.hpp"

namespace topo::nn {

// One relation as the kernels see it. Both directions are needed: forwards run over in_csr, backwards
// over out_csr. The views are tensors (shared storage), so a backward closure that copies a RelationCsr
// keeps the topology alive after the graph itself is gone.
struct RelationCsr {
  CsrView in_csr;   // rows = destinations, indices = source ids (the graph's CSC)
  CsrView out_csr;  // rows = sources, indices = destination ids (the graph's CSR), same edge ids
  std::int64_t num_src() const { return in_csr.num_cols; }
  std::int64_t num_dst() const { return in_csr.num_rows; }
  std::int64_t num_edges() const { return in_csr.nnz(); }
};
// Builds (once, cached by the graph) and returns both formats of a relation. etype: an unambiguous
// edge-type name (HeteroGraph::relation_id throws naming it otherwise).
RelationCsr relation_csr(const HeteroGraph& graph, const std::string& etype);
RelationCsr relation_csr(const HeteroGraph& graph, int relation);

// out[v] = reduce_{(u -> v, e)} message(ufeat[u], efeat[e]) -> [num_dst, *broadcast row shape].
// ufeat [num_src, ...] (undefined Var for CopyE), efeat [num_edges, ...] (undefined for CopyU).
// Gradients: sum/mean as gspmm over out_csr (mean scales by 1/in-degree first); max/min go to the edge
// recorded by the forward (ties: the first in-edge in edge-id order), then are summed per source.
Var gspmm(const RelationCsr& graph, MessageOp op, SpmmReduce reduce, const Var& ufeat, const Var& efeat);

// Per-edge op(lhs[target row], rhs[target row]) -> [num_edges, *broadcast row shape] (Dot: last dim 1).
// The unused operand of CopyLhs/CopyRhs may be an undefined Var. Gradient w.r.t. a U/V operand is a
// gspmm (copy_e + sum) over out_csr/in_csr of the per-edge gradient; w.r.t. an E operand it is per edge.
Var gsddmm(const RelationCsr& graph, SddmmOp op, const Var& lhs, const Var& rhs, Target lhs_target,
           Target rhs_target);

// Softmax of per-edge logits [num_edges, ...] over each destination's in-edges (Dst, attention) or over each
// source's out-edges (Src). Trailing dims (heads) are independent.
enum class NormBy : std::uint8_t { Dst, Src };
Var edge_softmax(const RelationCsr& graph, const Var& logits, NormBy norm_by = NormBy::Dst);

// Fused attention: out_v = sum_{u -> v} softmax_u(scale * q_v . k_u) v_u, per head.
// q [num_dst, H, dk], k [num_src, H, dk], v [num_src, H, dv] -> [num_dst, H, dv]; the backward is the
// kernel's two-pass sparse_attention_backward (needs out_csr).
Var sparse_attention(const RelationCsr& graph, const Var& q, const Var& k, const Var& v, float scale);

}  // namespace topo::nn
