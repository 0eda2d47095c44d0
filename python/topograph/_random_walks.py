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
        # DGL 2.1 refuses a single 1.0 (every walk would end before it starts); a per-step 1 only ends that step
        if not 0 <= float(p) < 1:
            raise DGLError(f"random_walk: restart_prob values must be in [0, 1) for a single float, got {float(p)}")
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
    # The running sums cost a pass over the relation's edges (1.5-1.7 s on 10M edges): kept on the graph while
    # its structure, the feature tensor and that tensor's version (bumped by every in-place write) stay the same.
    feature, cache = frame[prob], g.__dict__.setdefault("_walk_running_sums", {})
    kept = cache.get((relation, prob))
    if kept is not None and kept[0] is g._g and kept[1] is feature and kept[2] == feature._version:
        return indptr, indices, eids, kept[3]
    w = feature.detach().to(device="cpu", dtype=torch.float64).reshape(-1)
    if w.numel() != eids.numel():
        raise DGLError(f"random_walk: prob feature {prob!r} of {relation} must hold one value per edge "
                       f"({eids.numel()}), got {tuple(frame[prob].shape)}")
    if bool(((w < 0) | ~torch.isfinite(w)).any()):
        raise DGLError(f"random_walk: prob feature {prob!r} of {relation} must be finite and >= 0")
    running = torch.cumsum(w[eids], 0)
    cache[(relation, prob)] = (g._g, feature, feature._version, running)
    return indptr, indices, eids, running


def _draw(table: tuple, at: torch.Tensor, alive: torch.Tensor):
    """(each walker's drawn position in the table's CSR, alive without the walkers at a node with no out-edge
    of positive weight): uniform over at's row, or by the running sums (the first entry whose sum passes the
    row's start + u * its total). Positions of dead walkers are in range but meaningless."""
    indptr, indices, _, running = table
    at = at.clamp(min=0)
    first, last = indptr[at], indptr[at + 1]
    u = torch.rand(at.numel(), dtype=torch.float64)
    if running is None:
        alive = alive & (last > first)
        pick = first + (u * (last - first)).to(torch.int64).clamp(max=(last - first - 1).clamp(min=0))
    else:
        before = torch.where(first > 0, running[(first - 1).clamp(min=0)], torch.zeros_like(u))
        total = torch.where(last > first, running[(last - 1).clamp(min=0)], before) - before
        alive = alive & (total > 0)
        pick = torch.searchsorted(running, before + u * total, right=True)
        pick = torch.minimum(torch.maximum(pick, first), (last - 1).clamp(min=0))
    return pick.clamp(max=max(indices.numel() - 1, 0)), alive


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
        _, indices, eids, _ = tables[relation]
        if restart is not None:
            alive &= torch.rand(walkers, dtype=torch.float64) >= restart[i]
        pick, alive = _draw(tables[relation], current, alive)
        current = torch.where(alive, indices[pick] if indices.numel() else current, torch.full_like(current, -1))
        traces[:, i + 1] = current
        edges[:, i] = torch.where(alive, eids[pick] if eids.numel() else current, torch.full_like(current, -1))
    types = torch.tensor([g.ntypes.index(start_type)] + [g.ntypes.index(r[2]) for r in steps], dtype=g.idtype)
    traces, edges = traces.to(g.idtype), edges.to(g.idtype)  # ids (and type ids) in the graph's dtype, as DGL's
    return (traces, edges, types) if return_eids else (traces, types)


def _has_edge(table: tuple, src: torch.Tensor, dst: torch.Tensor) -> torch.Tensor:
    """Whether each src[i] -> dst[i] is an edge: src's row scanned for dst (O(the rows' lengths), as DGL's)."""
    indptr, indices = table[0], table[1]
    first = indptr[src]
    lengths = indptr[src + 1] - first
    owner = torch.repeat_interleave(torch.arange(src.numel()), lengths)
    within = torch.arange(owner.numel()) - torch.repeat_interleave(torch.cumsum(lengths, 0) - lengths, lengths)
    hit = (indices[first[owner] + within] == dst[owner]).to(torch.int64)
    return torch.zeros(src.numel(), dtype=torch.int64).index_add_(0, owner, hit) > 0


def node2vec_random_walk(g: DGLGraph, nodes, p: float, q: float, walk_length: int, prob: Optional[str] = None,
                         return_eids: bool = False):
    """dgl.sampling.node2vec_random_walk: walks of walk_length steps on a graph of one relation from a node type
    to itself, biased as node2vec (Grover and Leskovec 2016): after t -> v, the next node x of v's out-edges
    (uniform, or in proportion to `prob`) is kept with weight 1/p if x is t, 1 if t -> x is an edge, 1/q
    otherwise (rejection sampling against the largest of the three, as DGL's). A walk at a node without an
    out-edge stops (-1 after). Returns traces [len(nodes), walk_length + 1] of g's idtype, with return_eids also
    eids [len(nodes), walk_length]."""
    _check(g, "node2vec_random_walk")
    for name, value in (("p", p), ("q", q)):
        if not (isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0):
            raise DGLError(f"node2vec_random_walk: {name} must be a number > 0, got {value!r}")
    steps = _relations(g, None, walk_length)
    relation = steps[0] if steps else g.canonical_etypes[0]
    current = g._checked_ids(nodes, g.num_nodes(relation[0]), "node2vec_random_walk: node").cpu().to(torch.int64)
    current = current.reshape(-1)
    table = _step_table(g, relation, prob)
    indices, eids = table[1], table[2]
    walkers = current.numel()
    traces = torch.full((walkers, walk_length + 1), -1, dtype=torch.int64)
    edges = torch.full((walkers, walk_length), -1, dtype=torch.int64)
    traces[:, 0] = current
    alive = torch.ones(walkers, dtype=torch.bool)
    largest = max(1.0 / p, 1.0, 1.0 / q)
    for i in range(walk_length):
        chosen = torch.zeros(walkers, dtype=torch.int64)
        pick, alive = _draw(table, traces[:, i], alive)
        pending = alive.clone() if i > 0 else torch.zeros_like(alive)
        chosen[~pending] = pick[~pending]  # the first step is unbiased
        while bool(pending.any()):
            who = pending.nonzero().flatten()
            at, before = traces[who, i], traces[who, i - 1]
            pick, _ = _draw(table, at, torch.ones_like(who, dtype=torch.bool))
            x = indices[pick]
            weight = torch.where(x == before, torch.full_like(x, 1.0 / p, dtype=torch.float64),
                                 torch.where(_has_edge(table, before, x), 1.0, 1.0 / q))
            kept = torch.rand(who.numel(), dtype=torch.float64) * largest < weight
            chosen[who[kept]] = pick[kept]
            pending[who[kept]] = False
        stopped = torch.full_like(chosen, -1)
        traces[:, i + 1] = torch.where(alive, indices[chosen] if indices.numel() else chosen, stopped)
        edges[:, i] = torch.where(alive, eids[chosen] if eids.numel() else chosen, stopped)
    traces, edges = traces.to(g.idtype), edges.to(g.idtype)
    return (traces, edges) if return_eids else traces


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
