"""dgl.ops over Topograph's kernels: gspmm, gsddmm, edge_softmax and DGL's shorthands.

Shapes (as DGL): node features [N, D] or [N, H, D], edge features [E, ...] by edge id ([E, H, 1] or [E, H]
against [N, H, D], ...); the per-row shapes broadcast numpy-style from the right. A 1-D operand [N] is
treated as [N, 1] and, when every operand given is 1-D, the output is squeezed back (DGL's rule).

Tensors: float16, bfloat16, float32 or float64, on the graph's device. The kernels compute in float32: a
contiguous float32 tensor is read in place (zero copy; the backward reads it again, so modifying it in place
before backward raises); a non-contiguous tensor is first made contiguous with ``.contiguous()`` (one copy).
When the operands' torch promotion (torch.result_type) is float64, every op computes in float64 instead, in plain
torch over the graph's COO (_float64.py: exact, differentiable twice, but it forms [E, ...] tensors per edge;
band_attention dense [H, L, L] scores per sequence). Any other float dtype is cast to float32 on the way in and
the output back to the promotion, float16 / bfloat16 accumulating in float32, with each gradient in its input's
dtype (taped, _autograd.py). Integer, bool and complex tensors raise TypeError. The kernels' outputs and
gradients are Topograph's buffers handed to torch by DLPack, not copied.

Every op takes a graph with one relation (pass ``g[etype]`` or ``edge_type_subgraph(g, [etype])`` for one
relation of a heterograph), except gspmm and gsddmm (and so their shorthands), which, as DGL 2.1's, also take a
graph of several relations with tuples of per-type features: see _gspmm_relations / _gsddmm_relations. Errors
(shapes, ids, devices) are ValueError / RuntimeError with Topograph's message.

segment_reduce / segment_softmax (dgl.ops.segment_*, over runs of consecutive rows, no graph) are plain torch
ops (topograph/_segment.py): any dtype.
"""
from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Optional

import torch

from . import _C, _float64
from ._autograd import FLOAT_DTYPES, taped
from ._compile import eager
from ._base import DGLTypeError
from ._graph import ALL, DGLError, DGLGraph
from ._segment import gather_mm, segment_mm, segment_reduce, segment_softmax  # dgl.ops' segment ops: plain torch
from ._segment import group_softmax

# The C++ enums' values (kernels/sparse/spmm_math.hpp, sddmm_math.hpp).
_SPMM_OPS = {"copy_lhs": 0, "copy_rhs": 1, "add": 2, "sub": 3, "mul": 4, "div": 5}
_REDUCE = {"sum": 0, "max": 1, "min": 2, "mean": 3}
_SDDMM_OPS = {"add": 0, "sub": 1, "mul": 2, "div": 3, "dot": 4, "copy_lhs": 5, "copy_rhs": 6}
_TARGETS = {"u": 0, "src": 0, "v": 1, "dst": 1, "e": 2, "edge": 2}


def _need_float(x: torch.Tensor, what: str) -> None:
    """A DGLTypeError naming `what` unless x is float16, bfloat16, float32 or float64 (DGL's feature dtypes; it
    refuses integer features too, with a DGLError). The cast to the kernels' float32 and back, or the float64
    path, is taped's (_autograd.py)."""
    if x.dtype not in FLOAT_DTYPES:
        raise DGLTypeError(f"{what}: features must be float16, bfloat16, float32 or float64, got {x.dtype} (cast "
                           f"with .float())")


def _feature(x: Optional[torch.Tensor], what: str):
    """(tensor as the kernels take it, whether it was 1-D)."""
    if x is None:
        return None, False
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{what}: expected a torch.Tensor, got {type(x).__name__}")
    _need_float(x, what)
    if x.dim() == 0:
        raise ValueError(f"{what}: expected [rows, ...], got a scalar")
    one_d = x.dim() == 1
    if one_d:
        x = x.unsqueeze(-1)
    if not x.is_contiguous():
        x = x.contiguous()  # the one copy: the kernels read row-major memory
    return x, one_d


def _graph(g) -> DGLGraph:
    if not isinstance(g, DGLGraph):
        raise TypeError(f"expected a topograph graph, got {type(g).__name__}")
    return g


def _lookup(table, key, what):
    try:
        return table[key]
    except KeyError:
        raise ValueError(f"{what} must be one of {sorted(table)}, got {key!r}") from None


