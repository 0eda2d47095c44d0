// The differentiable sparse ops of nn/sparse_ops.hpp (gspmm, gsddmm, edge_softmax, sparse_attention,
// gat_attention) for torch.autograd.Function (topograph/_autograd.py).
//
// Each forward wraps the caller's tensors as leaves (borrowed memory, no copy), runs Topograph's op, which
// records its backward on Topograph's tape, and returns the output plus a Tape. The Python Function keeps
// the Tape in its ctx; its backward hands torch's output gradient to Tape.backward, which runs Topograph's
// own backward (the same kernels on the reverse graph that nn/ uses) and returns the leaves' gradients.
// So no derivative is written twice, and none in Python.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "graph/block.hpp"
#include "kernels/sparse/op_codes.hpp"
#include "nn/ops.hpp"
#include "nn/sparse_ops.hpp"
#include "tensors.hpp"

namespace topo::py {

namespace {

using OptArray = std::optional<nb::ndarray<>>;

// One op's recorded forward: the output and the leaves that want gradients (undefined Vars elsewhere).
struct Tape {
  nn::Var out;
  std::vector<nn::Var> leaves;

  // grad: [*out shape], float32, contiguous. Returns one gradient per leaf (None where none is wanted).
  // The tape is kept (retain_graph), so torch's own retain_graph=True may call this again; the leaves'
  // gradients are reset first, so each call returns only its own.
  std::vector<nb::object> backward(const nb::ndarray<>& grad) {
    Tensor g = borrow_float(grad, "backward: output gradient");
    {
      nb::gil_scoped_release release;
      for (nn::Var& leaf : leaves)
        if (leaf.defined()) leaf.zero_grad();
      out.backward(g, /*retain_graph=*/true);
    }
    std::vector<nb::object> grads;
    for (const nn::Var& leaf : leaves) {
      if (leaf.defined() && leaf.requires_grad() && leaf.grad().defined()) grads.push_back(to_torch(leaf.grad()));
      else grads.push_back(nb::none());
    }
    return grads;
  }
};

// A feature tensor as a leaf: requires_grad only when torch wants its gradient.
nn::Var leaf(const OptArray& a, bool need, const char* what) {
  if (!a) return nn::Var();
  return nn::Var(borrow_float(*a, what), need);
}

// The output and, when some input wants a gradient, the tape that gives it.
std::pair<nb::object, std::optional<Tape>> finish(nn::Var out, std::vector<nn::Var> leaves) {
  nb::object y = to_torch(out.data());
  bool any = false;
  for (const nn::Var& l : leaves) any = any || (l.defined() && l.requires_grad());
  if (!any) return {y, std::nullopt};
  return {y, Tape{std::move(out), std::move(leaves)}};
}

// The block an attention call runs over: the graph's one relation, or the named relations into one
// destination type (to_block: one softmax across them, sources numbered type by type in the graph's order).
Block attention_block(const HeteroGraph& g, const std::vector<std::string>& etypes) {
  if (etypes.empty()) {
    TOPO_CHECK(g.num_relations() == 1, "sparse_attention: the graph has {} relations; name them", g.num_relations());
    return relation_block(g, 0);
  }
  return to_block(g, g.canonical_etype(g.relation_id(etypes.front())).dst_type, etypes);
}

}  // namespace

void bind_ops(nb::module_& m) {
  nb::class_<Tape>(m, "Tape").def("backward", &Tape::backward, nb::arg("grad"));

  // ufeat [num_src, ...] (None for copy_e), efeat [num_edges, ...] (None for copy_u) -> [num_dst, ...].
  m.def(
      "gspmm",
      [](const HeteroGraph& g, int relation, int op, int reduce, const OptArray& u, const OptArray& e, bool need_u,
         bool need_e) {
        std::vector<nn::Var> leaves{leaf(u, need_u, "gspmm: lhs (source features)"),
                                    leaf(e, need_e, "gspmm: rhs (edge features)")};
        nn::Var out;
        {
          nb::gil_scoped_release release;
          const MessageOp mop = message_op_from_code(op);
          const SpmmReduce red = spmm_reduce_from_code(reduce);
          out = nn::gspmm(nn::gspmm_block(g, relation, mop, red), mop, red, leaves[0], leaves[1]);
        }
        return finish(std::move(out), std::move(leaves));
      },
      nb::arg("graph"), nb::arg("relation"), nb::arg("op"), nb::arg("reduce"), nb::arg("u").none(),
      nb::arg("e").none(), nb::arg("need_u"), nb::arg("need_e"));

  // lhs / rhs: [rows of their target, ...] (None for the unused side of copy_lhs / copy_rhs) -> [num_edges, ...].
  m.def(
      "gsddmm",
      [](const HeteroGraph& g, int relation, int op, const OptArray& lhs, const OptArray& rhs, int lhs_target,
         int rhs_target, bool need_l, bool need_r) {
        std::vector<nn::Var> leaves{leaf(lhs, need_l, "gsddmm: lhs"), leaf(rhs, need_r, "gsddmm: rhs")};
        nn::Var out;
        {
          nb::gil_scoped_release release;
          const Block block = relation_block(g, relation);
          out = nn::gsddmm(block, sddmm_op_from_code(op), leaves[0], leaves[1], target_from_code(lhs_target),
                           target_from_code(rhs_target));
        }
        return finish(std::move(out), std::move(leaves));
      },
      nb::arg("graph"), nb::arg("relation"), nb::arg("op"), nb::arg("lhs").none(), nb::arg("rhs").none(),
      nb::arg("lhs_target"), nb::arg("rhs_target"), nb::arg("need_lhs"), nb::arg("need_rhs"));

  // logits [num_edges, ...] -> the same shape, normalised over each destination's in-edges (or source's out-edges).
  m.def(
      "edge_softmax",
      [](const HeteroGraph& g, int relation, const nb::ndarray<>& logits, bool by_src, bool need) {
        std::vector<nn::Var> leaves{nn::Var(borrow_float(logits, "edge_softmax: logits"), need)};
        nn::Var out;
        {
          nb::gil_scoped_release release;
          const Block block = relation_block(g, relation);
          out = nn::edge_softmax(block, leaves[0], by_src ? nn::NormBy::Src : nn::NormBy::Dst);
        }
        return finish(std::move(out), std::move(leaves));
      },
      nb::arg("graph"), nb::arg("relation"), nb::arg("logits"), nb::arg("by_src"), nb::arg("need"));

  // The fused attention (kernels/sparse/attention.hpp): q [num_dst, H, dk], k [num_src, H, dk],
  // v [num_src, H, dv] -> [num_dst, H, dv]; etypes: [] for a graph's one relation, or several relations into
  // one destination type, whose sources are the block's (attention_block_sources).
  m.def(
      "sparse_attention",
      [](const HeteroGraph& g, const std::vector<std::string>& etypes, const nb::ndarray<>& q, const nb::ndarray<>& k,
         const nb::ndarray<>& v, float scale, bool need_q, bool need_k, bool need_v) {
        std::vector<nn::Var> leaves{nn::Var(borrow_float(q, "sparse_attention: q"), need_q),
                                    nn::Var(borrow_float(k, "sparse_attention: k"), need_k),
                                    nn::Var(borrow_float(v, "sparse_attention: v"), need_v)};
        nn::Var out;
        {
          nb::gil_scoped_release release;
          const Block block = attention_block(g, etypes);
          out = nn::sparse_attention(block, leaves[0], leaves[1], leaves[2], scale);
        }
        return finish(std::move(out), std::move(leaves));
      },
      nb::arg("graph"), nb::arg("etypes"), nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("scale"),
      nb::arg("need_q"), nb::arg("need_k"), nb::arg("need_v"));
  // GAT's fused edge attention (nn::gat_attention): el [num_src, H(, 1)], er [num_dst, H(, 1)], z [num_src, H, F]
  // -> [num_dst, H, F]. attn_drop > 0 drops the attention weights with a mask drawn from `seed` (Python draws
  // the seed from torch's generator, so torch.manual_seed makes runs repeat); the backward keeps nothing per edge.
  m.def(
      "gat_attention",
      [](const HeteroGraph& g, int relation, const nb::ndarray<>& el, const nb::ndarray<>& er, const nb::ndarray<>& z,
         float negative_slope, float attn_drop, std::uint64_t seed, bool need_el, bool need_er, bool need_z) {
        std::vector<nn::Var> leaves{nn::Var(borrow_float(el, "gat_attention: el"), need_el),
                                    nn::Var(borrow_float(er, "gat_attention: er"), need_er),
                                    nn::Var(borrow_float(z, "gat_attention: z"), need_z)};
        nn::Var out;
        {
          nb::gil_scoped_release release;
          const Block block = relation_block(g, relation);
          nn::Generator gen(seed);
          out = nn::gat_attention(block, leaves[0], leaves[1], leaves[2], negative_slope, attn_drop, attn_drop > 0.f,
                                  gen);
        }
        return finish(std::move(out), std::move(leaves));
      },
      nb::arg("graph"), nb::arg("relation"), nb::arg("el"), nb::arg("er"), nb::arg("z"), nb::arg("negative_slope"),
      nb::arg("attn_drop"), nb::arg("seed"), nb::arg("need_el"), nb::arg("need_er"), nb::arg("need_z"));
  // The fused dense attention over packed sequences, optionally banded (nn::flash_attention,
  // kernels/dense/flash_attention.hpp): q, k [rows, H, dk], v [rows, H, dv]; sequence b owns lengths[b]
  // consecutive rows and attends within them; radii [] (full), [B] (per sequence) or [B * H] (per sequence and
  // head, row-major): query i sees the keys |i - j| <= radius. -> [rows, H, dv]. The backward recomputes the
  // scores from the kept row log-sum-exp (no [L, L] tensor either way).
  m.def(
      "band_attention",
      [](const nb::ndarray<>& q, const nb::ndarray<>& k, const nb::ndarray<>& v, const std::vector<std::int64_t>& lengths,
         float scale, const std::vector<std::int64_t>& radii, bool need_q, bool need_k, bool need_v) {
        std::vector<nn::Var> leaves{nn::Var(borrow_float(q, "band_attention: q"), need_q),
                                    nn::Var(borrow_float(k, "band_attention: k"), need_k),
                                    nn::Var(borrow_float(v, "band_attention: v"), need_v)};
        nn::Var out;
        {
          nb::gil_scoped_release release;
          out = nn::flash_attention(leaves[0], leaves[1], leaves[2], lengths, scale, radii);
        }
        return finish(std::move(out), std::move(leaves));
      },
      nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("lengths"), nb::arg("scale"), nb::arg("radii"),
      nb::arg("need_q"), nb::arg("need_k"), nb::arg("need_v"));
  // (destination type, [(source type, node count)] in the order the block stacks its sources).
  m.def("attention_block_sources", [](const HeteroGraph& g, const std::vector<std::string>& etypes) {
    const Block b = attention_block(g, etypes);
    std::vector<std::pair<std::string, std::int64_t>> sources;
    for (std::size_t i = 0; i < b.src_types.size(); ++i)
      sources.emplace_back(b.src_types[i], b.src_offsets[i + 1] - b.src_offsets[i]);
    return std::make_pair(b.dst_type, sources);
  });
}

}  // namespace topo::py
