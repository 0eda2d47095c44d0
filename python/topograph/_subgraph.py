"""DGL's subgraphs: node_subgraph (g.subgraph) and edge_subgraph (g.edge_subgraph), built by the core
(graph/structure.hpp: ids checked there, errors name the type and the id); in_subgraph, out_subgraph and
node_type_subgraph, built here with torch and the core's make_graph (DGL 2.1's edge order, node order and batch
rules). As in DGL, the parent ids go to ndata[NID] / edata[EID] (store_ids) and the parent's features come
along, gathered by them (the same tensors where every node is kept)."""
from __future__ import annotations

from collections.abc import Mapping

import torch

from ._base import DGLError
from ._graph import EID, NID, DGLGraph, _ids
from ._transform import _check


def _id_list(x, count: int, what: str) -> list:
    """Ids, or a boolean mask of `count` entries (DGL takes both), as a list of ints."""
    t = x if isinstance(x, torch.Tensor) else torch.as_tensor(x)
    if t.dtype == torch.bool:
        if t.dim() != 1 or t.numel() != count:
            raise DGLError(f"{what}: a boolean mask must have {count} entries, got shape {tuple(t.shape)}")
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
    nid = {t: handle.parent_ids(True, i) for i, t in enumerate(handle.ntypes)}  # None: every node kept
    nid = {t: ids for t, ids in nid.items() if ids is not None}
    eids = [handle.parent_ids(False, r) for r in range(len(handle.canonical_etypes))]
    return carry_parent_data(g, DGLGraph(handle), nid, eids, store_ids)


def carry_parent_data(g, sub: DGLGraph, nid: dict, eids: list, store_ids: bool) -> DGLGraph:
    """sub (every relation of g, in g's order) given g's features: node rows nid[t] (int64 parent ids; a type
    left out keeps every row) and edge rows eids[r], with NID / EID holding those ids when store_ids."""
    from . import _message_passing as mp  # it builds on ops, which builds on _graph

    relations = range(len(eids))
    mp.carry_node_features(g, sub, node_ids=nid)
    mp.carry_edge_features(g, sub, relations, eids)
    if store_ids:
        for t, ids in nid.items():
            mp.node_frame(sub, t)[NID] = ids.to(g.idtype)
        for r, eid in zip(relations, eids):
            mp.edge_frame(sub, r)[EID] = eid.to(g.idtype)
    return sub


def node_subgraph(graph: DGLGraph, nodes, *, relabel_nodes: bool = True, store_ids: bool = True,
                  output_device=None) -> DGLGraph:
    """The subgraph induced by `nodes` (ids or a boolean mask; {ntype: ...} with several types): node i of
    type t is nodes[t][i], in the order given (relabel_nodes=False: every node kept, only the induced edges);
    every edge whose two ends are kept, grouped by source in the order given and by increasing parent edge id
    within a source (DGL 2.1's order: it slices the CSR). output_device: where the subgraph goes (as DGL's)."""
    _check(graph, "node_subgraph")
    sets = _node_sets(graph, nodes, "node_subgraph")
    handle = graph._g.node_subgraph(sets)
    if not relabel_nodes:  # the same edges over every node
        induced = {r: handle.parent_ids(False, r).tolist() for r in range(len(handle.canonical_etypes))}
        handle = graph._g.edge_subgraph(induced, False)
    return _to_device(_finish(graph, handle, store_ids), output_device)


