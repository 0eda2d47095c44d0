"""dgl.to_homogeneous and dgl.to_heterogeneous (DGL's convert.py): a graph of several node types and relations
as one graph of one type, the types kept as features, and back.

to_homogeneous numbers the nodes type after type in g.ntypes order (type t's node i is node offset[t] + i) and
the edges relation after relation in g.canonical_etypes order, each relation's by edge id, as DGL's; ndata[NID]
/ edata[EID] hold each node's / edge's id within its type (idtype), ndata[NTYPE] / edata[ETYPE] its type's index
(int64), as DGL's. to_heterogeneous splits such a graph by those type indices: a type's nodes, and a relation's
edges, keep their relative order, and NID / EID (int64, as DGL's) map them back."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import torch

from ._base import EID, ETYPE, NID, NTYPE, DGLError
from ._construct import graph, heterograph
from ._graph import DGLGraph
from ._slice import each_repeated, ids_within
from ._transform import _check


def _names(names, what: str) -> List[str]:
    """ndata / edata: None (no feature) or a list of feature names."""
    if names is None:
        return []
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise TypeError(f"to_homogeneous: {what} must be a list of feature names or None, got {names!r}")
    return list(names)


def _concatenated(frames: Sequence[Tuple[str, int, dict]], name: str, what: str) -> torch.Tensor:
    """Feature `name` of every (type, rows, features) in order, concatenated: [sum of rows, *row shape]. Types
    without rows need not hold it (as DGL's); the others must (KeyError) with one row shape and dtype
    (DGLError)."""
    holders = [(t, f) for t, rows, f in frames if rows > 0] or [(t, f) for t, _, f in frames if name in f]
    if not holders:
        raise KeyError(f"to_homogeneous: {what} {name!r} is held by no type")
    for t, f in holders:
        if name not in f:
            raise KeyError(f"to_homogeneous: {what} {name!r} is missing on {t!r} (it has {sorted(f)}); every "
                           f"type with rows must hold it")
    first_type, first = holders[0][0], holders[0][1][name]
    for t, f in holders[1:]:
        value = f[name]
        if value.shape[1:] != first.shape[1:] or value.dtype != first.dtype:
            raise DGLError(f"to_homogeneous: {what} {name!r} is {value.dtype} {tuple(value.shape[1:])} per row on "
                           f"{t!r} but {first.dtype} {tuple(first.shape[1:])} on {first_type!r}: cannot concatenate")
    return torch.cat([f[name] for _, f in holders])


def to_homogeneous(G: DGLGraph, ndata=None, edata=None, store_type: bool = True,  # noqa: N803 (DGL's name)
                   return_count: bool = False):
    """dgl.to_homogeneous: g as a graph of one node type and one relation (see this module's doc for the
    numbering). ndata / edata: the node / edge features to concatenate over the types (each type with rows must
    hold it, alike in row shape and dtype); no other feature comes along. store_type: ndata[NTYPE] /
    edata[ETYPE] hold each node's / edge's type index (int64). return_count: also return the node count of each
    type and the edge count of each relation (lists of ints), as DGL's. A batch becomes one graph, as DGL's."""
    g = G  # DGL 2.1 names the parameter G (dgl.to_homogeneous(G=hg) is a DGL script's call)
    _check(g, "to_homogeneous")
    from . import _message_passing as mp  # it builds on ops, which builds on _graph

    ntypes, relations = g.ntypes, g.canonical_etypes
    node_counts = [g.num_nodes(t) for t in ntypes]
    edge_counts = [g.num_edges(c) for c in relations]
    offset = dict(zip(ntypes, [0] + torch.tensor(node_counts, dtype=torch.int64).cumsum(0).tolist()))
    src, dst = [], []
    for s, e, d in relations:
        u, v = g.all_edges(etype=(s, e, d))  # by edge id
        src.append(u + offset[s])
        dst.append(v + offset[d])
    empty = torch.zeros(0, dtype=g.idtype, device=g.device)
    new = graph((torch.cat(src) if src else empty, torch.cat(dst) if dst else empty), num_nodes=sum(node_counts),
                idtype=g.idtype, device=g.device)
    node_frames = [(t, n, dict(mp.node_frame(g, t)._data)) for t, n in zip(ntypes, node_counts)]
    edge_frames = [(c, n, dict(mp.edge_frame(g, r)._data)) for r, (c, n) in enumerate(zip(relations, edge_counts))]
    for name in _names(ndata, "ndata"):
        new.ndata[name] = _concatenated(node_frames, name, "node feature")
    for name in _names(edata, "edata"):
        new.edata[name] = _concatenated(edge_frames, name, "edge feature")
    new.ndata[NID] = ids_within(node_counts, g.idtype, g.device)
    new.edata[EID] = ids_within(edge_counts, g.idtype, g.device)
    if store_type:
        new.ndata[NTYPE] = each_repeated(range(len(ntypes)), node_counts, torch.int64, g.device)
        new.edata[ETYPE] = each_repeated(range(len(relations)), edge_counts, torch.int64, g.device)
    return (new, node_counts, edge_counts) if return_count else new


def _type_ids(frame, field: str, count: int, kinds: Sequence, what: str) -> torch.Tensor:
    """The feature `field` of a frame as type indices [rows] (int64, CPU), each in [0, len(kinds))."""
    if field not in frame:
        raise KeyError(f"to_heterogeneous: the graph has no {what} feature {field!r} of type indices (it has "
                       f"{sorted(frame)})")
    ids = frame[field]
    if ids.dim() != 1 or ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
        raise DGLError(f"to_heterogeneous: {what} feature {field!r} must be 1-D integer type indices, got "
                       f"{ids.dtype} of shape {tuple(ids.shape)}")
    ids = ids.cpu().to(torch.int64)
    bad = (ids < 0) | (ids >= count)
    if bool(bad.any()):
        at = int(bad.nonzero()[0])
        raise DGLError(f"to_heterogeneous: {what} {at} has type index {int(ids[at])}, outside the {count} {what} "
                       f"types given {list(kinds)}")
    return ids


def _metagraph_relations(metagraph, ntypes: List[str], etypes: List[str]) -> List[Tuple[int, int, int]]:
    """(source type, edge type, destination type) indices of each relation of a networkx MultiDiGraph (DGL's
    metagraph: edges (source type, destination type, key = edge type))."""
    if not hasattr(metagraph, "edges"):
        raise TypeError(f"to_heterogeneous: metagraph must be a networkx MultiDiGraph (edges(keys=True) giving "
                        f"(source type, destination type, edge type)), got {type(metagraph).__name__}")
    out = []
    for s, d, e in metagraph.edges(keys=True):
        for name, names, kind in ((s, ntypes, "node"), (d, ntypes, "node"), (e, etypes, "edge")):
            if name not in names:
                raise DGLError(f"to_heterogeneous: the metagraph's relation {(s, e, d)} names {kind} type "
                               f"{name!r}, not among {names}")
        out.append((ntypes.index(s), etypes.index(e), ntypes.index(d)))
    return out


def to_heterogeneous(G: DGLGraph, ntypes: Sequence[str], etypes: Sequence[str], ntype_field: str = NTYPE,
                     etype_field: str = ETYPE, metagraph=None) -> DGLGraph:
    """dgl.to_heterogeneous: a graph of one node type and one relation whose ndata[ntype_field] /
    edata[etype_field] give each node's / edge's type as an index into ntypes / etypes, split into those types:
    a relation per (source type, edge type, destination type) its edges show, or per edge of `metagraph` (a
    networkx MultiDiGraph, as DGL's; an edge it has no relation for is a DGLError, where DGL drops it). Each
    type's nodes and each relation's edges keep their order; ndata[NID] / edata[EID] (int64) hold their ids in
    G; G's other features come along, split the same way. Types sorted by name, as every heterograph's."""
    _check(G, "to_heterogeneous")
    if len(G.ntypes) != 1 or len(G.canonical_etypes) != 1:
        raise DGLError(f"to_heterogeneous: the graph must have one node type and one relation, it has "
                       f"{G.canonical_etypes}")
    ntypes, etypes = list(ntypes), list(etypes)
    for kind, names in (("ntypes", ntypes), ("etypes", etypes)):
        if not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
            raise DGLError(f"to_heterogeneous: {kind} must be distinct names, got {names}")
    from . import _message_passing as mp  # it builds on ops, which builds on _graph

    node_frame, edge_frame = mp.node_frame(G, G.ntypes[0]), mp.edge_frame(G, 0)
    node_type = _type_ids(node_frame, ntype_field, len(ntypes), ntypes, "node")  # [N]
    edge_type = _type_ids(edge_frame, etype_field, len(etypes), etypes, "edge")  # [E]
    by_type = torch.sort(node_type, stable=True).indices  # [N]: node ids grouped by type, in order within each
    counts = torch.bincount(node_type, minlength=len(ntypes))  # [T]
    node_groups = torch.split(by_type, counts.tolist())
    local = torch.empty_like(by_type)
    local[by_type] = torch.arange(by_type.numel()) - torch.repeat_interleave(counts.cumsum(0) - counts, counts)
    u, v = (x.cpu().to(torch.int64) for x in G.all_edges())
    triple = torch.stack([node_type[u], edge_type, node_type[v]], 1)  # [E, 3]: each edge's type indices
    if metagraph is None:
        relations = [tuple(t) for t in torch.unique(triple, dim=0).tolist()]
    else:
        relations = _metagraph_relations(metagraph, ntypes, etypes)
    edge_groups: Dict[Tuple[str, str, str], torch.Tensor] = {}
    matched = torch.zeros(triple.shape[0], dtype=torch.bool)
    for s, e, d in relations:
        member = (triple == torch.tensor([s, e, d])).all(1)
        matched |= member
        edge_groups[(ntypes[s], etypes[e], ntypes[d])] = member.nonzero().flatten()  # by edge id
    if not bool(matched.all()):
        at = int((~matched).nonzero()[0])
        s, e, d = triple[at].tolist()
        raise DGLError(f"to_heterogeneous: edge {at} is of relation {(ntypes[s], etypes[e], ntypes[d])}, which the "
                       f"metagraph does not have")
    hg = heterograph({c: (local[u[ids]], local[v[ids]]) for c, ids in edge_groups.items()},
                     dict(zip(ntypes, counts.tolist())), idtype=G.idtype, device=G.device)
    for name, value in node_frame._data.items():
        if name not in (ntype_field, NID):
            for t, ids in zip(ntypes, node_groups):
                hg.nodes[t].data[name] = value.index_select(0, ids.to(value.device))
    for name, value in edge_frame._data.items():
        if name not in (etype_field, EID):
            for c, ids in edge_groups.items():
                hg.edges[c].data[name] = value.index_select(0, ids.to(value.device))
    for t, ids in zip(ntypes, node_groups):
        hg.nodes[t].data[NID] = ids.to(hg.device)
    for c, ids in edge_groups.items():
        hg.edges[c].data[EID] = ids.to(hg.device)
    return hg