@eager
def gspmm(g: DGLGraph, op: str, reduce_op: str, lhs_data, rhs_data):
    """out[v] = reduce_{(u -> v, e)} op(lhs_data[u], rhs_data[e]) -> [num_dst, *broadcast row shape].

    op: 'add', 'sub', 'mul', 'div', 'copy_lhs' (rhs_data None) or 'copy_rhs' (lhs_data None); reduce_op:
    'sum', 'max', 'min', 'mean'. A destination without in-edges gets 0 for sum and mean and, as dgl.ops
    gives it, -inf for max and +inf for min (update_all gives 0 there, as DGL's does). On a graph of several
    relations, tuples of per-type features in, a tuple per node type out (_gspmm_relations)."""
    g = _graph(g)
    if len(g._g.canonical_etypes) > 1:
        return _gspmm_relations(g, op, reduce_op, lhs_data, rhs_data)
    return _gspmm_relation(g, g._relation(None), op, reduce_op, lhs_data, rhs_data, infinite_when_empty=True)


def gspmm_zero_empty(g: DGLGraph, op: str, reduce_op: str, lhs_data: Optional[torch.Tensor],
                     rhs_data: Optional[torch.Tensor]) -> torch.Tensor:
    """gspmm with Topograph's kernel as it is: 0 for a destination without in-edges under every reducer."""
    g = _graph(g)
    return _gspmm_relation(g, g._relation(None), op, reduce_op, lhs_data, rhs_data, infinite_when_empty=False)


def _gspmm_relation(g: DGLGraph, relation: int, op: str, reduce_op: str, lhs_data: Optional[torch.Tensor],
                    rhs_data: Optional[torch.Tensor], infinite_when_empty: bool) -> torch.Tensor:
    """gspmm on relation `relation` of g: [num_dst of the relation, ...]; a destination without in-edges gets
    0, or, with infinite_when_empty, -inf from max and +inf from min (dgl.ops')."""
    code, reduce = _lookup(_SPMM_OPS, op, "gspmm: op"), _lookup(_REDUCE, reduce_op, "gspmm: reduce_op")
    u, u1 = _feature(lhs_data if op != "copy_rhs" else None, "gspmm: lhs_data")
    e, e1 = _feature(rhs_data if op != "copy_lhs" else None, "gspmm: rhs_data")
    out = taped(lambda a, b, need: _C.gspmm(g._g, relation, code, reduce, a, b, need[0], need[1]), u, e,
                float64=lambda a, b: _float64.gspmm(_float64.coo(g, relation), op, reduce_op, a, b))
    out = _squeeze(out, [(u, u1), (e, e1)])
    if infinite_when_empty and reduce_op in ("max", "min"):
        empty = g._g.in_degrees(relation) == 0  # [num_dst]
        if bool(empty.any()):
            fill = float("-inf") if reduce_op == "max" else float("inf")
            out = out.masked_fill(empty.to(out.device).view((-1,) + (1,) * (out.dim() - 1)), fill)
    return out


@eager
def gsddmm(g: DGLGraph, op: str, lhs_data, rhs_data, lhs_target: str = "u", rhs_target: str = "v"):
    """out[e] = op(lhs_data[lhs_target of e], rhs_data[rhs_target of e]) -> [num_edges, *broadcast row shape].

    op: 'add', 'sub', 'mul', 'div', 'dot' (reduces the last dim, kept as 1), 'copy_lhs', 'copy_rhs';
    targets 'u' (source), 'v' (destination), 'e' (edge). On a graph of several relations, tuples of per-type
    features in, a tuple per relation out (_gsddmm_relations)."""
    g = _graph(g)
    if len(g._g.canonical_etypes) > 1:
        return _gsddmm_relations(g, op, lhs_data, rhs_data, lhs_target, rhs_target)
    return _gsddmm_relation(g, g._relation(None), op, lhs_data, rhs_data, lhs_target, rhs_target)


