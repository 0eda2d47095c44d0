"""DGL's subgraphs: node_subgraph (g.subgraph), edge_subgraph (g.edge_subgraph) and in_subgraph, built by the
core (graph/structure.hpp: ids checked there, errors name the type and the id). As in DGL, the parent ids go
to ndata[NID] / edata[EID] (store_ids) and the parent's features come along, gathered by them (the same
tensors where every node is kept)."""
from __future__ import annotations

from collections.abc import Mapping

import torch

from ._base import DGLError
from ._graph import EID, NID, DGLGraph, _ids


def _check(g, what: str) -> None:
    if not isinstance(g, DGLGraph):
        raise TypeError(f"{what}: expected a topograph graph, got {type(g).__name__}")
    if g.is_block:
        raise ValueError(f"{what}: not defined for a block")


def _id_list(x, count: int, what: str) -> list:
    """Ids, or a boolean mask of `count` entries (DGL takes both), as a list of ints."""
    t = x if isinstance(x, torch.Tensor) else torch.as_tensor(x)
    if t.dtype == torch.bool:
        if t.dim() != 1 or t.numel() != count:
            raise ValueError(f"{what}: a boolean mask must have {count} entries, got shape {tuple(t.shape)}")
        return t.nonzero().flatten().tolist()
    return _ids(t if t.numel() else t.to(torch.int64), what).tolist()


def typed_nodes(g, nodes, what: str) -> dict:
    """nodes as {ntype: ids}: ids alone name the one node type of a graph that has one; unknown types raise."""
    if not isinstance(nodes, Mapping):
        if len(g.ntypes) != 1:
            raise DGLError(f"{what}: the graph has node types {g.ntypes}: give nodes as {{ntype: ids}}")
        nodes = {g.ntypes[0]: nodes}
    unknown = [t for t in nodes if t not in g.ntypes]
    if unknown:
        raise DGLError(f"{what}: no node type {unknown[0]!r}; the graph has {g.ntypes}")
    return dict(nodes)


def _node_sets(g, nodes, what: str) -> dict:
    return {t: _id_list(ids, g.num_nodes(t), f"{what}: nodes[{t!r}]") for t, ids in typed_nodes(g, nodes, what).items()}


def _edge_sets(g, edges, what: str) -> dict:
    if not isinstance(edges, Mapping):
        edges = {None: edges}
    out = {}
    for etype, ids in edges.items():
        r = g._relation(etype)
        out[r] = _id_list(ids, g.num_edges(g.canonical_etypes[r]), f"{what}: edges[{etype!r}]")
    return out


def _finish(g, handle, store_ids: bool) -> DGLGraph:
    """The subgraph over `handle` with the parent's features gathered by the parent ids it keeps."""
    from . import _message_passing as mp  # it builds on ops, which builds on _graph

    sub = DGLGraph(handle)
    nid = {t: handle.parent_ids(True, i) for i, t in enumerate(handle.ntypes)}  # None: every node kept
    nid = {t: ids for t, ids in nid.items() if ids is not None}
    relations = range(len(handle.canonical_etypes))  # every relation is kept, in the parent's order
    eids = [handle.parent_ids(False, r) for r in relations]
    mp.carry_node_features(g, sub, node_ids=nid)
    mp.carry_edge_features(g, sub, relations, eids)
    if store_ids:
        for t, ids in nid.items():
            mp.node_frame(sub, t)[NID] = ids.to(g.idtype)
        for r, eid in zip(relations, eids):
            mp.edge_frame(sub, r)[EID] = eid.to(g.idtype)
    return sub


def node_subgraph(g: DGLGraph, nodes, *, relabel_nodes: bool = True, store_ids: bool = True) -> DGLGraph:
    """The subgraph induced by `nodes` (ids or a boolean mask; {ntype: ...} with several types): node i of
    type t is nodes[t][i], in the order given (relabel_nodes=False: every node kept, only the induced edges);
    every edge whose two ends are kept, by increasing parent edge id."""
    _check(g, "node_subgraph")
    sets = _node_sets(g, nodes, "node_subgraph")
    handle = g._g.node_subgraph(sets)
    if not relabel_nodes:  # the same edges over every node
        induced = {r: handle.parent_ids(False, r).tolist() for r in range(len(handle.canonical_etypes))}
        handle = g._g.edge_subgraph(induced, False)
    return _finish(g, handle, store_ids)


def edge_subgraph(g: DGLGraph, edges, *, relabel_nodes: bool = True, store_ids: bool = True) -> DGLGraph:
    """The given edges (ids or a boolean mask; {etype: ...} with several relations), in the order given;
    relabel_nodes keeps only the nodes they touch, by increasing parent id (ndata[NID] maps them back)."""
    _check(g, "edge_subgraph")
    return _finish(g, g._g.edge_subgraph(_edge_sets(g, edges, "edge_subgraph"), relabel_nodes), store_ids)


def in_subgraph(g: DGLGraph, nodes, *, relabel_nodes: bool = False, store_ids: bool = True) -> DGLGraph:
    """Every in-edge (all relations) of `nodes`; every node kept (relabel_nodes=True: only the nodes those
    edges touch, as edge_subgraph relabels them)."""
    _check(g, "in_subgraph")
    handle = g._g.in_subgraph(_node_sets(g, nodes, "in_subgraph"))
    if relabel_nodes:
        kept = {r: handle.parent_ids(False, r).tolist() for r in range(len(handle.canonical_etypes))}
        handle = g._g.edge_subgraph(kept, True)
    return _finish(g, handle, store_ids)
