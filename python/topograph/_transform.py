"""DGL's graph transforms (dgl.transforms) over Topograph's store: add_self_loop, remove_self_loop (the core
adds / drops the edges), remove_edges, to_simple and to_bidirected (the edges computed here with torch, the
graph built by the core). Each returns a new graph (graphs are immutable) with DGL's edge order and DGL's rules for the
features that come along. Unlike DGL 2.1, which forgets a batch in all but remove_self_loop, a batch stays a
batch: each graph's edges stay among its own nodes (to_simple and to_bidirected order edges by (source,
destination) as DGL does, which keeps each graph's edges together in batch order, so the edges are DGL's)."""
from __future__ import annotations

import numbers
from typing import List, Optional, Sequence, Tuple

import torch

from . import _C
from ._base import EID, DGLError
from ._graph import DGLGraph, EType, _host_ids, _mp
from ._segment import REDUCERS

Edges = Tuple[torch.Tensor, torch.Tensor]


def _check(g, what: str) -> None:
    """A graph the subgraph and transform functions accept: a topograph graph, not a block (DGLError, a
    ValueError, as DGL raises)."""
    if not isinstance(g, DGLGraph):
        raise TypeError(f"{what}: expected a topograph graph, got {type(g).__name__}")
    if g.is_block:
        raise DGLError(f"{what}: not defined for a block (as in DGL)")


def _rebuilt(g: DGLGraph, edges: Sequence[Edges], sizes: Optional[dict] = None) -> DGLGraph:
    """A graph with g's node types and counts, g's batch (each member keeps its nodes), and relation r's
    edges edges[r] (source, destination ids in g's numbering, each member's edges together in member order).
    sizes ({type: [B] node counts per member}, remove_nodes') replaces g's node counts, edges then numbered by
    them."""
    types = list(g._g.ntypes)
    relations = [tuple(c) for c in g._g.canonical_etypes]
    idtype = g.idtype
    if g.batch_size == 1:
        counts = [int(sizes[t].sum()) if sizes is not None else g._g.num_nodes(i) for i, t in enumerate(types)]
        handle = _C.make_graph(list(zip(types, counts)),
                               [(c, _host_ids(u, idtype), _host_ids(v, idtype)) for c, (u, v) in zip(relations, edges)])
    else:
        if sizes is None:
            sizes = {t: g.batch_num_nodes(t) for t in types}  # [B] each
        ends = {t: torch.cumsum(sizes[t], 0) for t in types}
        per_member: List[list] = [[] for _ in range(g.batch_size)]
        for (s, e, d), (u, v) in zip(relations, edges):
            u, v = u.cpu().to(torch.int64), v.cpu().to(torch.int64)
            member = torch.searchsorted(ends[s], u, right=True)  # [E]: the member whose node range holds u
            counts = torch.bincount(member, minlength=g.batch_size).tolist()
            local_u, local_v = u - (ends[s] - sizes[s])[member], v - (ends[d] - sizes[d])[member]
            for b, (mu, mv) in enumerate(zip(torch.split(local_u, counts), torch.split(local_v, counts))):
                per_member[b].append(((s, e, d), _host_ids(mu, idtype), _host_ids(mv, idtype)))
        handle = _C.batch([_C.make_graph([(t, int(sizes[t][b])) for t in types], rels)
                           for b, rels in enumerate(per_member)])
    new = DGLGraph(handle)
    return new if g.device.type == "cpu" else new.to(g.device)


def _simple(u: torch.Tensor, v: torch.Tensor, num_dst: int):
    """The distinct (u, v) pairs sorted by (u, v), as DGL's to_simple orders them: (new u, new v, for each
    old edge its new edge id [E], each new edge's count [E'], each new edge's first (lowest) old edge id [E'])."""
    key = u.to(torch.int64) * max(num_dst, 1) + v.to(torch.int64)
    order = torch.sort(key, stable=True).indices  # equal pairs keep edge-id order
    distinct, new_of_sorted, counts = torch.unique_consecutive(key[order], return_inverse=True, return_counts=True)
    new_of_old = torch.empty_like(new_of_sorted).index_copy_(0, order, new_of_sorted)
    first_old = order[torch.cumsum(counts, 0) - counts]
    return distinct // max(num_dst, 1), distinct % max(num_dst, 1), new_of_old, counts, first_old