def _gsddmm_relation(g: DGLGraph, relation: int, op: str, lhs_data: Optional[torch.Tensor],
                     rhs_data: Optional[torch.Tensor], lhs_target: str, rhs_target: str) -> torch.Tensor:
    """gsddmm on relation `relation` of g: [its num_edges, ...]."""
    code = _lookup(_SDDMM_OPS, op, "gsddmm: op")
    lt, rt = _lookup(_TARGETS, lhs_target, "gsddmm: lhs_target"), _lookup(_TARGETS, rhs_target, "gsddmm: rhs_target")
    lhs, l1 = _feature(lhs_data if op != "copy_rhs" else None, "gsddmm: lhs_data")
    rhs, r1 = _feature(rhs_data if op != "copy_lhs" else None, "gsddmm: rhs_data")
    targets = "uve"[lt], "uve"[rt]  # the _TARGETS codes as _float64 names them
    out = taped(lambda a, b, need: _C.gsddmm(g._g, relation, code, a, b, lt, rt, need[0], need[1]), lhs, rhs,
                float64=lambda a, b: _float64.gsddmm(_float64.coo(g, relation), op, a, b, *targets))
    return _squeeze(out, [(lhs, l1), (rhs, r1)])


# --- dgl.ops.gspmm / gsddmm on a graph of several relations (DGL 2.1's gspmm_hetero / gsddmm_hetero)
def _gspmm_relations(g: DGLGraph, op: str, reduce_op: str, lhs_data, rhs_data) -> tuple:
    """gspmm on every relation at once, as dgl.ops': lhs_data a tuple of source features per node type (g.ntypes
    order; None where no relation reads one), rhs_data a tuple of edge features per relation
    (g.canonical_etypes order). Each destination type combines its relations' results by reduce_op itself (sum
    of sums, max of maxes, min of mins: the reducer over every in-edge of every relation; max / min give -inf /
    +inf to a node with no in-edge in any relation). Returns a tuple per node type: [n, ...] for a relation's
    destination type, an empty tensor [0] for any other, as DGL's."""
    from ._hetero_passing import combined  # it builds on _message_passing, which builds on this module

    _refuse_block(g, "gspmm")
    if reduce_op == "mean":
        raise NotImplementedError("gspmm: reduce_op 'mean' over several relations at once is not supported (DGL "
                                  "2.1's fails too): use sum, max or min, or call it per relation on g[etype]")
    ntypes, relations = g.ntypes, g.canonical_etypes
    lhs = _per_type(lhs_data if op != "copy_rhs" else None, ntypes, "gspmm: lhs_data", "node type")
    rhs = _per_type(rhs_data if op != "copy_lhs" else None, relations, "gspmm: rhs_data", "relation")
    per_destination = {}
    for r, (s, _, d) in enumerate(relations):
        u = _read_by(lhs, ntypes, s, "gspmm: lhs_data", relations[r]) if op != "copy_rhs" else None
        e = _read_by(rhs, relations, relations[r], "gspmm: rhs_data", relations[r]) if op != "copy_lhs" else None
        out = _gspmm_relation(g, r, op, reduce_op, u, e, infinite_when_empty=True)
        per_destination.setdefault(d, []).append((relations[r], out))
    return tuple(combined(per_destination[t], reduce_op, f"gspmm: the output of {t!r}") if t in per_destination
                 else torch.zeros(0, device=g.device) for t in ntypes)


def _gsddmm_relations(g: DGLGraph, op: str, lhs_data, rhs_data, lhs_target: str, rhs_target: str) -> tuple:
    """gsddmm on every relation at once, as dgl.ops': lhs_data / rhs_data a tuple per node type (g.ntypes order)
    for target 'u' / 'v', per relation (g.canonical_etypes order) for 'e'. Returns a tuple per relation of its
    edges' [E, ...]."""
    _refuse_block(g, "gsddmm")
    ntypes, relations = g.ntypes, g.canonical_etypes
    lt, rt = _lookup(_TARGETS, lhs_target, "gsddmm: lhs_target"), _lookup(_TARGETS, rhs_target, "gsddmm: rhs_target")
    lhs_names, rhs_names = (relations if t == 2 else ntypes for t in (lt, rt))  # 2: the edge target
    lhs = _per_type(lhs_data if op != "copy_rhs" else None, lhs_names, "gsddmm: lhs_data",
                    "relation" if lt == 2 else "node type")
    rhs = _per_type(rhs_data if op != "copy_lhs" else None, rhs_names, "gsddmm: rhs_data",
                    "relation" if rt == 2 else "node type")
    out = []
    for r, (s, _, d) in enumerate(relations):
        key = (s, d, relations[r])  # what target 0 (u), 1 (v), 2 (e) reads on this relation
        x = None if op == "copy_rhs" else _read_by(lhs, lhs_names, key[lt], "gsddmm: lhs_data", relations[r])
        y = None if op == "copy_lhs" else _read_by(rhs, rhs_names, key[rt], "gsddmm: rhs_data", relations[r])
        out.append(_gsddmm_relation(g, r, op, x, y, lhs_target, rhs_target))
    return tuple(out)


