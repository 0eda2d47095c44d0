"""The graph ops in plain torch over a relation's COO: taped's float64 path (_autograd.py).

Topograph's kernels compute in float32. When torch's promotion of an op's operands is float64, ops.py runs gspmm,
gsddmm, edge_softmax, sparse_attention and gat_attention as written here instead: index_select by the edges'
source / destination ids, then _segment's group_reduce / group_softmax per destination (or source). The result is
float64 computed in float64, and torch's autograd differentiates it (double backward too). The kernels' semantics:

- row shapes broadcast numpy-style from the right, after the row dim ([E, H, 1] against [N, H, D] -> [H, D]); dot
  reduces the last dim, kept as 1 (kernels/sparse/bcast.cpp);
- gspmm max / min skip a NaN message (the kernels' strict comparison) and pass the gradient to the first edge (the
  lowest id) holding the extreme; a destination whose messages are all NaN (or all -inf for max, +inf for min)
  gets -inf (max) / +inf (min) and no gradient, one without in-edges 0 (ops.gspmm then gives it -inf / +inf, as
  dgl.ops);
- edge_softmax over a group holding a NaN, or only -inf, is NaN there;
- gat_attention's attention dropout draws its mask from torch's generator (the kernel draws it from its own).

Each op forms [E, ...] per-edge tensors that the fused kernels avoid: this path is for precision, not speed.
band_attention (packed sequences, no graph) is here too: per sequence, dense [H, L, L] scores masked to each head's
band, a softmax and a product with v, the kernel's checks repeated (it is not called).
"""
from __future__ import annotations

import itertools
from typing import List, NamedTuple, Optional

import torch

from . import _C
from ._segment import group_reduce, group_softmax

_BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}


class Coo(NamedTuple):
    """One relation's edges by edge id: edge i is src[i] -> dst[i] ([E] int64, on the graph's device)."""
    src: torch.Tensor
    dst: torch.Tensor
    num_src: int
    num_dst: int


def coo(g, relation: int) -> Coo:
    """Relation `relation` (an index of canonical_etypes) of the DGLGraph g."""
    h = g._g
    s, _, d = h.canonical_etypes[relation]
    src, dst = (t.to(torch.int64) for t in h.edges(relation))
    return Coo(src, dst, h.num_nodes(h.ntype_id(s)), h.num_nodes(h.ntype_id(d)))


def attention_coo(g, etypes: List[str]) -> Coo:
    """The block ops.sparse_attention runs on: g's one relation when etypes is [], else the relations etypes (all
    into one destination type) as one, their source ids shifted to the rows of the sources stacked by type in
    _C.attention_block_sources's order (k and v hold those rows)."""
    if not etypes:
        return coo(g, g._relation(None))
    _, sources = _C.attention_block_sources(g._g, etypes)
    offsets = dict(zip((t for t, _ in sources), itertools.accumulate((n for _, n in sources), initial=0)))
    parts = [(coo(g, r), g._g.canonical_etypes[r][0]) for r in (g._relation(t) for t in etypes)]
    src = torch.cat([part.src + offsets[source] for part, source in parts])
    dst = torch.cat([part.dst for part, _ in parts])
    return Coo(src, dst, sum(n for _, n in sources), parts[0][0].num_dst)


def _checked_rows(x: torch.Tensor, rows: int, what: str) -> torch.Tensor:
    if x.shape[0] != rows:  # index_select would take a longer tensor's first rows, broadcasting a 1-row one
        raise ValueError(f"{what} of shape {list(x.shape)} must have {rows} rows")
    return x


def _per_edge(x: torch.Tensor, target: str, g: Coo, what: str) -> torch.Tensor:
    """The row of x [rows, ...] that each edge reads: its source's ('u'), destination's ('v') or own ('e'), [E, ...]."""
    if target == "e":
        return _checked_rows(x, g.src.shape[0], what)
    ids, rows = (g.src, g.num_src) if target == "u" else (g.dst, g.num_dst)
    return _checked_rows(x, rows, what).index_select(0, ids)