def to_simple(g: DGLGraph, return_counts: Optional[str] = "count", writeback_mapping: bool = False,
              copy_ndata: bool = True, copy_edata: bool = False, aggregator: str = "arbitrary"):
    """dgl.to_simple: parallel edges (same relation, source and destination) merged into one; each relation's
    edges sorted by (source, destination). return_counts: the edge feature that gets how many edges each one
    merged (idtype; None: none). writeback_mapping: also return, per old edge, its new edge id (a tensor; a
    dict by canonical relation with several). copy_ndata: the node features come along (the same tensors);
    copy_edata: so do the edge features, merged by aggregator 'arbitrary' (the lowest edge id's, as DGL's),
    'sum' or 'mean'."""
    _check(g, "to_simple")
    if aggregator not in ("arbitrary", "sum", "mean"):
        raise DGLError(f"to_simple: aggregator must be 'arbitrary', 'sum' or 'mean', got {aggregator!r}")
    relations = g.canonical_etypes
    merged = [_simple(*g.all_edges(etype=c), g.num_nodes(c[2])) for c in relations]
    new = _rebuilt(g, [(u, v) for u, v, _, _, _ in merged])
    if copy_ndata:
        _mp().carry_node_features(g, new)
    frames = _mp().frames(g)
    for r, (_, _, new_of_old, counts, first_old) in enumerate(merged):
        target = _mp().edge_frame(new, r)
        if copy_edata and ("e", r) in frames:
            for name, value in frames[("e", r)]._data.items():
                if aggregator == "arbitrary":
                    target[name] = value.index_select(0, first_old.to(value.device))
                    continue
                total = value.new_zeros((counts.numel(),) + tuple(value.shape[1:]))
                total = total.index_add(0, new_of_old.to(value.device), value)
                target[name] = total if aggregator == "sum" else \
                    total / counts.to(value.device).view(-1, *[1] * (value.dim() - 1))
        if copy_edata and aggregator == "arbitrary":
            # DGL 2.1 takes these features as a subframe of the kept parent edges, which stores their ids
            target[EID] = first_old.to(new.device)
        if return_counts is not None:
            target[return_counts] = counts.to(device=new.device, dtype=g.idtype)
    if not writeback_mapping:
        return new
    maps = [new_of_old.to(device=new.device, dtype=g.idtype) for _, _, new_of_old, _, _ in merged]
    return (new, maps[0]) if len(maps) == 1 else (new, dict(zip(relations, maps)))


def to_bidirected(g: DGLGraph, copy_ndata: bool = False, readonly=None) -> DGLGraph:
    """dgl.to_bidirected: per relation (its two node types must agree), the simple graph with an edge u -> v
    wherever g has u -> v or v -> u: parallel edges and repeated self loops become one, edges sorted by
    (source, destination). copy_ndata: the node features come along (the same tensors); edge features never
    do (as DGL's). `readonly` is DGL's deprecated argument, ignored."""
    _check(g, "to_bidirected")
    edges = []
    for s, e, d in g.canonical_etypes:
        if s != d:
            raise DGLError(f"to_bidirected: relation {(s, e, d)} joins two node types; every relation's source "
                           f"and destination types must agree")
        u, v = g.all_edges(etype=(s, e, d))
        loop = u == v  # a self loop is its own reverse
        both_u, both_v = torch.cat([u, v[~loop]]), torch.cat([v, u[~loop]])
        edges.append(_simple(both_u, both_v, g.num_nodes(d))[:2])
    new = _rebuilt(g, edges)
    if copy_ndata:
        _mp().carry_node_features(g, new)
    return new


def add_reverse_edges(g: DGLGraph, readonly=None, copy_ndata: bool = True, copy_edata: bool = False,
                      ignore_bipartite: bool = False, exclude_self: bool = True) -> DGLGraph:
    """dgl.add_reverse_edges: per relation whose two node types agree, its E edges (ids 0..E-1, as in g) then the
    reverse v -> u of each (ids E.., in the same order), parallel edges kept; exclude_self leaves self loops
    unreversed. A relation between two types is an error, or kept as it is with ignore_bipartite. copy_ndata: the
    node features come along (the same tensors); copy_edata: edge features too, each reversed edge with its
    original's row (else none). `readonly` is DGL's deprecated argument, ignored. A batch is an error (unbatch
    first: its edges must stay grouped by member)."""
    _check(g, "add_reverse_edges")
    if g.batch_size > 1:
        raise DGLError(f"add_reverse_edges: g is a batch of {g.batch_size} graphs; unbatch it first (a batch keeps "
                       f"each member's edges together, which the reversed edges appended after all would break)")
    edges, parents = [], []
    for s, e, d in g.canonical_etypes:
        u, v = g.all_edges(etype=(s, e, d))
        ids = torch.arange(u.numel())
        if s != d:
            if not ignore_bipartite:
                raise DGLError(f"add_reverse_edges: relation {(s, e, d)} joins two node types; pass "
                               f"ignore_bipartite=True to keep such relations as they are")
            edges.append((u, v))
            parents.append(ids)
            continue
        turned = (u != v) if exclude_self else torch.ones_like(u, dtype=torch.bool)
        edges.append((torch.cat([u, v[turned]]), torch.cat([v, u[turned]])))
        parents.append(torch.cat([ids, ids[turned.cpu()]]))
    new = _rebuilt(g, edges)
    if copy_ndata:
        _mp().carry_node_features(g, new)
    if copy_edata:
        _mp().carry_edge_features(g, new, range(len(edges)), parents)
    return new