def _refuse_block(g: DGLGraph, what: str) -> None:
    if g.is_block:
        raise NotImplementedError(f"{what} over several relations of a block at once is not supported (DGL "
                                  f"indexes its tuples by the block's own source and destination types): call it "
                                  f"per relation, on block[etype]")


def _per_type(data, names: list, what: str, kind: str) -> Optional[list]:
    """A per-type operand of an op over several relations: a tuple / list of a tensor (or None) per entry of
    `names`, in that order, or None; anything else is a DGLError naming the order."""
    if data is None:
        return None
    if not isinstance(data, (tuple, list)) or len(data) != len(names):
        got = f"{len(data)} entries" if isinstance(data, (tuple, list)) else type(data).__name__
        raise DGLError(f"{what}: the graph has several relations, so give a tuple of one tensor (or None) per "
                       f"{kind}, in the order {names}, as dgl.ops; got {got}")
    return list(data)


def _read_by(data: Optional[list], names: list, key, what: str, relation) -> torch.Tensor:
    """data's tensor for `key` (a node type or relation of names), which `relation` reads: a DGLError if none."""
    x = None if data is None else data[names.index(key)]
    if x is None:
        raise DGLError(f"{what}: no tensor for {key!r}, which relation {relation} reads")
    return x


@eager
def edge_softmax(graph: DGLGraph, logits: torch.Tensor, eids=ALL, norm_by: str = "dst") -> torch.Tensor:
    """Softmax of per-edge logits [E, ...] over each destination's in-edges (norm_by='dst') or each source's
    out-edges ('src'); trailing dims (heads) are independent. Same shape as logits. eids (ids or a mask, as
    DGL's): the softmax runs over the subgraph of those edges only, logits [len(eids), ...] in their order.
    On a graph of several relations, logits is {relation: [E_r, ...]} with every relation (a name or a canonical
    triple) and so is the result (keyed by canonical triples), as DGL's: each node's edges of every relation
    into (out of) it share one softmax."""
    g = _graph(graph)
    if isinstance(logits, Mapping):
        return _edge_softmax_relations(g, logits, eids, norm_by)
    if not (isinstance(eids, str) and eids == ALL):  # over the subgraph of those edges, logits [len(eids), ...]
        from ._subgraph import edge_subgraph

        try:
            g = edge_subgraph(g, eids, relabel_nodes=False, store_ids=False)
        except (ValueError, DGLError) as e:  # named as this call's argument, not as edge_subgraph's
            raise type(e)(f"edge_softmax: eids: {str(e).removeprefix('edge_subgraph: ')}") from None
        if logits.shape[0] != g.num_edges():
            raise DGLError(f"edge_softmax: logits must have one row per edge of eids ({g.num_edges()}), got "
                           f"{tuple(logits.shape)}")
    if norm_by not in ("dst", "src"):
        raise DGLError(f"edge_softmax: norm_by must be 'dst' or 'src', got {norm_by!r}")
    x, one_d = _feature(logits, "edge_softmax: logits")
    rel, by_src = g._relation(None), norm_by == "src"
    out = taped(lambda s, need: _C.edge_softmax(g._g, rel, s, by_src, need[0]), x,
                float64=lambda s: _float64.edge_softmax(_float64.coo(g, rel), s, by_src))
    return out.squeeze(-1) if one_d else out


