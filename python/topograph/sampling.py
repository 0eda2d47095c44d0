"""dgl.sampling's neighbour sampling over the core's sampler (graph/sampling.hpp: the seeds split over the
threads, each seed's draw a function of (seed, relation, node) only, so the thread count changes nothing)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Optional

import torch

from ._graph import EID, DGLGraph
from ._subgraph import _check, _node_sets


def sample_neighbors(g: DGLGraph, nodes, fanout, *, edge_dir: str = "in", replace: bool = False,
                     copy_ndata: bool = True, copy_edata: bool = True, seed: Optional[int] = None) -> DGLGraph:
    """For each node of `nodes` (ids or a boolean mask; {ntype: ...} with several types), `fanout` of its
    in-edges in each relation, uniformly without replacement (all of them where it has fewer, or for fanout
    -1); fanout is one int or {etype: int} naming every relation. As dgl.sampling.sample_neighbors: the result
    keeps every node of g and only the sampled edges (edata[EID]: their ids in g), with g's node features
    (copy_ndata) and the sampled edges' features (copy_edata). The draws come from torch's default generator
    (torch.manual_seed makes them repeat) unless `seed` is given; edge_dir="out" and replace=True are not
    supported."""
    _check(g, "sample_neighbors")
    if edge_dir != "in":
        raise NotImplementedError("sample_neighbors: only edge_dir='in' (each node's in-edges)")
    if replace:
        raise NotImplementedError("sample_neighbors: only replace=False (distinct edges)")
    fanouts = _fanouts(g, fanout)
    if seed is None:
        seed = int(torch.randint(0, 2 ** 62, (1,)).item())
    frontier = DGLGraph(g._g.sample_neighbors(_node_sets(g, nodes, "sample_neighbors"), fanouts, int(seed)))
    from . import _message_passing as mp  # it builds on ops, which builds on _graph

    if copy_ndata:
        mp.carry_node_features(g, frontier)
    edge_ids = [frontier._g.parent_ids(False, r) for r in range(len(fanouts))]
    if copy_edata:
        mp.carry_edge_features(g, frontier, range(len(fanouts)), edge_ids)
    for r, eid in enumerate(edge_ids):
        mp.edge_frame(frontier, r)[EID] = eid.to(g.idtype)
    return frontier


def _fanouts(g: DGLGraph, fanout) -> list:
    """One fan-out per relation of g, from an int or {etype: int} naming each relation once."""
    relations = g.canonical_etypes
    if not isinstance(fanout, Mapping):
        return [_fanout_value(fanout, "fanout")] * len(relations)
    out = [None] * len(relations)
    for etype, value in fanout.items():
        out[g._relation(etype)] = _fanout_value(value, f"fanout[{etype!r}]")
    missing = [c for c, v in zip(relations, out) if v is None]
    if missing:
        raise ValueError(f"sample_neighbors: fanout names no value for {missing} (give 0 to sample none)")
    return out


def _fanout_value(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) and not (isinstance(value, torch.Tensor) and
                                                                       value.dim() == 0):
        raise TypeError(f"sample_neighbors: {what} must be an int, got {value!r}")
    value = int(value)
    if value < -1:
        raise ValueError(f"sample_neighbors: {what} must be >= -1 (-1: every in-edge), got {value}")
    return value
