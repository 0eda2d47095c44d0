// Differentiable gspmm / gsddmm / edge_softmax / sparse_attention. Backward closures capture the
// Block (tensor views) and the saved input tensors, never Vars.
//
// Shapes: a per-edge or per-node tensor is [rows, *row_shape]. Two row shapes broadcast numpy-style from the
// right (kernels/sparse/bcast.hpp), but dense binary ops broadcast whole shapes from the right, where the
// leading row dims would be misaligned ([E, D] against [E, H, D]); `pad_to` therefore inserts 1s after the
// row dim before any dense broadcast, and `to_rows` sums a gradient back to [rows, *row_shape].
#include "nn/sparse_ops.hpp"

#include <algorithm>
#include <vector>

#include "kernels/dense/binary.hpp"
#include "kernels/dense/indexing.hpp"
#include "kernels/sparse/attention.hpp"
#include "kernels/sparse/bcast.hpp"
#include "kernels/sparse/edge_softmax.hpp"
#include "kernels/sparse/gat_attention.hpp"
#include "kernels/sparse/index_dispatch.hpp"
#include "kernels/sparse/sage_mean.hpp"
#include "kernels/sparse/sddmm.hpp"
#include "kernels/sparse/spmm.hpp"
#include "kernels/sparse/spmm_backward.hpp"