def _edge_softmax_relations(g: DGLGraph, logits: Mapping, eids, norm_by: str) -> dict:
    """edge_softmax over {relation: logits} (its doc): the relations' edges laid one after another, each grouped
    by its destination (source) numbered across types, then one softmax per group (plain torch: the kernel
    takes one relation)."""
    if not (isinstance(eids, str) and eids == ALL):
        raise DGLError("edge_softmax: eids is not supported with {relation: logits} (nor by DGL 2.1's); take "
                       "the edge subgraph first")
    if norm_by not in ("dst", "src"):
        raise DGLError(f"edge_softmax: norm_by must be 'dst' or 'src', got {norm_by!r}")
    given = {g.to_canonical_etype(k): v for k, v in logits.items()}
    missing = [c for c in g.canonical_etypes if c not in given]
    if missing:
        raise DGLError(f"edge_softmax: logits has no tensor for relations {missing}: it needs one per relation")
    starts, total = {}, 0  # each node type's first group
    for t in g.ntypes:
        starts[t], total = total, total + g.num_nodes(t)
    values, groups = [], []
    for c in g.canonical_etypes:
        x = given[c]
        if not isinstance(x, torch.Tensor) or x.dim() == 0 or x.shape[0] != g.num_edges(c):
            shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise DGLError(f"edge_softmax: logits[{c}] must have one row per edge ({g.num_edges(c)}), got {shape}")
        u, v = g.edges(etype=c)
        node, ntype = (v, c[2]) if norm_by == "dst" else (u, c[0])
        values.append(x)
        groups.append(node.to(device=x.device, dtype=torch.int64) + starts[ntype])
    out = group_softmax(torch.cat(values), torch.cat(groups), total)
    return dict(zip(g.canonical_etypes, out.split([g.num_edges(c) for c in g.canonical_etypes])))


@eager
def sparse_attention(g: DGLGraph, q: torch.Tensor, k, v, scale: Optional[float] = None) -> torch.Tensor:
    """Topograph's fused attention: out[d] = sum_{s -> d} softmax_s(scale * q[d] . k[s]) v[s], per head.

    q [num_dst, H, dk], k [num_src, H, dk], v [num_src, H, dv] -> [num_dst, H, dv]; scale defaults to
    1 / sqrt(dk); a destination without in-edges gets 0. The same as v_dot_u(g, q, k) * scale ->
    edge_softmax -> u_mul_e_sum(g, v, .) in one pass that never forms the [E, H] scores, with the kernel's
    own two-pass backward (in float64 it is that composition, _float64.py).

    ``g`` has one relation, or several relations into one destination type: then one softmax runs across
    all of them (DGL would need a homogeneous graph for that) and k, v are dicts {source type: [n, H, d]}
    (or tensors with every source type's rows stacked in the graph's type order)."""
    g = _graph(g)
    etypes = [] if len(g.canonical_etypes) == 1 else list(g.etypes)
    if isinstance(k, dict) or isinstance(v, dict):
        _, sources = _C.attention_block_sources(g._g, etypes)
        sources = [(g._public_ntype(t), n) for t, n in sources]
        k, v = (_stack_sources(x, sources, name) for x, name in ((k, "k"), (v, "v")))
    qs, ks, vs = (_feature(x, f"sparse_attention: {name}")[0] for x, name in ((q, "q"), (k, "k"), (v, "v")))
    if qs.dim() != 3:
        raise ValueError(f"sparse_attention: q must be [num_dst, H, dk], got {tuple(q.shape)}")
    s = float(scale) if scale is not None else qs.shape[-1] ** -0.5
    return taped(lambda a, b, c, need: _C.sparse_attention(g._g, etypes, a, b, c, s, *need), qs, ks, vs,
                 float64=lambda a, b, c: _float64.sparse_attention(_float64.attention_coo(g, etypes), a, b, c, s))


