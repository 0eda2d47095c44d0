"""Which edges a sampler leaves out of the neighbourhoods of a batch of seed edges (DGL's `exclude`): the rule
as_edge_prediction_sampler applies, dgl.dataloading.find_exclude_eids, and SpotTarget (Zhu et al. 2023: leave out
only the seed edges at a low-degree end, where the edge is most of what the model would see of that node).

exclude: None (nothing), 'self' (the seed edges), 'reverse_id' (and reverse_eids[e] of each, in the same
relation), 'reverse_types' (and, for a seed e of relation r, edge e of relation reverse_etypes[r]), a callable
(seed edges -> the ids to leave out) or fixed ids (a tensor, or {etype: tensor}) left out of every batch."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Dict

import torch

from .._base import DGLError
from .._graph import DGLGraph

Seeds = Dict[int, torch.Tensor]  # relation index -> edge ids [k] (int64, CPU)


def seed_edge_sets(g: DGLGraph, seed_edges, what: str) -> Seeds:
    """Seed edges as {relation index: ids}: a tensor names the one relation of a graph that has one."""
    relations = g.canonical_etypes
    if not isinstance(seed_edges, Mapping):
        if len(relations) != 1:
            raise DGLError(f"{what}: the graph has relations {relations}: give seed edges as {{etype: ids}}")
        seed_edges = {relations[0]: seed_edges}
    seeds: Seeds = {}
    for etype, ids in seed_edges.items():
        r = g._relation(etype)
        if r in seeds:
            raise DGLError(f"{what}: seed edges name relation {relations[r]} twice")
        seeds[r] = g._checked_ids(ids, g.num_edges(relations[r]), f"{what}: {relations[r]} edge").cpu()
    return seeds


def as_given(g: DGLGraph, seed_edges):
    """The seed edges as a callable `exclude` sees them (DGL's): a tensor as given, a dict keyed by canonical
    etypes."""
    if isinstance(seed_edges, Mapping):
        return {g.to_canonical_etype(k): v for k, v in seed_edges.items()}
    return seed_edges


def _fixed_ids(exclude) -> bool:
    if isinstance(exclude, Mapping):
        return len(exclude) > 0 and all(isinstance(v, torch.Tensor) for v in exclude.values())
    return isinstance(exclude, torch.Tensor)


class Exclusion:
    """An `exclude` argument checked once (the module's doc lists the forms), then applied batch by batch."""

    def __init__(self, exclude, reverse_eids, reverse_etypes, what: str):
        if not (exclude is None or _fixed_ids(exclude) or callable(exclude)
                or exclude in ("self", "reverse_id", "reverse_types")):
            raise ValueError(f"{what}: exclude must be None, 'self', 'reverse_id', 'reverse_types', a callable or "
                             f"edge ids (a tensor or {{etype: tensor}}), got {exclude!r}")
        if isinstance(exclude, str) and exclude == "reverse_id":
            if reverse_eids is None:
                raise DGLError(f"{what}: exclude='reverse_id' needs reverse_eids, a tensor mapping each edge id to "
                               f"its reverse edge's id ({{etype: tensor}} per relation)")
            reverse_eids = ({k: torch.as_tensor(v) for k, v in reverse_eids.items()}
                            if isinstance(reverse_eids, Mapping) else torch.as_tensor(reverse_eids))
        if isinstance(exclude, str) and exclude == "reverse_types" and not isinstance(reverse_etypes, Mapping):
            raise ValueError(f"{what}: exclude='reverse_types' needs reverse_etypes, {{etype: its reverse etype}}")
        self.exclude, self.reverse_eids, self.reverse_etypes, self.what = exclude, reverse_eids, reverse_etypes, what

    def _reverse_ids(self, g: DGLGraph, r: int, eids: torch.Tensor) -> torch.Tensor:
        """reverse_eids[eids] for seeds of relation r, each checked to be an edge id of r."""
        relation = g.canonical_etypes[r]
        reverse = self.reverse_eids
        if isinstance(reverse, Mapping):
            named = {g.to_canonical_etype(k): v for k, v in reverse.items()}
            if relation not in named:
                raise DGLError(f"{self.what}: reverse_eids has no entry for relation {relation}")
            reverse = named[relation]
        elif len(g.canonical_etypes) != 1:
            raise DGLError(f"{self.what}: the graph has relations {g.canonical_etypes}: give reverse_eids as "
                           f"{{etype: tensor}}")
        count = g.num_edges(relation)
        if reverse.dim() != 1 or reverse.numel() != count:
            raise DGLError(f"{self.what}: reverse_eids of {relation} must hold one id per edge ({count}), got shape "
                           f"{tuple(reverse.shape)}")
        mapped = reverse.cpu().to(torch.int64)[eids]
        bad = (mapped < 0) | (mapped >= count)
        if bool(bad.any()):
            raise DGLError(f"{self.what}: reverse_eids maps edge {int(eids[bad][0])} of {relation} to "
                           f"{int(mapped[bad][0])}, no edge id")
        return mapped

    def _reverse_types(self, g: DGLGraph, seeds: Seeds) -> Seeds:
        """The seeds, and for a seed e of relation r edge e of relation reverse_etypes[r] (DGL's reverse_types;
        DGL 2.1 also follows a chain r -> s -> t of the map, in its order, where this takes one step)."""
        relations = g.canonical_etypes
        excluded = {r: [ids] for r, ids in seeds.items()}
        for etype, reverse_etype in self.reverse_etypes.items():
            r, s = g._relation(etype), g._relation(reverse_etype)
            if r not in seeds:
                continue
            ids, count = seeds[r], g.num_edges(relations[s])
            if ids.numel() and int(ids.max()) >= count:
                raise DGLError(f"{self.what}: edge {int(ids.max())} of {relations[r]} has no reverse in "
                               f"{relations[s]}, which has {count} edges (reverse_types pairs edge e with edge e)")
            excluded.setdefault(s, []).append(ids)
        return {r: torch.unique(torch.cat(parts)) if len(parts) > 1 else parts[0] for r, parts in excluded.items()}

    def eids(self, g: DGLGraph, seeds: Seeds, given, typed: bool):
        """The edge ids to leave out for seed edges `seeds` (given: as the caller gave them, for a callable):
        None, a tensor (one relation, seeds given as a tensor) or {canonical etype: ids}."""
        if self.exclude is None:
            return None
        if _fixed_ids(self.exclude):
            return self.exclude
        if callable(self.exclude):
            return self.exclude(given)  # as DGL's: the seed edges as given, keyed by canonical etype if typed
        if self.exclude == "self":
            excluded = seeds
        elif self.exclude == "reverse_id":
            excluded = {r: torch.cat([ids, self._reverse_ids(g, r, ids)]) for r, ids in seeds.items()}
        else:
            excluded = self._reverse_types(g, seeds)
        if not typed:
            return excluded[0]
        return {g.canonical_etypes[r]: ids for r, ids in excluded.items()}


def find_exclude_eids(g: DGLGraph, seed_edges, exclude, reverse_eids=None, reverse_etypes=None,
                      output_device=None):
    """dgl.dataloading.find_exclude_eids: the edge ids `exclude` (the module's doc) leaves out for `seed_edges`
    (a tensor on a graph of one relation, or {etype: ids}): None, a tensor, or {canonical etype: ids}, on
    output_device (default: the seed edges' device)."""
    what = "find_exclude_eids"
    rule = Exclusion(exclude, reverse_eids, reverse_etypes, what)
    typed = isinstance(seed_edges, Mapping)
    out = rule.eids(g, seed_edge_sets(g, seed_edges, what), as_given(g, seed_edges), typed)
    if out is None:
        return None
    if output_device is None:
        first = next(iter(seed_edges.values()), None) if typed else seed_edges
        output_device = first.device if isinstance(first, torch.Tensor) else g.device
    if isinstance(out, Mapping):
        return {k: torch.as_tensor(v).to(output_device) for k, v in out.items()}
    return torch.as_tensor(out).to(output_device)


class SpotTarget:
    """dgl.dataloading.SpotTarget(g, exclude, degree_threshold=10, reverse_eids=None, reverse_etypes=None): an
    `exclude` callable for as_edge_prediction_sampler that leaves out only the seed edges u -> v with
    min(in-degree of u, in-degree of v) < degree_threshold (and, by `exclude`, their reverses): an edge at a
    well-connected node stays, one that is much of a rare node's neighbourhood does not leak its label. As DGL
    2.1's, on a graph of one node type and one relation (its degrees are g.in_degrees())."""

    def __init__(self, g: DGLGraph, exclude, degree_threshold: int = 10, reverse_eids=None, reverse_etypes=None):
        if not isinstance(g, DGLGraph) or len(g.ntypes) != 1 or len(g.canonical_etypes) != 1:
            raise DGLError("SpotTarget: needs a topograph graph of one node type and one relation (as DGL 2.1's, "
                           "which reads g.in_degrees() of its one type)")
        Exclusion(exclude, reverse_eids, reverse_etypes, "SpotTarget")  # checked now, not at the first batch
        self.g, self.exclude, self.degree_threshold = g, exclude, degree_threshold
        self.reverse_eids, self.reverse_etypes = reverse_eids, reverse_etypes

    def __call__(self, seed_edges):
        if isinstance(seed_edges, Mapping):  # as_edge_prediction_sampler passes {etype: ids} for typed seeds
            (seed_edges,) = seed_edges.values()
        seed_edges = torch.as_tensor(seed_edges)
        src, dst = self.g.find_edges(seed_edges)
        degrees = self.g.in_degrees()
        low = torch.minimum(degrees[src], degrees[dst]) < self.degree_threshold
        return find_exclude_eids(self.g, seed_edges[low.to(seed_edges.device)], self.exclude, self.reverse_eids,
                                 self.reverse_etypes)