def edge_subgraph(graph: DGLGraph, edges, *, relabel_nodes: bool = True, store_ids: bool = True,
                  output_device=None) -> DGLGraph:
    """The given edges (ids or a boolean mask; {etype: ...} with several relations), in the order given;
    relabel_nodes keeps only the nodes they touch, numbered as DGL 2.1's (first appearance, relation by
    relation, sources then destinations; ndata[NID] maps them back)."""
    _check(graph, "edge_subgraph")
    sets = _edge_sets(graph, edges, "edge_subgraph")
    if not relabel_nodes:
        handle = graph._g.edge_subgraph(sets, False)  # checks the ids
        return _to_device(_finish(graph, handle, store_ids), output_device)
    # The core numbers the kept nodes by parent id; DGL's order is first appearance, which scripts that index the
    # subgraph's rows by position see. So the graph is built once, here, from the edges' ends: building the
    # core's subgraph first only to read its edge ids back took 40-60 ms of 100 (200k of 2M edges).
    eids = [graph._checked_ids(sets.get(r, []), graph.num_edges(c), f"edge_subgraph: edges[{c[1]!r}]")
            for r, c in enumerate(graph.canonical_etypes)]
    ends = [tuple(x.cpu().to(torch.int64) for x in graph.find_edges(e, etype=c))
            for e, c in zip(eids, graph.canonical_etypes)]
    return _from_parent_edges(graph, ends, eids, True, store_ids, output_device)


def _to_device(sub: DGLGraph, output_device) -> DGLGraph:
    return sub if output_device is None else sub.to(output_device)


def in_subgraph(graph: DGLGraph, nodes, *, relabel_nodes: bool = False, store_ids: bool = True,
                output_device=None) -> DGLGraph:
    """dgl.in_subgraph: every in-edge (all relations) of `nodes`, ordered and numbered as _seed_subgraph says
    (DGL 2.1's order: seed by seed in the order given)."""
    return _seed_subgraph(graph, nodes, relabel_nodes, store_ids, output_device, incoming=True)


def out_subgraph(graph: DGLGraph, nodes, *, relabel_nodes: bool = False, store_ids: bool = True,
                 output_device=None) -> DGLGraph:
    """dgl.out_subgraph: every out-edge (all relations) of `nodes`, ordered and numbered as _seed_subgraph says."""
    return _seed_subgraph(graph, nodes, relabel_nodes, store_ids, output_device, incoming=False)


def _seed_subgraph(graph: DGLGraph, nodes, relabel_nodes: bool, store_ids: bool, output_device,
                   incoming: bool) -> DGLGraph:
    """in_subgraph (incoming) / out_subgraph: the edges into / out of `nodes` (ids or a boolean mask;
    {ntype: ...} with several node types), relation by relation, seed by seed in the order given (a seed named
    twice brings its edges twice), each seed's edges by edge id, as DGL 2.1's. Every node kept, or with
    relabel_nodes only the nodes those edges touch, numbered as DGL's: by first appearance, relation after
    relation, among the relation's sources then its destinations. store_ids: edata[EID] (idtype) on every
    relation and, relabelled, ndata[NID] on every node type. The parent's features come along (gathered by
    those ids). As DGL's, the result is one graph (a batch's batch_size becomes 1). Ids out of range: a
    DGLError naming the id."""
    what = "in_subgraph" if incoming else "out_subgraph"
    _check(graph, what)
    seeds = {t: graph._checked_ids(ids, graph.num_nodes(t), f"{what}: node of {t!r}")
             for t, ids in _node_sets(graph, nodes, what).items()}
    relations = graph.canonical_etypes
    empty = torch.zeros(0, dtype=torch.int64)
    edges, eids = [], []
    for r, (s, _, d) in enumerate(relations):
        mine = seeds.get(d if incoming else s)
        if mine is None or mine.numel() == 0:
            edges.append((empty, empty))
            eids.append(empty)
            continue
        walk = graph._g.in_edges if incoming else graph._g.out_edges
        u, v, e = (x.cpu().to(torch.int64) for x in walk(r, mine.tolist()))
        edges.append((u, v))
        eids.append(e)
    return _from_parent_edges(graph, edges, eids, relabel_nodes, store_ids, output_device)