@eager
def gat_attention(g: DGLGraph, el: torch.Tensor, er: torch.Tensor, z: torch.Tensor, negative_slope: float = 0.2,
                  attn_drop: float = 0.0, training: bool = False) -> torch.Tensor:
    """GAT's attention in one op: out[d] = sum_{s -> d} dropout(softmax_s(LeakyReLU(el[s] + er[d]))) z[s], per head.

    el [num_src, H, 1] (or [num_src, H]), er [num_dst, H, 1], z [num_src, H, F] -> [num_dst, H, F]; a destination
    without in-edges gets 0. The same as leaky_relu(u_add_v(g, el, er)) -> edge_softmax -> dropout ->
    u_mul_e_sum(g, z, .), but nothing per edge is kept for the backward (the composition keeps about three
    [E, H] tensors). With training and attn_drop > 0 the mask's seed is drawn from torch's generator. In float64 it
    is that composition (_float64.py), with torch's dropout."""
    g = _graph(g)
    if not 0.0 <= attn_drop < 1.0:
        raise ValueError(f"gat_attention: attn_drop must be in [0, 1), got {attn_drop}")
    tensors = [_feature(x, f"gat_attention: {name}")[0] for x, name in ((el, "el"), (er, "er"), (z, "z"))]
    if tensors[2].dim() != 3:
        raise ValueError(f"gat_attention: z must be [num_src, H, F], got {tuple(z.shape)}")
    p = float(attn_drop) if training else 0.0
    seed = int(torch.randint(0, 2**62, (1,)).item()) if p > 0.0 else 0
    rel = g._relation(None)
    return taped(lambda a, b, c, need: _C.gat_attention(g._g, rel, a, b, c, float(negative_slope), p, seed, *need),
                 *tensors, float64=lambda a, b, c: _float64.gat_attention(_float64.coo(g, rel), a, b, c,
                                                                          float(negative_slope), p))


@eager
def band_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, lengths, radius=None,
                   scale: Optional[float] = None) -> torch.Tensor:
    """Self-attention within packed sequences, each query seeing the keys of its sequence within `radius`
    positions: out[i] = sum_{j in seq(i), |i - j| <= r} softmax_j(scale * q[i] . k[j]) v[j], per head.

    q, k [rows, H, dk], v [rows, H, dv] -> [rows, H, dv]; sequence b owns `lengths[b]` (>= 1) consecutive rows,
    rows = sum(lengths), so no padding is computed. scale defaults to 1 / sqrt(dk). radius:
      None                 full attention within each sequence,
      int                  every sequence and head,
      [B]                  one per sequence (a list or 1-D tensor),
      [B, H] or [1, H]     one per (sequence, head), or one per head for every sequence (a 2-D tensor or
                           nested lists): Multi-Scale's head groups, each with its own window, in one call.
    A radius r is builders.window's width 2 r + 1 (clipped at the sequence ends; r >= length - 1 is full).
    Topograph's fused dense kernel (nn::flash_attention): key tiles outside the band are never computed,
    and the backward recomputes the scores from the row log-sum-exp (no [L, L] tensor either way). float64 operands
    run _float64.band_attention instead: dense masked [H, L, L] scores per sequence in float64 (exact, differentiable
    twice, not fast)."""
    qs, ks, vs = (_feature(x, f"band_attention: {name}")[0] for x, name in ((q, "q"), (k, "k"), (v, "v")))
    if qs.dim() != 3:
        raise ValueError(f"band_attention: q must be [rows, H, dk], got {tuple(q.shape)}")
    lens = _int_list(lengths, "band_attention: lengths")
    radii = _radii(radius, len(lens), qs.shape[1])
    s = float(scale) if scale is not None else qs.shape[-1] ** -0.5
    return taped(lambda a, b, c, need: _C.band_attention(a, b, c, lens, s, radii, *need), qs, ks, vs,
                 float64=lambda a, b, c: _float64.band_attention(a, b, c, lens, s, radii))


def _int_list(x, what: str):
    t = x if isinstance(x, torch.Tensor) else torch.as_tensor(x)
    if t.dim() == 1 and t.numel() == 0:  # [] / torch.tensor([]) are float32 to torch: no values to misread
        return []
    if t.dtype.is_floating_point or t.dtype == torch.bool or t.dtype.is_complex:
        raise TypeError(f"{what}: expected integers, got {t.dtype}")
    if t.dim() != 1:
        raise ValueError(f"{what}: expected a 1-D list, got shape {tuple(t.shape)}")
    return t.tolist()


