#pragma once
// Differentiable sparse ops over one relation of a graph: each forward is a kernel from kernels/sparse and
// each backward is expressed with the same kernels on the reverse graph (DGL's scheme), e.g. the gradient
// of copy_u + sum with respect to the source features is copy_u + sum over the out-CSR (rows = sources).
//
// Feature layouts follow the kernels: node features [num_nodes, ...], edge features [num_edges, ...] by COO
// edge id; the trailing (per-row) shapes broadcast numpy-style (edge weights [E, H, 1] against node
// features [N, H, D]), and a broadcast operand's gradient is summed back over the broadcast dims.
#include <string>
#include <vector>

#include "graph/block.hpp"
#include "kernels/sparse/format.hpp"
#include "kernels/sparse/sddmm_math.hpp"
#include "kernels/sparse/spmm_math.hpp"
#include "nn/autograd.hpp"
#include "nn/ops.hpp"
#include "nn/var.hpp"

namespace topo::nn {

// Every op takes a Block (graph/block.hpp): its in-CSR (rows = destinations) drives the forwards, its out-CSR
// (rows = sources, same edge ids) the backwards. Its views are tensors (shared storage), so a backward
// closure that copies the Block keeps the topology alive after the graph itself is gone. One relation of a
// graph is relation_block(graph, etype); several relations into one type, to_block.
// out[v] = reduce_{(u -> v, e)} message(ufeat[u], efeat[e]) -> [num_dst, *broadcast row shape].
// ufeat [num_src, ...] (undefined Var for CopyE), efeat [num_edges, ...] (undefined for CopyU).
// Gradients: sum/mean as gspmm over the out-CSR (mean scales by 1/in-degree first); max/min go to the edge
// recorded by the forward (ties: the first in-edge in edge-id order), then are summed per source.
Var gspmm(const Block& graph, MessageOp op, SpmmReduce reduce, const Var& ufeat, const Var& efeat);
// GraphSAGE's mean aggregation of a projection made first, fused with its self term (topo::sage_mean): y [N, 2F]
// = [x W_neigh^T | x W_self^T] -> out[v] = mean_{u -> v} y[u, :F] + y[v, F:], [N, F]. One node: y's gradient is
// written once (split's pieces would each pad theirs to [N, 2F]). A homogeneous relation.
Var sage_mean(const Block& graph, const Var& y);
// The block gspmm(op, reduce) needs over one relation of g: without edge ids where it reads none
// (spmm_reads_edge_ids: copy_u summed or averaged), so that a graph used only so never builds them
// (relation_structure_block); relation_block otherwise.
Block gspmm_block(const HeteroGraph& g, int relation, MessageOp op, SpmmReduce reduce);

// Per-edge op(lhs[target row], rhs[target row]) -> [num_edges, *broadcast row shape] (Dot: last dim 1).
// The unused operand of CopyLhs/CopyRhs may be an undefined Var. Gradient w.r.t. a U/V operand is a
// gspmm (copy_e + sum) over the out-/in-CSR of the per-edge gradient; w.r.t. an E operand it is per edge.
Var gsddmm(const Block& graph, SddmmOp op, const Var& lhs, const Var& rhs, Target lhs_target,
           Target rhs_target);

// Softmax of per-edge logits [num_edges, ...] over each destination's in-edges (Dst, attention) or over each
// source's out-edges (Src). Trailing dims (heads) are independent.
enum class NormBy : std::uint8_t { Dst, Src };
Var edge_softmax(const Block& graph, const Var& logits, NormBy norm_by = NormBy::Dst);

// Fused attention: out_v = sum_{u -> v} softmax_u(scale * q_v . k_u) v_u, per head.
// q [num_dst, H, dk], k [num_src, H, dk], v [num_src, H, dv] -> [num_dst, H, dv]; the backward is the
// kernel's two-pass sparse_attention_backward (needs the out-CSR).
Var sparse_attention(const Block& graph, const Var& q, const Var& k, const Var& v, float scale);
// The same with k and v as one projection, kv [num_src, 2, H, dh] (topo::sparse_attention_kv): its gradient
// comes back in that layout, so the projection's backward stays one GEMM.
Var sparse_attention_kv(const Block& graph, const Var& q, const Var& kv, float scale);
// Head groups: heads [h_0, h_0 + heads[i]) attend over blocks[i] (every block over the same destination and
// source sets; heads sum to H, each > 0). One fused call per group on its slice of heads; one autograd node.
Var sparse_attention(const std::vector<const Block*>& blocks, const std::vector<std::int64_t>& heads, const Var& q,
                     const Var& k, const Var& v, float scale);

// GAT's edge attention fused (topo::gat_attention): out_v = sum_{u -> v} dropout(softmax_u(LeakyReLU(el_u + er_v)))
// z_u per head, without the [E, H] scores, weights and gradients the composition (apply_edges u_add_v ->
// leaky_relu -> edge_softmax -> dropout -> update_all u_mul_e) keeps. el [num_src, H, 1] (or [num_src, H]),
// er [num_dst, H, 1], z [num_src, H, F] -> [num_dst, H, F]; a destination without in-edges gets 0. Training with
// attn_drop > 0 takes the mask from `gen` as nn::dropout of the [E, H] weights would (same offsets consumed, same
// mask bits), so the two forms draw the same masks from the same generator state.
Var gat_attention(const Block& graph, const Var& el, const Var& er, const Var& z, float negative_slope,
                  float attn_drop = 0.f, bool training = false, Generator& gen = default_generator());

}  // namespace topo::nn