def _from_parent_edges(graph: DGLGraph, edges: list, eids: list, relabel_nodes: bool, store_ids: bool,
                       output_device) -> DGLGraph:
    """One unbatched graph of graph's relations holding edges[r] = (u, v) (int64 parent node ids on the host),
    the parent edges eids[r]: every node kept, or with relabel_nodes only the nodes those edges touch, numbered
    as DGL's: by first appearance, relation by relation, among the relation's sources then its destinations.
    store_ids: edata[EID] (idtype) on every relation and, relabelled, ndata[NID] on every node type. The
    parent's features come along (gathered by those ids)."""
    from ._mutation import _first_occurrences, _on_device, _plain

    relations = graph.canonical_etypes
    empty = torch.zeros(0, dtype=torch.int64)
    counts = {t: graph.num_nodes(t) for t in graph.ntypes}
    kept = None
    if relabel_nodes:  # DGL's numbering: first appearance, relation by relation, sources then destinations
        seen = {t: [] for t in graph.ntypes}
        for (s, _, d), (u, v) in zip(relations, edges):
            seen[s].append(u)
            seen[d].append(v)
        kept = {t: _first_occurrences(torch.cat(ids)) if ids else empty for t, ids in seen.items()}
        new_id = {}
        for t, ids in kept.items():
            new_id[t] = torch.full((counts[t],), -1, dtype=torch.int64)
            new_id[t][ids] = torch.arange(ids.numel())
            counts[t] = ids.numel()
        edges = [(new_id[s][u], new_id[d][v]) for (s, _, d), (u, v) in zip(relations, edges)]
    sub = _on_device(graph, _plain(graph.ntypes, relations, counts, edges, graph.idtype))
    from . import _message_passing as mp

    mp.carry_node_features(graph, sub, node_ids=kept)
    mp.carry_edge_features(graph, sub, range(len(relations)), eids)
    if store_ids:
        for t, ids in (kept or {}).items():
            mp.node_frame(sub, t)[NID] = ids.to(device=sub.device, dtype=graph.idtype)
        for r, e in enumerate(eids):
            mp.edge_frame(sub, r)[EID] = e.to(device=sub.device, dtype=graph.idtype)
    return sub if output_device is None else sub.to(output_device)


def node_type_subgraph(graph: DGLGraph, ntypes, output_device=None) -> DGLGraph:
    """dgl.node_type_subgraph: only the node types named (in the graph's order) and the relations whose two
    node types are both among them (in the graph's order), every node and edge of those. As DGL's, the features
    are shared with the graph (the same frames: a feature set on either is seen by both) and the result is one
    graph (a batch's batch_size becomes 1). An unknown type, or no relation among the types: a DGLError."""
    from ._mutation import _on_device, _plain

    _check(graph, "node_type_subgraph")
    names = [ntypes] if isinstance(ntypes, str) else list(ntypes)
    for t in names:
        if t not in graph.ntypes:
            raise DGLError(f"node_type_subgraph: no node type {t!r}; the graph has {graph.ntypes}")
    types = [t for t in graph.ntypes if t in names]
    kept = [r for r, (s, _, d) in enumerate(graph.canonical_etypes) if s in names and d in names]
    if not kept:
        raise DGLError(f"node_type_subgraph: no relation joins node types {types} (DGL: there are no edges "
                       f"among nodes of the specified types); the graph's relations are {graph.canonical_etypes}")
    relations = [graph.canonical_etypes[r] for r in kept]
    sub = _on_device(graph, _plain(types, relations, {t: graph.num_nodes(t) for t in types},
                                   [graph.all_edges(etype=c) for c in relations], graph.idtype))
    from . import _message_passing as mp

    shared = mp.frames(sub)
    for t in types:
        shared[("n", t)] = mp.node_frame(graph, t)
    for i, r in enumerate(kept):
        shared[("e", i)] = mp.edge_frame(graph, r)
    sub = sub if output_device is None else sub.to(output_device)
    return sub


# DGLGraph's methods of the same names (DGL has them on the graph too); set here to keep _graph.py small.
DGLGraph.in_subgraph = lambda self, nodes, **kw: in_subgraph(self, nodes, **kw)
DGLGraph.out_subgraph = lambda self, nodes, **kw: out_subgraph(self, nodes, **kw)
DGLGraph.node_type_subgraph = lambda self, ntypes, output_device=None: node_type_subgraph(self, ntypes, output_device)