def _radii(radius, sequences: int, heads: int):
    """band_attention's radius as the kernel takes it: [] (full), [B] or [B * H] row-major."""
    if radius is None:
        return []
    if isinstance(radius, int):
        return [radius] * sequences
    r = radius if isinstance(radius, torch.Tensor) else torch.as_tensor(radius)
    if r.dtype.is_floating_point or r.dtype == torch.bool or r.dtype.is_complex:
        raise TypeError(f"band_attention: radius must be integers, got {r.dtype}")
    if r.dim() == 0:
        return [int(r)] * sequences
    if r.dim() == 1:
        if r.shape[0] != sequences:
            raise ValueError(f"band_attention: {r.shape[0]} radii for {sequences} sequences (give [B], or [B, H] / "
                             f"[1, H] per head)")
        return r.tolist()
    if r.dim() == 2 and r.shape[1] == heads and r.shape[0] in (1, sequences):
        return r.expand(sequences, heads).reshape(-1).tolist()
    raise ValueError(f"band_attention: radius of shape {tuple(r.shape)} for {sequences} sequences of {heads} heads "
                     f"(expected an int, [{sequences}], [{sequences}, {heads}] or [1, {heads}])")


def _stack_sources(x, sources, name):
    """{source type: rows} -> the block's [num_src, ...] (one copy, torch.cat), in its source order."""
    if not isinstance(x, dict):
        return x
    missing = [t for t, _ in sources if t not in x]
    if missing:
        raise ValueError(f"sparse_attention: {name} has no rows for source type(s) {missing}")
    return torch.cat([x[t] for t, _ in sources])


def _squeeze(out: torch.Tensor, operands) -> torch.Tensor:
    given = [one_d for x, one_d in operands if x is not None]
    return out.squeeze(-1) if given and all(given) else out


# --- DGL's shorthands (dgl.ops): copy_u_sum, u_mul_e_max, e_div_v, u_dot_v, copy_u, ...
def _spmm_shorthand(op: str, reduce_op: str, name: str):
    if op == "copy_u":
        def f(g, x):
            return gspmm(g, "copy_lhs", reduce_op, x, None)
    elif op == "copy_e":
        def f(g, x):
            return gspmm(g, "copy_rhs", reduce_op, None, x)
    else:
        def f(g, x, y):
            return gspmm(g, op, reduce_op, x, y)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"DGL's {name}: gspmm with op {op!r} and reduce {reduce_op!r}."
    return f


def _sddmm_shorthand(lhs: str, op: str, rhs: str, name: str):
    def f(g, x, y, etype=None):  # etype: dgl.u_add_v(g, x, y, etype=...)'s relation of a heterograph
        return gsddmm(g if etype is None else g[etype], op, x, y, lhs, rhs)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"DGL's {name}: gsddmm {op!r} of the {lhs!r} operand x and the {rhs!r} operand y."
    return f


__all__ = ["gspmm", "gsddmm", "edge_softmax", "sparse_attention", "gat_attention", "band_attention", "copy_u",
           "copy_v", "copy_e", "segment_reduce", "segment_softmax", "gather_mm", "segment_mm"]
for _op, _reduce in itertools.product(["add", "sub", "mul", "div", "copy_u", "copy_e"], list(_REDUCE)):
    _name = f"{_op}_{_reduce}" if _op.startswith("copy") else f"u_{_op}_e_{_reduce}"
    globals()[_name] = _spmm_shorthand(_op, _reduce, _name)
    __all__.append(_name)
for _lhs, _rhs in itertools.permutations("uve", 2):
    for _op in ["add", "sub", "mul", "div", "dot"]:
        _name = f"{_lhs}_{_op}_{_rhs}"
        globals()[_name] = _sddmm_shorthand(_lhs, _op, _rhs, _name)
        __all__.append(_name)


def copy_u(g: DGLGraph, x: torch.Tensor, etype=None) -> torch.Tensor:
    """Per edge (of relation etype, when given), its source's row of x: [E, ...]."""
    return gsddmm(g if etype is None else g[etype], "copy_lhs", x, None, "u", "v")


def copy_e(g: DGLGraph, x: torch.Tensor) -> torch.Tensor:
    """dgl.ops.copy_e: the edge features themselves, [E, ...] (checked to hold one row per edge, where DGL 2.1
    returns any x)."""
    g = _graph(g)
    if not isinstance(x, torch.Tensor) or x.dim() == 0 or x.shape[0] != g.num_edges():
        raise ValueError(f"copy_e: x must hold one row per edge ({g.num_edges()}), got "
                         f"{tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__}")
    return x


def copy_v(g: DGLGraph, x: torch.Tensor, etype=None) -> torch.Tensor:
    """Per edge (of relation etype, when given), its destination's row of x: [E, ...]."""
    return gsddmm(g if etype is None else g[etype], "copy_rhs", None, x, "u", "v")
