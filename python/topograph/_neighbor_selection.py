"""DGL 2.1's neighbour selections that are not random draws of edges (dgl.sampling): select_topk (each node's k
in-edges, or out-edges, of largest, or smallest, weight) and the PinSAGE samplers (RandomWalkNeighborSampler,
PinSAGESampler: each node's neighbours are the nodes its random walks visit most, with the visit counts as edge
weights). Plain torch over the package's random_walk and the graph's edges."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Optional

import torch

from ._base import DGLError
from ._construct import heterograph
from ._graph import EID, DGLGraph
from ._random_walks import random_walk
from ._subgraph import _node_sets


def _top_per_group(group: torch.Tensor, score: torch.Tensor, k: int, largest: bool) -> torch.Tensor:
    """Positions of the k entries of largest (or smallest) score within each group, ties by position; all of a
    group's entries when k is -1."""
    if group.numel() == 0:
        return group
    key = score.to(torch.float64)
    order = torch.argsort(-key if largest else key, stable=True)  # best first, then position
    order = order[torch.argsort(group[order], stable=True)]  # grouped, best first within a group
    sorted_group = group[order]
    starts = torch.searchsorted(sorted_group, sorted_group, right=False)
    rank = torch.arange(order.numel(), device=order.device) - starts
    return order if k < 0 else order[rank < k]


def select_topk(g: DGLGraph, k, weight: str, nodes=None, edge_dir: str = "in", ascending: bool = False,
                copy_ndata: bool = True, copy_edata: bool = True, output_device=None) -> DGLGraph:
    """dgl.sampling.select_topk: for each node of `nodes` (all by default; ids, or {ntype: ids}), its k in-edges
    (edge_dir 'out': out-edges) of each relation with the largest `weight` (ascending: smallest; ties by edge id;
    k -1: all; k an int, or {etype: int}); a graph of every node and the selected edges, EID their ids in g, g's
    features carried as asked."""
    if edge_dir not in ("in", "out"):
        raise DGLError(f"select_topk: edge_dir must be 'in' or 'out', got {edge_dir!r}")
    sets = _node_sets(g, {t: torch.arange(g.num_nodes(t)) for t in g.ntypes} if nodes is None else nodes,
                      "select_topk")
    data, chosen = {}, {}
    for c in g.canonical_etypes:
        kc = k.get(c, k.get(c[1])) if isinstance(k, Mapping) else k
        if kc is None:
            raise DGLError(f"select_topk: k names no value for {c}")
        if weight not in g.edges[c].data:
            raise DGLError(f"select_topk: no edge weight {weight!r} on {c}")
        u, v = (t.to(torch.int64) for t in g.edges(etype=c))
        w = g.edges[c].data[weight].reshape(-1).to(u.device)
        seeds_type = c[2] if edge_dir == "in" else c[0]
        seeds = torch.as_tensor(sets.get(seeds_type, []), dtype=torch.int64).to(u.device)
        side = v if edge_dir == "in" else u
        candidates = torch.nonzero(torch.isin(side, seeds)).reshape(-1)
        keep = candidates[_top_per_group(side[candidates], w[candidates], int(kc), not ascending)]
        keep = keep.sort().values
        data[c], chosen[c] = (u[keep], v[keep]), keep
    out = heterograph(data, {t: g.num_nodes(t) for t in g.ntypes}, idtype=g.idtype, device=g.device)
    for c in g.canonical_etypes:
        if copy_edata:
            out.edges[c].data.update({name: x[chosen[c].to(x.device)] for name, x in g.edges[c].data.items()})
        out.edges[c].data[EID] = chosen[c].to(device=g.device, dtype=g.idtype)
    if copy_ndata:
        for t in g.ntypes:
            out.nodes[t].data.update(dict(g.nodes[t].data))
    return out if output_device is None else out.to(output_device)