namespace topo::nn {
namespace {

// [rows, a, b] -> [rows, 1, .., 1, a, b] with `ndim` dims in all (no copy).
Tensor pad_to(const Tensor& t, int ndim) {
  if (t.ndim() >= ndim) return t;
  Shape s = {t.size(0)};
  for (int i = t.ndim(); i < ndim; ++i) s.push_back(1);
  for (int i = 1; i < t.ndim(); ++i) s.push_back(t.size(i));
  return t.reshape(s);
}

// Sums g [rows, *broadcast shape] down to [rows, *row] (the backward of broadcasting within rows).
Tensor to_rows(const Tensor& g, const Shape& full) {
  if (g.shape() == full) return g;
  const int nd = std::max(g.ndim(), static_cast<int>(full.size()));
  Shape padded = {full[0]};
  for (int i = static_cast<int>(full.size()); i < nd; ++i) padded.push_back(1);
  padded.insert(padded.end(), full.begin() + 1, full.end());
  return sum_to_shape(pad_to(g, nd), padded).reshape(full);
}

Tensor neg(const Tensor& t) { return mul_scalar(t, -1.f); }

// Broadcasting elementwise op between per-edge tensors whose row dims are aligned first.
Tensor ebin(Tensor (*op)(const Tensor&, const Tensor&), const Tensor& a, const Tensor& b) {
  const int nd = std::max(a.ndim(), b.ndim());
  return op(pad_to(a, nd), pad_to(b, nd));
}

const char* target_name(Target t) { return t == Target::U ? "U" : t == Target::V ? "V" : "E"; }

// Per-edge rows of a U/V/E operand: [num_edges, *row shape].
Tensor gather(const Block& g, const Tensor& x, Target t) {
  if (t == Target::E) return x;
  return gsddmm(SddmmOp::CopyLhs, g.in, x, Tensor(), t, t);
}

// Sums per-edge rows onto their U/V/E target: [target rows, *row shape].
Tensor scatter(const Block& g, const Tensor& per_edge, Target t) {
  if (t == Target::E) return per_edge;
  const CsrView& csr = t == Target::U ? g.out : g.in;
  return topo::gspmm(MessageOp::CopyE, SpmmReduce::Sum, csr, Tensor(), per_edge).out;
}

// 1 / max(in-degree, 1) as [num_dst, 1, .., 1] with `ndim` dims, on the graph's device. Rows without
// in-edges are never read by the backward (no edge gathers them), the clamp only keeps the values finite.
Tensor inverse_in_degree(const Block& g, int ndim) {
  // Straight from the indptr (read on the host), one pass: every mean backward asks, each step.
  const Tensor indptr = g.in.indptr.to(Device::cpu());
  Shape s = {g.num_dst};
  for (int i = 1; i < ndim; ++i) s.push_back(1);
  Tensor inv = Tensor::empty(s, DType::F32);
  float* out = inv.data<float>();
  TOPO_DISPATCH_INDEX(indptr.dtype(), Id, {
    const Id* p = indptr.data<Id>();
    for (std::int64_t v = 0; v < g.num_dst; ++v)
      out[v] = 1.f / static_cast<float>(std::max<std::int64_t>(static_cast<std::int64_t>(p[v + 1] - p[v]), 1));
  });
  return inv.to(g.in.device());
}

// Whether edge rows [E, a, .., 1] are node rows [N, a, .., d] with the last dim cut to 1 (and d > 1).
bool broadcasts_over_last_dim(const Shape& edge, const Shape& node) {
  if (edge.size() != node.size() || edge.size() < 2 || edge.back() != 1 || node.back() == 1) return false;
  return std::equal(edge.begin() + 1, edge.end() - 1, node.begin() + 1);
}

struct SpmmSaved {
  Block graph;
  MessageOp op;
  SpmmReduce reduce;
  Tensor u, e, arg_u, arg_e;
  Shape u_shape, e_shape;
};

std::vector<Tensor> spmm_backward(const SpmmSaved& s, Tensor g, const std::vector<bool>& needs) {
  const bool use_u = message_uses_u(s.op), use_e = message_uses_e(s.op);
  const bool need_u = use_u && needs[0], need_e = use_e && needs[1];
  Tensor gu, ge;
  if (s.reduce == SpmmReduce::Sum || s.reduce == SpmmReduce::Mean) {
    if (s.reduce == SpmmReduce::Mean) g = topo::mul(g, inverse_in_degree(s.graph, g.ndim()));
    if (need_u) {
      // d/du of u (+-) e is 1; of u*e is e; of u/e is 1/e: the same message op over the reverse graph.
      const MessageOp rop = s.op == MessageOp::UMulE || s.op == MessageOp::UDivE ? s.op : MessageOp::CopyU;
      gu = to_rows(topo::gspmm(rop, SpmmReduce::Sum, s.graph.out, g, rop == MessageOp::CopyU ? Tensor() : s.e).out,
                   s.u_shape);
    }
    if (need_e) {
      if (s.op == MessageOp::UMulE || s.op == MessageOp::UDivE) {
        // g[v] * u[u] per edge; for u / e additionally * (-1 / e^2). A per-head weight e [E, .., 1] broadcast
        // over u's last dim (the attention form) takes the dot product over that dim directly: no [E, .., D]
        // product written and summed back (98 MB per call on topo-bench's Star satellites).
        const bool last_dim_weight = broadcasts_over_last_dim(s.e_shape, s.u_shape);
        ge = gsddmm(last_dim_weight ? SddmmOp::Dot : SddmmOp::Mul, s.graph.in, s.u, g, Target::U, Target::V);
        if (s.op == MessageOp::UDivE) ge = neg(ebin(topo::div, ebin(topo::div, ge, s.e), s.e));
      } else {
        ge = gather(s.graph, g, Target::V);
        if (s.op == MessageOp::USubE) ge = neg(ge);
      }
      ge = to_rows(ge, s.e_shape);
    }
    return {gu, ge};
  }
  // Max / min: the gradient of each output element goes to its winning edge only; for copy_u straight to
  // the winning source (no per-edge tensor).
  if (s.op == MessageOp::CopyU) {
    if (need_u) gu = to_rows(spmm_arg_to_sources(s.u_shape[0], s.arg_u, g), s.u_shape);
    return {gu, ge};
  }
  const Tensor won = spmm_arg_to_edges(s.graph.in, s.arg_e, g);  // [E, *out row]
  if (need_e) {
    switch (s.op) {
      case MessageOp::CopyE:
      case MessageOp::UAddE: ge = won; break;
      case MessageOp::USubE: ge = neg(won); break;
      case MessageOp::UMulE: ge = ebin(topo::mul, won, gather(s.graph, s.u, Target::U)); break;
      case MessageOp::UDivE:
        ge = neg(ebin(topo::div, ebin(topo::div, ebin(topo::mul, won, gather(s.graph, s.u, Target::U)), s.e), s.e));
        break;
      case MessageOp::CopyU: break;
    }
    ge = to_rows(ge, s.e_shape);
  }
  if (need_u) {
    Tensor per_edge = won;
    if (s.op == MessageOp::UMulE) per_edge = ebin(topo::mul, won, s.e);
    if (s.op == MessageOp::UDivE) per_edge = ebin(topo::div, won, s.e);
    gu = to_rows(scatter(s.graph, per_edge, Target::U), s.u_shape);
  }
  return {gu, ge};
}

}  // namespace

Var gspmm(const Block& graph, MessageOp op, SpmmReduce reduce, const Var& ufeat, const Var& efeat) {
  const bool use_u = message_uses_u(op), use_e = message_uses_e(op);
  TOPO_CHECK(!use_u || ufeat.defined(), "gspmm: this message op reads source features but ufeat is undefined");
  TOPO_CHECK(!use_e || efeat.defined(), "gspmm: this message op reads edge features but efeat is undefined");
  const Tensor u = use_u ? ufeat.data() : Tensor(), e = use_e ? efeat.data() : Tensor();
  SpmmOutput fwd = topo::gspmm(op, reduce, graph.in, u, e);
  // The backward reads arg_u (copy_u: straight to the sources) or arg_e (per edge), not both.
  const bool by_source = op == MessageOp::CopyU;
  SpmmSaved saved{graph, op, reduce, u, e, by_source ? fwd.arg_u : Tensor(), by_source ? Tensor() : fwd.arg_e,
                  use_u ? u.shape() : Shape{}, use_e ? e.shape() : Shape{}};
  return make_output(
      fwd.out, {use_u ? ufeat : Var(), use_e ? efeat : Var()},
      [saved = std::move(saved)](const Tensor& g, const std::vector<bool>& needs) {
        return spmm_backward(saved, g, needs);
      },
      "gspmm");
}

Var sage_mean(const Block& graph, const Var& y) {
  TOPO_CHECK(y.defined(), "sage_mean: y is undefined");
  return make_output(
      topo::sage_mean(graph.in, y.data()), {y},
      [graph](const Tensor& g, const std::vector<bool>&) {
        // The mean's scale as gspmm's backward takes it (g / in-degree, then the sum over the out-CSR).
        return std::vector<Tensor>{
            topo::sage_mean_backward(graph.out, topo::mul(g, inverse_in_degree(graph, g.ndim())), g)};
      },
      "sage_mean");
}

Block gspmm_block(const HeteroGraph& g, int relation, MessageOp op, SpmmReduce reduce) {
  return spmm_reads_edge_ids(op, reduce) ? relation_block(g, relation) : relation_structure_block(g, relation);
}

Var gsddmm(const Block& graph, SddmmOp op, const Var& lhs, const Var& rhs, Target lhs_target,
           Target rhs_target) {
  const bool use_l = sddmm_uses_lhs(op), use_r = sddmm_uses_rhs(op);
  TOPO_CHECK(!use_l || lhs.defined(), "gsddmm: lhs (target {}) is undefined", target_name(lhs_target));
  TOPO_CHECK(!use_r || rhs.defined(), "gsddmm: rhs (target {}) is undefined", target_name(rhs_target));
  const Tensor l = use_l ? lhs.data() : Tensor(), r = use_r ? rhs.data() : Tensor();
  Tensor out = topo::gsddmm(op, graph.in, l, r, lhs_target, rhs_target);
  return make_output(
      out, {use_l ? lhs : Var(), use_r ? rhs : Var()},
      [graph, op, l, r, lhs_target, rhs_target](const Tensor& g, const std::vector<bool>& needs) {
        const bool need_l = sddmm_uses_lhs(op) && needs[0], need_r = sddmm_uses_rhs(op) && needs[1];
        // Mul / Dot between a source and a destination operand (attention scores q_v . k_u): each gradient
        // is one gspmm u_mul_e over the CSR whose rows are its own side, with the other operand as the node
        // feature and the edge gradient as the edge feature (DGL's scheme); no [E, ...] products are formed.
        const bool node_pair = (op == SddmmOp::Mul || op == SddmmOp::Dot) &&
                               ((lhs_target == Target::U && rhs_target == Target::V) ||
                                (lhs_target == Target::V && rhs_target == Target::U));
        if (node_pair) {
          auto grad_of = [&](const Tensor& other, Target self, const Shape& self_shape) {
            const CsrView& csr = self == Target::V ? graph.in : graph.out;
            return to_rows(topo::gspmm(MessageOp::UMulE, SpmmReduce::Sum, csr, other, g).out, self_shape);
          };
          return std::vector<Tensor>{need_l ? grad_of(r, lhs_target, l.shape()) : Tensor(),
                                     need_r ? grad_of(l, rhs_target, r.shape()) : Tensor()};
        }
        // Per-edge operands only where a derivative reads them.
        const bool read_r = need_l && (op == SddmmOp::Mul || op == SddmmOp::Div || op == SddmmOp::Dot);
        const bool read_l = need_r && (op == SddmmOp::Mul || op == SddmmOp::Div || op == SddmmOp::Dot);
        const Tensor re = read_r || (need_r && op == SddmmOp::Div) ? gather(graph, r, rhs_target) : Tensor();
        const Tensor le = read_l ? gather(graph, l, lhs_target) : Tensor();
        Tensor dl, dr;  // per-edge, broadcast shape
        switch (op) {
          case SddmmOp::Add: dl = g; dr = g; break;
          case SddmmOp::Sub: dl = g; dr = need_r ? neg(g) : Tensor(); break;
          case SddmmOp::CopyLhs: dl = g; break;
          case SddmmOp::CopyRhs: dr = g; break;
          case SddmmOp::Mul:
          case SddmmOp::Dot:  // g's last dim 1 broadcasts against the reduced dim
            if (need_l) dl = ebin(topo::mul, g, re);
            if (need_r) dr = ebin(topo::mul, g, le);
            break;
          case SddmmOp::Div:
            if (need_l) dl = ebin(topo::div, g, re);
            if (need_r) dr = neg(ebin(topo::div, ebin(topo::div, ebin(topo::mul, g, le), re), re));
            break;
        }
        auto finish = [&](const Tensor& d, const Tensor& x, Target t) {
          Shape per_edge = x.shape();
          per_edge[0] = graph.num_edges();
          return scatter(graph, to_rows(d, per_edge), t);
        };
        return std::vector<Tensor>{need_l ? finish(dl, l, lhs_target) : Tensor(),
                                   need_r ? finish(dr, r, rhs_target) : Tensor()};
      },
      "gsddmm");
}

Var edge_softmax(const Block& graph, const Var& logits, NormBy norm_by) {
  const CsrView csr = norm_by == NormBy::Dst ? graph.in : graph.out;
  Tensor y = topo::edge_softmax(csr, logits.data());
  return make_output(
      y, {logits},
      [csr, y](const Tensor& g, const std::vector<bool>&) {
        return std::vector<Tensor>{edge_softmax_backward(csr, y, g)};
      },
      "edge_softmax");
}

Var sparse_attention(const Block& graph, const Var& q, const Var& k, const Var& v, float scale) {
  AttentionOutput fwd = topo::sparse_attention(graph.in, q.data(), k.data(), v.data(), scale);
  Tensor out = fwd.out;
  return make_output(
      out, {q, k, v},
      [graph, qd = q.data(), kd = k.data(), vd = v.data(), fwd, scale](const Tensor& g, const std::vector<bool>&) {
        AttentionGrads d = sparse_attention_backward(graph.in, graph.out, qd, kd, vd, fwd, g, scale);
        return std::vector<Tensor>{d.dq, d.dk, d.dv};
      },
      "sparse_attention");
}

Var sparse_attention_kv(const Block& graph, const Var& q, const Var& kv, float scale) {
  AttentionOutput fwd = topo::sparse_attention_kv(graph.in, q.data(), kv.data(), scale);
  Tensor out = fwd.out;
  return make_output(
      out, {q, kv},
      [graph, qd = q.data(), kvd = kv.data(), fwd, scale](const Tensor& g, const std::vector<bool>&) {
        AttentionKvGrads d = sparse_attention_kv_backward(graph.in, graph.out, qd, kvd, fwd, g, scale);
        return std::vector<Tensor>{d.dq, d.dkv};
      },
      "sparse_attention_kv");
}

Var sparse_attention(const std::vector<const Block*>& blocks, const std::vector<std::int64_t>& heads, const Var& q,
                     const Var& k, const Var& v, float scale) {
  TOPO_CHECK(!blocks.empty() && blocks.size() == heads.size(),
             "sparse_attention: {} blocks for {} head counts (one block per group, at least one)", blocks.size(),
             heads.size());
  if (blocks.size() == 1) return sparse_attention(*blocks[0], q, k, v, scale);
  // Per group: its heads' slices of q, k, v (contiguous copies the kernel reads), forward, and the outputs
  // joined head-wise; the backward splits the output gradient the same way and joins dq, dk, dv.
  const auto qs = topo::split(q.data(), heads, 1), ks = topo::split(k.data(), heads, 1), vs = topo::split(v.data(), heads, 1);
  std::vector<AttentionOutput> fwd;
  std::vector<Tensor> outs;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    fwd.push_back(topo::sparse_attention(blocks[i]->in, qs[i], ks[i], vs[i], scale));
    outs.push_back(fwd.back().out);
  }
  std::vector<Block> graphs;
  for (const Block* b : blocks) graphs.push_back(*b);
  return make_output(
      topo::concat(outs, 1), {q, k, v},
      [graphs = std::move(graphs), heads, qs, ks, vs, fwd = std::move(fwd), scale](const Tensor& g,
                                                                                   const std::vector<bool>&) {
        const auto gs = topo::split(g, heads, 1);
        std::vector<Tensor> dq, dk, dv;
        for (std::size_t i = 0; i < graphs.size(); ++i) {
          AttentionGrads d = sparse_attention_backward(graphs[i].in, graphs[i].out, qs[i], ks[i], vs[i], fwd[i],
                                                       gs[i], scale);
          dq.push_back(d.dq);
          dk.push_back(d.dk);
          dv.push_back(d.dv);
        }
        return std::vector<Tensor>{topo::concat(dq, 1), topo::concat(dk, 1), topo::concat(dv, 1)};
      },
      "sparse_attention");
}

