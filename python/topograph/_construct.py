"""The module-level functions that build a DGLGraph, under DGL's names: graph and heterograph from id pairs,
batch / unbatch (disjoint union and its inverse), edge_type_subgraph and reverse. The class is in _graph.py."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

import torch

from . import _C
from ._base import ALL, DGLError, count_arg
from ._graph import CanonicalEType, DGLGraph, EType, _host_ids, _ids, _idtype_of, _max_id, _mp


def graph(data, num_nodes: Optional[int] = None, idtype=None, device=None) -> DGLGraph:
    """A one-type graph from (src ids, dst ids), as dgl.graph: node type '_N', edge type '_E'.

    ``num_nodes`` defaults to the largest id + 1. Ids out of range or negative raise ValueError with
    Topograph's message (relation, position, value)."""
    if not isinstance(data, (tuple, list)) or len(data) != 2:
        raise TypeError("graph: data must be a pair (src ids, dst ids)")
    u, v = _ids(data[0], "graph: src"), _ids(data[1], "graph: dst")
    if u.shape[0] != v.shape[0]:
        raise ValueError(f"graph: {u.shape[0]} source ids but {v.shape[0]} destination ids")
    dtype = _idtype_of((u, v), idtype)
    n = max(_max_id(u), _max_id(v)) if num_nodes is None else count_arg(num_nodes, "graph: num_nodes")
    handle = _C.make_graph([("_N", n)], [(("_N", "_E", "_N"), _host_ids(u, dtype), _host_ids(v, dtype))])
    g = DGLGraph(handle)
    return g if device is None or torch.device(device).type == "cpu" else g.to(device)


def heterograph(data_dict: Dict[CanonicalEType, tuple], num_nodes_dict: Optional[Dict[str, int]] = None,
                idtype=None, device=None) -> DGLGraph:
    """A graph of several node and edge types, as dgl.heterograph: {(src type, etype, dst type): (u, v)}.

    Node types and relations are sorted by name (DGL's order). A node type missing from num_nodes_dict gets
    the largest id that any relation gives it + 1."""
    rels = []
    for key, data in data_dict.items():
        if not (isinstance(key, tuple) and len(key) == 3 and all(isinstance(k, str) for k in key)):
            raise TypeError(f"heterograph: relation keys are (src type, edge type, dst type), got {key!r}")
        if not isinstance(data, (tuple, list)) or len(data) != 2:
            raise TypeError(f"heterograph: {key}: data must be a pair (src ids, dst ids)")
        u, v = _ids(data[0], f"heterograph {key}: src"), _ids(data[1], f"heterograph {key}: dst")
        if u.shape[0] != v.shape[0]:
            raise ValueError(f"heterograph {key}: {u.shape[0]} source ids but {v.shape[0]} destination ids")
        rels.append((key, u, v))
    dtype = _idtype_of([t for _, u, v in rels for t in (u, v)], idtype)
    counts: Dict[str, int] = {}
    for (s, _, d), u, v in rels:
        counts[s] = max(counts.get(s, 0), _max_id(u))
        counts[d] = max(counts.get(d, 0), _max_id(v))
    for t, n in (num_nodes_dict or {}).items():
        counts[t] = count_arg(n, f"heterograph: num_nodes_dict[{t!r}]")
    node_types = sorted(counts.items())
    relations = [(key, _host_ids(u, dtype), _host_ids(v, dtype)) for key, u, v in sorted(rels, key=lambda r: r[0])]
    g = DGLGraph(_C.make_graph(node_types, relations))
    return g if device is None or torch.device(device).type == "cpu" else g.to(device)


def batch(graphs: Sequence[DGLGraph], ndata=ALL, edata=ALL) -> DGLGraph:
    """Disjoint union, as dgl.batch: graph b's nodes and edges follow those of graphs 0..b-1, and so do their
    features (ndata / edata: ALL, which every member must hold alike, a list of names, or None)."""
    graphs = list(graphs)
    if not graphs:
        raise ValueError("batch: no graphs given")
    for g in graphs:
        if not isinstance(g, DGLGraph):
            raise TypeError(f"batch: expected topograph graphs, got {type(g).__name__}")
        if g.is_block:
            raise ValueError("batch: a block cannot be batched (as in DGL)")
    for name, keys in (("ndata", ndata), ("edata", edata)):
        if not (keys is None or keys == ALL or (isinstance(keys, (list, tuple)) and
                                                 all(isinstance(k, str) for k in keys))):
            raise TypeError(f"batch: {name} must be ALL, a list of feature names or None, got {keys!r}")
    new = DGLGraph(_C.batch([g._g for g in graphs]))
    _mp().batch_features(graphs, new, ndata, edata)
    return new


