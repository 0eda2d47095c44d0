"""dgl.sampling.random_walk and pack_traces (DGL 2.1): walks along out-edges, one walker per start node, every
walker advanced together each step (torch ops over the walkers, on the relation's CSR from adj_tensors).

A step draws each walker's next edge uniformly among its node's out-edges of the step's relation, or with `prob`
in proportion to that edge feature (a row's running sums, searched once per walker); a walker at a node with no
out-edge (or none of positive weight) stops, as does one that restart_prob ends before the step; a stopped
walker's later positions are -1. Draws come from torch's default generator (torch.manual_seed repeats them): DGL's
law, not its numbers."""
from __future__ import annotations

from typing import List, Optional, Sequence

import torch

from ._base import DGLError
from ._graph import DGLGraph, EType
from ._transform import _check


def _relations(g: DGLGraph, metapath: Optional[Sequence[EType]], length: Optional[int]) -> List[tuple]:
    """The canonical relation of each step: metapath's (chained: each starts where the last ended), or
    `length` times the one relation of a graph whose relation joins one node type to itself."""
    if metapath is None:
        if length is None:
            raise DGLError("random_walk: give length (the number of steps), or a metapath")
        if isinstance(length, bool) or not isinstance(length, int) or length < 0:
            raise DGLError(f"random_walk: length must be an int >= 0, got {length!r}")
        if len(g.canonical_etypes) != 1 or g.canonical_etypes[0][0] != g.canonical_etypes[0][2]:
            raise DGLError(f"random_walk: a graph of relations {g.canonical_etypes} needs a metapath (without one, "
                           f"the graph must have one relation from a node type to itself)")
        return [g.canonical_etypes[0]] * length
    if length is not None:
        raise DGLError("random_walk: give length or metapath, not both (a metapath's length is its number of steps)")
    steps = [g.to_canonical_etype(e) for e in metapath]
    for i in range(1, len(steps)):
        if steps[i][0] != steps[i - 1][2]:
            raise DGLError(f"random_walk: metapath step {i} {steps[i]} does not start where step {i - 1} "
                           f"{steps[i - 1]} ends")
    return steps


def _restart(restart_prob, steps: int) -> Optional[torch.Tensor]:
    """restart_prob as [steps] float64 probabilities in [0, 1], or None."""
    if restart_prob is None:
        return None
    p = torch.as_tensor(restart_prob, dtype=torch.float64).cpu()
    if p.dim() == 0:
        p = p.expand(steps)
    if p.dim() != 1 or p.numel() != steps:
        raise DGLError(f"random_walk: restart_prob must be a float or hold one value per step ({steps}), "
                       f"got shape {list(p.shape)}")
    if bool(((p < 0) | (p > 1) | p.isnan()).any()):
        raise DGLError("random_walk: restart_prob values must be in [0, 1]")
    return p


def _step_table(g: DGLGraph, relation: tuple, prob: Optional[str]):
    """(indptr, neighbours, edge ids, inclusive running sums of the weights or None) of relation's out-edges."""
    # the core's CSR, read in place (no copy of the graph's arrays on a CPU graph of int64 ids)
    indptr, indices, eids = (t.to(device="cpu", dtype=torch.int64)
                             for t in g._g.adjacency(g._relation(relation), True, False))
    if prob is None:
        return indptr, indices, eids, None
    frame = g.edges[relation].data
    if prob not in frame:
        raise DGLError(f"random_walk: prob names {prob!r}, no edge feature of {relation}")
    w = frame[prob].detach().to(device="cpu", dtype=torch.float64).reshape(-1)
    if w.numel() != eids.numel():
        raise DGLError(f"random_walk: prob feature {prob!r} of {relation} must hold one value per edge "
                       f"({eids.numel()}), got {tuple(frame[prob].shape)}")
    if bool(((w < 0) | ~torch.isfinite(w)).any()):
        raise DGLError(f"random_walk: prob feature {prob!r} of {relation} must be finite and >= 0")
    return indptr, indices, eids, torch.cumsum(w[eids], 0)