def _aligned(a: torch.Tensor, b: torch.Tensor, what: str, dot: bool = False):
    """a [E, *l], b [E, *r] with 1s inserted after the row dim until both have as many dims, so that torch
    broadcasts the row shapes from the right as the kernels do; with dot, the last dims (equal) are left out of
    the broadcast. A ValueError, worded as the kernels', when they do not broadcast."""
    la, lb = list(a.shape[1:]), list(b.shape[1:])
    if dot:
        if not la or not lb or la[-1] != lb[-1]:
            raise ValueError(f"{what}: dot needs equal last feature dims, got {la} and {lb}")
        la, lb = la[:-1], lb[:-1]
    nd = max(len(la), len(lb))
    pa, pb = [1] * (nd - len(la)) + la, [1] * (nd - len(lb)) + lb
    if any(x != y and 1 not in (x, y) for x, y in zip(pa, pb)):
        raise ValueError(f"{what}: feature shapes {list(a.shape[1:])} and {list(b.shape[1:])} do not broadcast")
    return (a.reshape(a.shape[0], *[1] * (nd - len(la)), *a.shape[1:]),
            b.reshape(b.shape[0], *[1] * (nd - len(lb)), *b.shape[1:]))


def gspmm(g: Coo, op: str, reduce_op: str, u: Optional[torch.Tensor], e: Optional[torch.Tensor]) -> torch.Tensor:
    """out[v] = reduce_op over v's in-edges (s -> v, id i) of op(u[s], e[i]): u [num_src, ...], e [E, ...] ->
    [num_dst, *broadcast row shape]; op as ops.gspmm's, 0 for a destination without in-edges."""
    if op == "copy_lhs":
        msg = _per_edge(u, "u", g, "gspmm: lhs_data")
    elif op == "copy_rhs":
        msg = _per_edge(e, "e", g, "gspmm: rhs_data")
    else:
        msg = _BINARY[op](*_aligned(_per_edge(u, "u", g, "gspmm: lhs_data"), _per_edge(e, "e", g, "gspmm: rhs_data"),
                                    "gspmm"))
    if reduce_op not in ("max", "min"):
        return group_reduce(msg, g.dst, g.num_dst, reduce_op)
    # The kernels start from the identity and take a message only when it beats it (strictly): a NaN never wins,
    # and a destination none wins for (every message NaN or the identity itself) keeps the identity, no gradient.
    identity = float("-inf") if reduce_op == "max" else float("inf")
    out = group_reduce(msg.masked_fill(msg.isnan(), identity), g.dst, g.num_dst, reduce_op)
    return out.masked_fill(out == identity, identity)


def gsddmm(g: Coo, op: str, lhs: Optional[torch.Tensor], rhs: Optional[torch.Tensor], lhs_target: str,
           rhs_target: str) -> torch.Tensor:
    """out[i] = op(lhs[lhs_target of edge i], rhs[rhs_target of edge i]) -> [E, *broadcast row shape]; targets
    'u', 'v', 'e'; op as ops.gsddmm's (dot: [E, ..., 1])."""
    if op == "copy_lhs":
        return _per_edge(lhs, lhs_target, g, "gsddmm: lhs_data")
    if op == "copy_rhs":
        return _per_edge(rhs, rhs_target, g, "gsddmm: rhs_data")
    a, b = _aligned(_per_edge(lhs, lhs_target, g, "gsddmm: lhs_data"),
                    _per_edge(rhs, rhs_target, g, "gsddmm: rhs_data"), "gsddmm", dot=op == "dot")
    return (a * b).sum(-1, keepdim=True) if op == "dot" else _BINARY[op](a, b)


def edge_softmax(g: Coo, logits: torch.Tensor, by_src: bool) -> torch.Tensor:
    """logits [E, ...] normalised over each destination's in-edges (each source's out-edges with by_src)."""
    _checked_rows(logits, g.src.shape[0], "edge_softmax: logits")
    return group_softmax(logits, g.src, g.num_src) if by_src else group_softmax(logits, g.dst, g.num_dst)