def unbatch(g: DGLGraph, node_split=None, edge_split=None) -> List[DGLGraph]:
    """The inverse of batch: one graph per member, ids back in each graph's own numbering, with its rows of
    the batch's features. node_split / edge_split (as DGL's: [B] counts, or {type: [B]} for several types; each
    defaults to the graph's own batch counts) split a graph that was not batched, or split it otherwise;
    every edge must lie inside its member's nodes (a DGLError otherwise, as a mismatch of the counts)."""
    if node_split is not None or edge_split is not None:
        g = g.clone()  # the split is set on a copy: g keeps its own batch counts
        nodes = node_split if node_split is not None else {t: g.batch_num_nodes(t) for t in g.ntypes}
        edges = edge_split if edge_split is not None else {c: g.batch_num_edges(c) for c in g.canonical_etypes}
        sizes = {len(torch.as_tensor(c).reshape(-1)) for c in
                 (nodes.values() if isinstance(nodes, dict) else [nodes])}
        sizes |= {len(torch.as_tensor(c).reshape(-1)) for c in
                  (edges.values() if isinstance(edges, dict) else [edges])}
        if len(sizes) != 1:
            raise DGLError("unbatch: node_split and edge_split must give the same number of member graphs for "
                           "every type")
        g.set_batch_num_nodes(nodes)
        g.set_batch_num_edges(edges)
    members = [DGLGraph(h) for h in _C.unbatch(g._g)]
    _mp().unbatch_features(g, members)
    return members


def edge_type_subgraph(g: DGLGraph, etypes: Sequence[EType]) -> DGLGraph:
    """Only the named relations (names or canonical triples), every node type kept; shares the structure (a
    block's subgraph is a block) and, as in DGL, the features: the subgraph's node frames are the graph's, its
    relations' edge frames those relations' (a feature set on either is seen by both)."""
    stored = [tuple(c) for c in g._g.canonical_etypes]
    kept = [g._relation(e) for e in etypes]
    sub = g._derived(g._g.edge_type_subgraph([stored[r] for r in kept]))
    _mp().share_frames(g, sub, [stored.index(tuple(c)) for c in sub._g.canonical_etypes])
    return sub


def reverse(g: DGLGraph, copy_ndata: bool = True, copy_edata: bool = False) -> DGLGraph:
    return g.reverse(copy_ndata=copy_ndata, copy_edata=copy_edata)


# g.edge_type_subgraph(etypes), as DGL's method; set here beside the function.
DGLGraph.edge_type_subgraph = lambda self, etypes: edge_type_subgraph(self, etypes)


def slice_batch(g: DGLGraph, gid: int, store_ids: bool = False) -> DGLGraph:
    """dgl.slice_batch: graph gid of the batch g, ids in its own numbering, its rows of the features (with NID /
    EID, the ids in the batch, when store_ids). A member's nodes and edges are consecutive ids of the batch (a
    disjoint union), so it is those ranges, its edges in their order (as DGL's; an induced subgraph would list
    them by source)."""
    from ._subgraph import carry_parent_data

    if isinstance(gid, bool) or not isinstance(gid, int) or not 0 <= gid < g.batch_size:
        raise DGLError(f"slice_batch: gid must be an int in [0, {g.batch_size}), got {gid!r}")

    def member(counts):  # the ids of graph gid among those counted per graph
        start = int(counts[:gid].sum())
        return torch.arange(start, start + int(counts[gid]), device=g.device)

    nodes = {t: member(g.batch_num_nodes(t)) for t in g.ntypes}
    eids, relations = [], []
    for c in g.canonical_etypes:
        eids.append(member(g.batch_num_edges(c)))
        u, v = g.find_edges(eids[-1], etype=c)
        first_src, first_dst = nodes[c[0]][:1], nodes[c[2]][:1]  # empty where no edge needs them
        relations.append((c, _host_ids(u - first_src, g.idtype), _host_ids(v - first_dst, g.idtype)))
    handle = _C.make_graph([(t, nodes[t].numel()) for t in g.ntypes], relations)
    sub = DGLGraph(handle) if g.device.type == "cpu" else DGLGraph(handle).to(g.device)
    return carry_parent_data(g, sub, nodes, eids, store_ids)