def random_walk(g: DGLGraph, nodes, *, metapath: Optional[Sequence[EType]] = None, length: Optional[int] = None,
                prob: Optional[str] = None, restart_prob=None, return_eids: bool = False):
    """dgl.sampling.random_walk: one walk from each of `nodes` (ids of the first step's source type), `length` steps
    on a graph of one relation (from a node type to itself) or one step per relation of `metapath`.
    Returns (traces [len(nodes), steps + 1] of g's idtype: the start, then each node reached, -1 once the walk has
    stopped; types [steps + 1]: the node type index of each position), with return_eids (traces, eids [len(nodes),
    steps], -1 likewise, types). prob: an edge feature (non-negative, one value per edge) the steps draw in
    proportion to, on every relation of the walk; restart_prob: a float or one per step, the chance that a walk
    stops before that step."""
    _check(g, "random_walk")
    steps = _relations(g, metapath, length)
    start_type = steps[0][0] if steps else g.ntypes[0]
    count = g.num_nodes(start_type)
    if isinstance(nodes, torch.Tensor) and nodes.dtype == torch.bool:
        raise DGLError("random_walk: nodes must be node ids, not a mask")
    current = g._checked_ids(nodes, count, f"random_walk: nodes of type {start_type!r}: node").cpu().to(torch.int64)
    current = current.reshape(-1)
    restart = _restart(restart_prob, len(steps))
    walkers = current.numel()
    traces = torch.full((walkers, len(steps) + 1), -1, dtype=torch.int64)
    edges = torch.full((walkers, len(steps)), -1, dtype=torch.int64)
    traces[:, 0] = current
    alive = torch.ones(walkers, dtype=torch.bool)
    tables = {}
    for i, relation in enumerate(steps):
        if relation not in tables:
            tables[relation] = _step_table(g, relation, prob)
        indptr, indices, eids, running = tables[relation]
        if restart is not None:
            alive &= torch.rand(walkers, dtype=torch.float64) >= restart[i]
        at = current.clamp(min=0)
        first, last = indptr[at], indptr[at + 1]
        u = torch.rand(walkers, dtype=torch.float64)
        if running is None:
            alive &= last > first
            pick = first + (u * (last - first)).to(torch.int64).clamp(max=(last - first - 1).clamp(min=0))
        else:  # the row's running sums: the first entry whose sum passes its start + u * the row's total
            before = torch.where(first > 0, running[(first - 1).clamp(min=0)], torch.zeros_like(u))
            total = torch.where(last > first, running[(last - 1).clamp(min=0)], before) - before
            alive &= total > 0
            pick = torch.searchsorted(running, before + u * total, right=True)
            pick = torch.minimum(torch.maximum(pick, first), (last - 1).clamp(min=0))
        pick = pick.clamp(max=max(indices.numel() - 1, 0))
        current = torch.where(alive, indices[pick] if indices.numel() else current, torch.full_like(current, -1))
        traces[:, i + 1] = current
        edges[:, i] = torch.where(alive, eids[pick] if eids.numel() else current, torch.full_like(current, -1))
    types = torch.tensor([g.ntypes.index(start_type)] + [g.ntypes.index(r[2]) for r in steps], dtype=torch.int64)
    traces, edges = traces.to(g.idtype), edges.to(g.idtype)  # ids in the graph's dtype, as DGL's
    return (traces, edges, types) if return_eids else (traces, types)


def pack_traces(traces: torch.Tensor, types: torch.Tensor):
    """dgl.sampling.pack_traces: random_walk's traces without their -1 tails, concatenated. Returns (concat_vids,
    concat_types, lengths, offsets): every trace's nodes up to its first -1, one after the other, their node
    types, each trace's length and where it starts."""
    if traces.dim() != 2 or types.dim() != 1 or types.numel() != traces.shape[1]:
        raise DGLError(f"pack_traces: traces [walks, positions] and types [positions] expected, got shapes "
                       f"{list(traces.shape)} and {list(types.shape)}")
    traces, types = traces.cpu().to(torch.int64), types.cpu().to(torch.int64)
    ended = traces < 0
    lengths = torch.where(ended.any(1), ended.to(torch.int64).argmax(1), torch.full((traces.shape[0],),
                                                                                     traces.shape[1]))
    keep = torch.arange(traces.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
    offsets = torch.cumsum(lengths, 0) - lengths
    return traces[keep], types.expand_as(traces)[keep], lengths, offsets
