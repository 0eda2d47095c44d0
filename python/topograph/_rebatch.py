"""DGLGraph.set_batch_num_nodes / set_batch_num_edges (DGL 2.1's): declare how a graph splits into the graphs of
a batch (custom collate functions build a graph and then mark its members). The store holds a batch as its
members, so the graph is rebuilt from its own edges with the new counts (_pickle.restore_graph's path); the
features stay, as nodes and edges keep their order. Setting the node counts alone infers each relation's edge
counts from the members' node ranges when every member's edges are contiguous; set_batch_num_edges then
checks each edge lies inside its member's ranges (a DGLError naming the first that does not)."""
from __future__ import annotations

from collections.abc import Mapping

import torch

from ._base import DGLError
from ._graph import DGLGraph


def _per_type(g: DGLGraph, val, names, what: str) -> dict:
    if not isinstance(val, Mapping):
        if len(names) != 1:
            raise DGLError(f"{what}: give {{type: counts}} for a graph of several types ({names})")
        val = {names[0]: val}
    out = {}
    for name in names:
        if name not in val:
            raise DGLError(f"{what}: no counts for {name!r}")
        out[name] = torch.as_tensor(val[name], dtype=torch.int64).reshape(-1).cpu()
    if len({c.numel() for c in out.values()}) != 1:
        raise DGLError(f"{what}: every type needs one count per member graph")
    return out


def _rebuild(g: DGLGraph, nodes: dict, edges: dict) -> None:
    """g's store replaced by the batch of members with these node and edge counts (g's own ids and order)."""
    from ._pickle import restore_graph

    h = g._g
    types, relations = list(h.ntypes), [tuple(c) for c in h.canonical_etypes]
    public = dict(zip(relations, g.canonical_etypes))
    node_counts = [nodes[t].tolist() for t in types]
    edge_counts = [edges[public[r]].tolist() for r in relations]
    ids = [tuple(x.cpu() for x in h.edges(i)) for i in range(len(relations))]
    for r, ((s, _, d), (u, v)) in enumerate(zip(relations, ids)):  # each edge inside its member's node ranges
        member = torch.repeat_interleave(torch.arange(len(edge_counts[r])), torch.tensor(edge_counts[r]))
        for side, t, x in (("source", s, u), ("destination", d, v)):
            start = torch.cumsum(torch.tensor([0] + node_counts[types.index(t)]), 0)
            bad = (x.long() < start[member]) | (x.long() >= start[member + 1])
            if bool(bad.any()):
                e = int(torch.nonzero(bad)[0])
                raise DGLError(f"set_batch_num_edges: edge {e} of {public[relations[r]]} has {side} {int(x[e])}, "
                               f"outside member graph {int(member[e])}'s nodes")
    new = restore_graph(types, relations, node_counts, edge_counts, ids, {}, str(g.device), g.is_block)
    g._g = new._g


def set_batch_num_nodes(g: DGLGraph, val) -> None:
    """The members' node counts ([B] for one node type, {ntype: [B]} otherwise; each type's sum its node count);
    each relation's edges are then split by the member their source lies in when that gives a valid batch, else
    the counts wait for set_batch_num_edges."""
    if g.is_block:
        raise DGLError("set_batch_num_nodes: not for a block")
    nodes = _per_type(g, val, g.ntypes, "set_batch_num_nodes")
    for t, c in nodes.items():
        if int(c.sum()) != g.num_nodes(t):
            raise DGLError(f"set_batch_num_nodes: counts for {t!r} add up to {int(c.sum())}, it has {g.num_nodes(t)}")
    edges = {}
    for c in g.canonical_etypes:
        u = g.edges(etype=c)[0].cpu().long()
        start = torch.cumsum(torch.cat([torch.zeros(1, dtype=torch.int64), nodes[c[0]]]), 0)
        member = torch.searchsorted(start[1:], u, right=True)
        if member.numel() and bool((member[1:] < member[:-1]).any()):
            g._pending_batch_nodes = nodes  # not contiguous: set_batch_num_edges must say where each member ends
            return
        edges[c] = torch.bincount(member, minlength=nodes[c[0]].numel())
    try:
        _rebuild(g, nodes, edges)
    except DGLError:  # an edge crosses members: the edge counts set next must say how they split (or fail there)
        g._pending_batch_nodes = nodes


def set_batch_num_edges(g: DGLGraph, val) -> None:
    """The members' edge counts ([B] for one relation, {etype: [B]} otherwise), with the node counts set before
    (or the graph's own)."""
    if g.is_block:
        raise DGLError("set_batch_num_edges: not for a block")
    if isinstance(val, Mapping):
        edges = {g.to_canonical_etype(k): torch.as_tensor(v, dtype=torch.int64).reshape(-1).cpu()
                 for k, v in val.items()}
    elif len(g.canonical_etypes) == 1:
        edges = {g.canonical_etypes[0]: torch.as_tensor(val, dtype=torch.int64).reshape(-1).cpu()}
    else:
        raise DGLError("set_batch_num_edges: give {etype: counts} for a graph of several relations")
    for c in g.canonical_etypes:
        if c not in edges:
            raise DGLError(f"set_batch_num_edges: no counts for {c}")
        if int(edges[c].sum()) != g.num_edges(c):
            raise DGLError(f"set_batch_num_edges: counts for {c} add up to {int(edges[c].sum())}, it has "
                           f"{g.num_edges(c)}")
    nodes = getattr(g, "_pending_batch_nodes", None) or {t: g.batch_num_nodes(t) for t in g.ntypes}
    if any(c.numel() != next(iter(nodes.values())).numel() for c in edges.values()):
        raise DGLError("set_batch_num_edges: the edge counts need as many members as the node counts")
    _rebuild(g, nodes, edges)
    g.__dict__.pop("_pending_batch_nodes", None)


DGLGraph.set_batch_num_nodes = set_batch_num_nodes
DGLGraph.set_batch_num_edges = set_batch_num_edges