def _loop_fill(g: DGLGraph, relation: int, value: torch.Tensor, fill_data) -> torch.Tensor:
    """The rows of an edge feature (value [E, *]) for the loops of every node [N, *]: fill_data (cast to the feature's
    dtype), or the node's in-edges' rows reduced by fill_data ('sum', 'mean', 'max', 'min'; 0 for a node
    without in-edges), as dgl.add_self_loop."""
    num_nodes = g._g.num_nodes(g._g.ntype_id(g._g.canonical_etypes[relation][2]))
    shape = (num_nodes,) + tuple(value.shape[1:])
    if not isinstance(fill_data, str):
        fill = torch.as_tensor(fill_data).to(dtype=value.dtype, device=value.device)
        return fill.expand(shape).clone()
    _, dst = g.all_edges(etype=g.canonical_etypes[relation])
    dst = dst.to(device=value.device, dtype=torch.int64)
    index = dst.view(-1, *[1] * (value.dim() - 1)).expand_as(value)
    if fill_data in ("max", "min"):
        return value.new_zeros(shape).scatter_reduce(0, index, value, "amax" if fill_data == "max" else "amin",
                                                     include_self=False)
    total = value.new_zeros(shape).index_add(0, dst, value)
    if fill_data == "sum":
        return total
    degree = torch.bincount(dst, minlength=num_nodes).clamp(min=1).to(value.dtype)
    return total / degree.view(-1, *[1] * (value.dim() - 1))


def add_self_loop(g: DGLGraph, edge_feat_names: Optional[Sequence[str]] = None, fill_data=1.0,
                  etype: EType = None) -> DGLGraph:
    """dgl.add_self_loop: one loop u -> u per node of the relation (its two node types must agree) after its
    edges (ids E..E+N-1; in a batch, each graph's loops after its own edges); loops already there are not
    looked for. The node features come along. The relation's edge features named in edge_feat_names (None:
    all of them) get, for the loops, rows of fill_data (a number, cast to each feature's dtype) or, with
    fill_data 'sum' / 'mean' / 'max' / 'min', the node's in-edges' rows so reduced (0 without in-edges); the
    relation's other features get rows of 0, as DGL's."""
    if not isinstance(g, DGLGraph):
        raise TypeError(f"add_self_loop: expected a topograph graph, got {type(g).__name__}")
    if isinstance(fill_data, str):
        if fill_data not in REDUCERS:
            raise DGLError(f"add_self_loop: fill_data must be a number or one of {list(REDUCERS)}, "
                           f"got {fill_data!r}")
    elif not isinstance(fill_data, numbers.Number):
        raise TypeError(f"add_self_loop: fill_data must be a number or a reducer name, got {type(fill_data).__name__}")
    r = g._relation(etype)
    new = DGLGraph(g._g.add_self_loop(r))  # the core checks that the relation's two types agree
    _mp().carry_node_features(g, new)
    # where relation r's old edges and its loops land among the new edges, graph by graph
    stored_type = g._g.canonical_etypes[r][0]
    old_at, loop_at, loop_node = [], [], []
    new_first = node_first = 0
    for edges, nodes in zip(g.batch_num_edges(g.canonical_etypes[r]).tolist(),
                            g.batch_num_nodes(g._public_ntype(stored_type)).tolist()):
        old_at.append(torch.arange(new_first, new_first + edges))
        loop_at.append(torch.arange(new_first + edges, new_first + edges + nodes))
        loop_node.append(torch.arange(node_first, node_first + nodes))
        new_first, node_first = new_first + edges + nodes, node_first + nodes
    old_at, loop_at, loop_node = torch.cat(old_at), torch.cat(loop_at), torch.cat(loop_node)
    relations = range(len(g._g.canonical_etypes))
    _mp().carry_edge_features(g, new, [i if i != r else None for i in relations])  # the others: unchanged
    frame = _mp().frames(g).get(("e", r))
    data = dict(frame._data) if frame is not None else {}
    named = list(data) if edge_feat_names is None else list(edge_feat_names)
    for name in named:
        if name not in data:
            raise KeyError(f"add_self_loop: edge_feat_names names {name!r}, which relation "
                           f"{g.canonical_etypes[r]} has no feature of (it has {sorted(data)})")
    target = _mp().edge_frame(new, r)
    for name, value in data.items():
        device = value.device
        loops = _loop_fill(g, r, value, fill_data).to(value.dtype) if name in named else \
            value.new_zeros((g._g.num_nodes(g._g.ntype_id(stored_type)),) + tuple(value.shape[1:]))
        rows = value.new_zeros((new_first,) + tuple(value.shape[1:]))
        rows = rows.index_copy(0, old_at.to(device), value).index_copy(0, loop_at.to(device),
                                                                      loops.index_select(0, loop_node.to(device)))
        target[name] = rows
    return new