Var gat_attention(const Block& graph, const Var& el, const Var& er, const Var& z, float negative_slope,
                  float attn_drop, bool training, Generator& gen) {
  TOPO_CHECK(attn_drop >= 0.f && attn_drop < 1.f, "gat_attention: attention dropout must be in [0, 1), got {}",
             attn_drop);
  GatDropout drop;
  if (training && attn_drop > 0.f) {
    const std::int64_t heads = z.ndim() >= 2 ? z.size(1) : 0;
    drop.p = attn_drop;
    drop.scale = 1.f / (1.f - attn_drop);
    drop.seed = gen.seed();
    drop.offset = gen.advance(static_cast<std::uint64_t>(graph.in.nnz() * heads));
  }
  const GatAttentionOutput fwd = topo::gat_attention(graph.in, el.data(), er.data(), z.data(), negative_slope, drop);
  return make_output(
      fwd.out, {el, er, z},
      [graph, eld = el.data(), erd = er.data(), zd = z.data(), kept = GatAttentionOutput{Tensor(), fwd.lse},
       negative_slope, drop](const Tensor& g, const std::vector<bool>&) {  // kept: not the output itself
        GatAttentionGrads d = gat_attention_backward(graph.in, graph.out, eld, erd, zd, kept, g, negative_slope, drop);
        return std::vector<Tensor>{d.del, d.der, d.dz};
      },
      "gat_attention");
}

}  // namespace topo::nn