def sparse_attention(g: Coo, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    """ops.sparse_attention composed: q [num_dst, H, dk], k [num_src, H, dk], v [num_src, H, dv] -> [num_dst, H, dv]."""
    scores = gsddmm(g, "dot", q, k, "v", "u") * scale  # [E, H, 1]
    return gspmm(g, "mul", "sum", v, edge_softmax(g, scores, by_src=False))


def gat_attention(g: Coo, el: torch.Tensor, er: torch.Tensor, z: torch.Tensor, negative_slope: float,
                  attn_drop: float) -> torch.Tensor:
    """ops.gat_attention composed: el [num_src, H(, 1)], er [num_dst, H(, 1)], z [num_src, H, F] -> [num_dst, H, F];
    attn_drop > 0 drops attention weights (torch's dropout, scaled by 1 / (1 - attn_drop))."""
    heads = z.shape[1]
    for x, name in ((el, "el"), (er, "er")):
        if tuple(x.shape[1:]) not in ((heads,), (heads, 1)):
            raise ValueError(f"gat_attention: {name} must be [rows, {heads}] or [rows, {heads}, 1] for z "
                             f"{list(z.shape)}, got {list(x.shape)}")
    # both [rows, H, 1]: an [H] row against an [H, 1] one would broadcast to [H, H]
    el, er = el.reshape(el.shape[0], heads, 1), er.reshape(er.shape[0], heads, 1)
    scores = torch.nn.functional.leaky_relu(gsddmm(g, "add", el, er, "u", "v"), negative_slope)  # [E, H, 1]
    attention = edge_softmax(g, scores, by_src=False)
    if attn_drop > 0.0:
        attention = torch.nn.functional.dropout(attention, attn_drop, training=True)
    return gspmm(g, "mul", "sum", z, attention)


def band_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, lengths: List[int], scale: float,
                   radii: List[int]) -> torch.Tensor:
    """ops.band_attention dense per sequence: q, k [rows, H, dk], v [rows, H, dv] -> [rows, H, dv]; sequence b owns
    lengths[b] (>= 1) consecutive rows; radii [] (full), [B] or [B * H] row-major (>= 0): query i of sequence b in
    head h sees the keys j of its sequence with |i - j| <= radius (itself always, so no row is empty)."""
    op = "band_attention"
    if q.dim() != 3 or k.dim() != 3 or v.dim() != 3:
        raise ValueError(f"{op}: q, k, v must be [rows, heads, dim], got {list(q.shape)}, {list(k.shape)}, "
                         f"{list(v.shape)}")
    if q.shape != k.shape:
        raise ValueError(f"{op}: q {list(q.shape)} and k {list(k.shape)} differ")
    if v.shape[:2] != q.shape[:2]:
        raise ValueError(f"{op}: v {list(v.shape)} does not match q {list(q.shape)} in rows and heads")
    if not lengths:
        raise ValueError(f"{op}: no sequences")
    for b, n in enumerate(lengths):
        if n < 1:
            raise ValueError(f"{op}: sequence {b} has length {n} (must be >= 1)")
    if q.shape[0] != sum(lengths):
        raise ValueError(f"{op}: q has {q.shape[0]} rows but the lengths sum to {sum(lengths)}")
    sequences, heads = len(lengths), q.shape[1]
    if len(radii) not in (0, sequences, sequences * heads):
        raise ValueError(f"{op}: {len(radii)} radii for {sequences} sequences of {heads} heads (expected none, "
                         f"{sequences} or {sequences * heads})")
    for i, r in enumerate(radii):
        if r < 0:
            b, h = (i, 0) if len(radii) == sequences else divmod(i, heads)
            raise ValueError(f"{op}: sequence {b} head {h} has radius {r} (must be >= 0)")
    outs, start = [], 0
    for b, n in enumerate(lengths):
        qs, ks, vs = (x[start:start + n].transpose(0, 1) for x in (q, k, v))  # [H, n, d]
        scores = (qs @ ks.transpose(1, 2)) * scale  # [H, n, n]
        if radii:
            r = radii[b:b + 1] * heads if len(radii) == sequences else radii[b * heads:(b + 1) * heads]
            pos = torch.arange(n, device=q.device)
            dist = (pos.view(-1, 1) - pos.view(1, -1)).abs()  # [n, n]
            outside = dist.unsqueeze(0) > torch.tensor(r, device=q.device).view(-1, 1, 1)  # [H, n, n]
            scores = scores.masked_fill(outside, float("-inf"))
        outs.append((torch.softmax(scores, dim=-1) @ vs).transpose(0, 1))  # [n, H, dv]
        start += n
    return torch.cat(outs)