class RandomWalkNeighborSampler:
    """dgl.sampling.RandomWalkNeighborSampler (PinSAGE): for each seed, num_random_walks walks of metapath
    repeated num_traversals times (a walk stops at each traversal's end with termination_prob); the nodes reached
    at the traversals' ends are the candidates, and the num_neighbors most visited (ties by node id; the seed
    itself counts as any node) become its in-neighbours, edges (neighbour -> seed) weighted by the visit counts
    in edata[weight_column]. The metapath must start and end at one node type."""

    def __init__(self, G: DGLGraph, num_traversals: int, termination_prob: float, num_random_walks: int,
                 num_neighbors: int, metapath: Optional[list] = None, weight_column: str = "weights"):
        if metapath is None:
            if len(G.ntypes) > 1 or len(G.etypes) > 1:
                raise ValueError("RandomWalkNeighborSampler: give a metapath for a graph of several types")
            metapath = [G.canonical_etypes[0]]
        start, end = G.to_canonical_etype(metapath[0])[0], G.to_canonical_etype(metapath[-1])[2]
        if start != end:
            raise ValueError(f"RandomWalkNeighborSampler: the metapath must start and end at one node type, got "
                             f"{start!r} and {end!r}")
        self.G, self.ntype, self.weight_column = G, start, weight_column
        self.num_traversals, self.num_random_walks, self.num_neighbors = num_traversals, num_random_walks, num_neighbors
        self.metapath_hops, self.full_metapath = len(metapath), list(metapath) * num_traversals
        restart = torch.zeros(self.metapath_hops * num_traversals)
        restart[self.metapath_hops::self.metapath_hops] = termination_prob
        self.restart_prob = restart

    def __call__(self, seed_nodes) -> DGLGraph:
        seeds = torch.as_tensor(seed_nodes, dtype=torch.int64).reshape(-1)
        starts = seeds.repeat_interleave(self.num_random_walks)
        paths, _ = random_walk(self.G, starts, metapath=self.full_metapath, restart_prob=self.restart_prob)
        src = paths[:, self.metapath_hops::self.metapath_hops].reshape(-1).to(torch.int64)
        dst = paths[:, 0].repeat_interleave(self.num_traversals).to(torch.int64)
        keep = src >= 0
        src, dst = src[keep], dst[keep]
        n = self.G.num_nodes(self.ntype)
        pairs, counts = torch.unique(dst * n + src, return_counts=True)  # sorted: by seed, then neighbour id
        pair_dst, pair_src = pairs // max(n, 1), pairs % max(n, 1)
        top = _top_per_group(pair_dst, counts, self.num_neighbors, largest=True).sort().values
        g = heterograph({(self.ntype, "_E", self.ntype): (pair_src[top], pair_dst[top])}, {self.ntype: n},
                        idtype=self.G.idtype, device=self.G.device)
        g.edata[self.weight_column] = counts[top].to(g.device)
        return g


class PinSAGESampler(RandomWalkNeighborSampler):
    """RandomWalkNeighborSampler over the two-hop metapath ntype -> other_type -> ntype of a bipartite
    heterograph (items through users, as PinSAGE)."""

    def __init__(self, G: DGLGraph, ntype: str, other_type: str, num_traversals: int, termination_prob: float,
                 num_random_walks: int, num_neighbors: int, weight_column: str = "weights"):
        forward = [c for c in G.canonical_etypes if c[0] == ntype and c[2] == other_type]
        backward = [c for c in G.canonical_etypes if c[0] == other_type and c[2] == ntype]
        if not forward or not backward:
            raise ValueError(f"PinSAGESampler: needs relations {ntype!r} -> {other_type!r} and back, the graph has "
                             f"{G.canonical_etypes}")
        super().__init__(G, num_traversals, termination_prob, num_random_walks, num_neighbors,
                         metapath=[forward[0], backward[0]], weight_column=weight_column)


DGLGraph.select_topk = select_topk  # DGL's method of the same name, as dgl.sampling.select_topk