def remove_self_loop(g: DGLGraph, etype: EType = None) -> DGLGraph:
    """dgl.remove_self_loop: every edge u -> u of the relation removed; the others keep their order and
    features, the batch its graphs."""
    if not isinstance(g, DGLGraph):
        raise TypeError(f"remove_self_loop: expected a topograph graph, got {type(g).__name__}")
    r = g._relation(etype)
    new = DGLGraph(g._g.remove_self_loop(r))
    _mp().carry_node_features(g, new)
    u, v = g.all_edges(etype=g.canonical_etypes[r])  # by edge id
    relations = range(len(g._g.canonical_etypes))
    ids = [(u != v).nonzero().flatten().cpu() if i == r else torch.arange(g.num_edges(c))
           for i, c in zip(relations, g.canonical_etypes)]
    _mp().carry_edge_features(g, new, relations, ids)
    return new


def remove_edges(g: DGLGraph, eids, etype: EType = None, store_ids: bool = False) -> DGLGraph:
    """dgl.remove_edges: a new graph without the edges `eids` (ids of relation `etype`, which must be named when
    g has several; a tensor, list or numpy array; a boolean mask is refused, as DGL's). Every node stays; the
    remaining edges keep their relative order, renumbered from 0, and their features; the node features come
    along (the same tensors); a batch stays a batch (each graph's edge count drops by its removed edges, as
    DGL's). store_ids: edata[EID] on every relation, each edge's id in g. No ids: g's copy (its own feature
    dicts over the same tensors, no EID), as DGL's clone. g.remove_edges does the same in place."""
    _check(g, "remove_edges")
    r = g._relation(etype)
    relations = g.canonical_etypes
    if isinstance(eids, torch.Tensor) and eids.dtype == torch.bool:
        raise DGLError("remove_edges: eids must be edge ids, got a boolean mask (as DGL; take mask.nonzero())")
    removed = g._checked_ids(eids, g.num_edges(relations[r]), "remove_edges: edge")  # [k] int64, in range
    kept = [None] * len(relations)  # None: every edge of that relation, the same feature tensors
    if removed.numel():
        keep = torch.ones(g.num_edges(relations[r]), dtype=torch.bool)
        keep[removed.cpu()] = False
        kept[r] = keep.nonzero().flatten()
        u, v = g.all_edges(etype=relations[r])
        edges = [g.all_edges(etype=c) if i != r else (u[kept[r].to(u.device)], v[kept[r].to(v.device)])
                 for i, c in enumerate(relations)]
        new = _rebuilt(g, edges)  # each graph of a batch keeps its nodes and its remaining edges
    else:
        new = g._derived(g._g)  # DGL's clone: the same structure, features in dicts of its own
    _mp().carry_node_features(g, new)
    _mp().carry_edge_features(g, new, range(len(relations)), kept)
    if store_ids and removed.numel():  # as DGL's, which returns before storing ids when there is none to remove
        for i, c in enumerate(relations):
            ids = kept[i] if kept[i] is not None else torch.arange(g.num_edges(c))
            _mp().edge_frame(new, i)[EID] = ids.to(device=new.device, dtype=g.idtype)
    return new
