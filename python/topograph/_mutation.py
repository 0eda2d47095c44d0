"""DGL 2.1's graph mutations and what builds on them: rand_graph, add_nodes / add_edges / remove_nodes (the
functional forms here return new graphs; DGLGraph's methods of the same names take the new graph's structure and
features in place, as g.remove_edges does), and khop_in_subgraph / khop_out_subgraph.

Graphs are immutable in the store, so a mutation builds the new structure (with torch, then the core, as
_transform.py's transforms) and carries the features over: new rows are zeros, or the rows given in `data`.
As DGL 2.1: add_nodes / add_edges forget a batch (the result is one graph, batch_size 1), remove_nodes keeps it
(each graph's node and edge counts less what it lost)."""
from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Dict, Optional

import torch

from . import _C
from ._base import EID, NID, DGLError
from ._graph import _ID_MAX, DGLGraph, EType, _host_ids, _mp
from ._subgraph import typed_nodes
from ._transform import _check, _rebuilt



def _check_counts(what: str, idtype, **counts) -> None:
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise DGLError(f"{what}: {name} must be an int >= 0, got {value!r}")
    if idtype not in (torch.int32, torch.int64):
        raise DGLError(f"{what}: idtype must be torch.int32 or torch.int64, got {idtype}")


def _distinct_pairs(rows: int, cols: int, e: int, idtype, what: str):
    """e distinct (row, col) pairs drawn uniformly without replacement from rows x cols, in the order drawn."""
    total = rows * cols
    if e > total:
        raise DGLError(f"{what}: num_edges {e} exceeds the {total} distinct pairs")
    if max(rows, cols) > _ID_MAX[idtype]:
        raise DGLError(f"{what}: {max(rows, cols)} nodes do not fit idtype {idtype}")
    if total <= 1 << 22 or 2 * e > total:
        keys = torch.randperm(total)[:e]
    else:  # rejection: draw keys, keep each one's first draw, until e distinct ones (few rounds when e << total)
        keys = torch.zeros(0, dtype=torch.int64)
        while keys.numel() < e:
            draw = torch.randint(0, total, (int((e - keys.numel()) * 1.2) + 16,))
            keys = _first_occurrences(torch.cat([keys, draw]))
        keys = keys[:e]
    return keys // max(cols, 1), keys % max(cols, 1)


def rand_graph(num_nodes: int, num_edges: int, idtype=torch.int64, device=torch.device("cpu")) -> DGLGraph:
    """dgl.rand_graph: num_edges distinct edges (u, v) drawn uniformly, without replacement, from the
    num_nodes ** 2 pairs (self loops included), in the order drawn. The draws come from torch's default
    generator (torch.manual_seed repeats them); DGL draws from its own, so the two libraries give the same
    distribution of graphs, not the same edges."""
    _check_counts("rand_graph", idtype, num_nodes=num_nodes, num_edges=num_edges)
    n = int(num_nodes)
    edges = _distinct_pairs(n, n, int(num_edges), idtype, "rand_graph")
    g = _plain(["_N"], [("_N", "_E", "_N")], {"_N": n}, [edges], idtype)
    return g if torch.device(device).type == "cpu" else g.to(device)


def rand_bipartite(utype: str, etype: str, vtype: str, num_src_nodes: int, num_dst_nodes: int, num_edges: int,
                   idtype=torch.int64, device=torch.device("cpu")) -> DGLGraph:
    """dgl.rand_bipartite: num_edges distinct edges utype -> vtype drawn as rand_graph draws them, from the
    num_src_nodes x num_dst_nodes pairs (torch's generator: DGL's distribution, not its edges)."""
    _check_counts("rand_bipartite", idtype, num_src_nodes=num_src_nodes, num_dst_nodes=num_dst_nodes,
                  num_edges=num_edges)
    if utype == vtype:
        raise DGLError(f"rand_bipartite: utype and vtype must differ, got {utype!r} twice (rand_graph makes one type)")
    edges = _distinct_pairs(int(num_src_nodes), int(num_dst_nodes), int(num_edges), idtype, "rand_bipartite")
    g = _plain(sorted([utype, vtype]), [(utype, etype, vtype)], {utype: int(num_src_nodes), vtype: int(num_dst_nodes)},
               [edges], idtype)
    return g if torch.device(device).type == "cpu" else g.to(device)


def _first_positions(keys: torch.Tensor) -> torch.Tensor:
    """The position of each distinct value's first occurrence in keys, ascending (so in order of appearance)."""
    distinct, inverse = torch.unique(keys, return_inverse=True)
    first = torch.full((distinct.numel(),), keys.numel(), dtype=torch.int64, device=keys.device)
    first = first.scatter_reduce(0, inverse, torch.arange(keys.numel(), device=keys.device), "amin")
    return first.sort().values


def _first_occurrences(keys: torch.Tensor) -> torch.Tensor:
    """The distinct values of keys, each at its first position, in that order."""
    return keys[_first_positions(keys)]


def _plain(types, relations, counts: Dict[str, int], edges, idtype) -> DGLGraph:
    """An unbatched graph of the given types, node counts and edges (in the numbering of those counts)."""
    return DGLGraph(_C.make_graph([(t, counts[t]) for t in types],
                                  [(c, _host_ids(u, idtype), _host_ids(v, idtype)) for c, (u, v) in zip(relations, edges)]))


def _on_device(g: DGLGraph, new: DGLGraph) -> DGLGraph:
    return new if g.device.type == "cpu" else new.to(g.device)


def _new_ids(x, idtype, what: str) -> torch.Tensor:
    """Node ids to add edges between (an int, a list, a tensor of any integer dtype) as 1-D int64, each >= 0
    and within idtype (DGLError naming the first that is not)."""
    t = x if isinstance(x, torch.Tensor) else torch.as_tensor(x)
    if t.dim() == 0:
        t = t.reshape(1)
    if t.numel() == 0:
        return torch.zeros(0, dtype=torch.int64)
    if t.dtype == torch.bool or t.dtype.is_floating_point or t.dtype.is_complex:
        raise DGLError(f"{what}: node ids must be integers, got {t.dtype}")
    if t.dim() != 1:
        raise DGLError(f"{what}: node ids must be 1-D, got shape {tuple(t.shape)}")
    t = t.to(device="cpu", dtype=torch.int64)
    bad = (t < 0) | (t > _ID_MAX[idtype] - 1)
    if bool(bad.any()):
        raise DGLError(f"{what}: node id {int(t[bad][0])} is negative or does not fit idtype {idtype}")
    return t


def _appended(old: Dict[str, torch.Tensor], old_rows: int, num: int, data, what: str) -> Dict[str, torch.Tensor]:
    """Features of old_rows + num rows: each old feature's rows then data's rows for it (zeros without); a
    feature only in data gets zeros for the old rows, as DGL's frames."""
    data = {} if data is None else data
    if not isinstance(data, Mapping):
        raise DGLError(f"{what}: data must be a dict {{feature name: tensor of {num} rows}}, got "
                       f"{type(data).__name__}")
    for name, value in data.items():
        if not isinstance(value, torch.Tensor) or value.dim() == 0 or value.shape[0] != num:
            shape = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
            raise DGLError(f"{what}: data[{name!r}] must be a tensor of {num} rows (the new ones), got {shape}")
    out = {}
    for name, value in old.items():
        if name in data:
            new = data[name]
            if tuple(new.shape[1:]) != tuple(value.shape[1:]):
                raise DGLError(f"{what}: data[{name!r}] has rows of shape {tuple(new.shape[1:])}, the feature's "
                               f"are {tuple(value.shape[1:])}")
            new = new.to(dtype=value.dtype, device=value.device)
        else:
            new = value.new_zeros((num,) + tuple(value.shape[1:]))
        out[name] = torch.cat([value, new])
    for name, value in data.items():
        if name not in old:
            out[name] = torch.cat([value.new_zeros((old_rows,) + tuple(value.shape[1:])), value])
    return out


def _carry_grown(g: DGLGraph, new: DGLGraph, grown_nodes: Dict[str, int], node_data, grown_relation: Optional[int],
                 edge_count: int, edge_data, what: str) -> None:
    """new gets g's features: node types in grown_nodes ({type: rows added}) and relation grown_relation
    (edge_count edges added) padded by _appended with node_data / edge_data, the others the same tensors."""
    frames = _mp().frames(g)
    for t in new._g.ntypes:
        frame = frames.get(("n", t))
        old = dict(frame._data) if frame is not None else {}
        if t in grown_nodes:
            old = _appended(old, g.num_nodes(t), grown_nodes[t], node_data.get(t), f"{what} (nodes of {t!r})")
        target = _mp().node_frame(new, t)
        for name, value in old.items():
            target[name] = value
    for r, c in enumerate(g.canonical_etypes):
        frame = frames.get(("e", r))
        old = dict(frame._data) if frame is not None else {}
        if r == grown_relation:
            old = _appended(old, g.num_edges(c), edge_count, edge_data, f"{what} (edges of {c})")
        target = _mp().edge_frame(new, r)
        for name, value in old.items():
            target[name] = value


def add_nodes(g: DGLGraph, num: int, data=None, ntype: Optional[str] = None) -> DGLGraph:
    """dgl.add_nodes: a new graph with `num` more nodes of type ntype (named when g has several), ids
    N..N+num-1. Their features: data ({name: [num, ...]}) where given, else zeros; a feature only in data gets
    zeros for the old nodes. num 0: g's copy (features in dicts of its own), as DGL's. As DGL 2.1, a batch
    becomes one graph (batch_size 1)."""
    _check(g, "add_nodes")
    t = g._ntype(ntype)
    if t not in g.ntypes:
        raise DGLError(f"add_nodes: no node type {t!r}; the graph has {g.ntypes}")
    if isinstance(num, bool) or not isinstance(num, numbers.Integral) or num < 0:
        raise DGLError(f"add_nodes: num must be an int >= 0, got {num!r}")
    if num == 0:
        return g.clone()
    counts = {s: g.num_nodes(s) + (int(num) if s == t else 0) for s in g.ntypes}
    if counts[t] > _ID_MAX[g.idtype]:
        raise DGLError(f"add_nodes: {counts[t]} nodes of {t!r} do not fit idtype {g.idtype}")
    relations = g.canonical_etypes
    new = _on_device(g, _plain(g.ntypes, relations, counts, [g.all_edges(etype=c) for c in relations], g.idtype))
    _carry_grown(g, new, {t: int(num)}, {t: data}, None, 0, None, "add_nodes")
    return new


def add_edges(g: DGLGraph, u, v, data=None, etype: EType = None) -> DGLGraph:
    """dgl.add_edges: a new graph with edges u[i] -> v[i] of relation etype (named when g has several) after
    its edges (ids E..E+k-1); one id on either side pairs with every id of the other. Ids beyond the node
    count add the nodes up to them first (their features zeros, as add_nodes'). The new edges' features:
    data ({name: [k, ...]}) where given, else zeros; a feature only in data gets zeros for the old edges. No
    ids on either side: g's copy, as DGL's. As DGL 2.1, a batch becomes one graph (batch_size 1)."""
    _check(g, "add_edges")
    r = g._relation(etype)
    relations = g.canonical_etypes
    s, _, d = relations[r]
    u, v = _new_ids(u, g.idtype, "add_edges: u"), _new_ids(v, g.idtype, "add_edges: v")
    if u.numel() == 0 or v.numel() == 0:
        return g.clone()
    if u.numel() != v.numel():
        if u.numel() == 1:
            u = u.expand(v.numel())
        elif v.numel() == 1:
            v = v.expand(u.numel())
        else:
            raise DGLError(f"add_edges: {u.numel()} source ids but {v.numel()} destination ids (give as many, or "
                           f"one on either side)")
    counts = {t: g.num_nodes(t) for t in g.ntypes}
    counts[s] = max(counts[s], int(u.max()) + 1)
    counts[d] = max(counts[d], int(v.max()) + 1)
    edges = [g.all_edges(etype=c) for c in relations]
    edges[r] = (torch.cat([edges[r][0].cpu().to(torch.int64), u]), torch.cat([edges[r][1].cpu().to(torch.int64), v]))
    new = _on_device(g, _plain(g.ntypes, relations, counts, edges, g.idtype))
    grown = {t: counts[t] - g.num_nodes(t) for t in g.ntypes if counts[t] > g.num_nodes(t)}
    _carry_grown(g, new, grown, {}, r, u.numel(), data, "add_edges")
    return new


def remove_nodes(g: DGLGraph, nids, ntype: Optional[str] = None, store_ids: bool = False) -> DGLGraph:
    """dgl.remove_nodes: a new graph without the nodes nids of type ntype (named when g has several; ids, not
    a mask, as remove_edges; an id named twice is removed once) and every edge touching them. The remaining
    nodes and edges keep their relative order, renumbered from 0, and their features. store_ids: ndata[NID]
    on every node type and edata[EID] on every relation, the ids in g. A batch stays a batch (each graph's
    node and edge counts less what it lost), as DGL's. No ids: g's copy. Unlike DGL 2.1, whose remaining
    edges come in an order of its own (by source node), they keep their order by id: map through EID."""
    _check(g, "remove_nodes")
    t = g._ntype(ntype)
    if t not in g.ntypes:
        raise DGLError(f"remove_nodes: no node type {t!r}; the graph has {g.ntypes}")
    if isinstance(nids, torch.Tensor) and nids.dtype == torch.bool:
        raise DGLError("remove_nodes: nids must be node ids, got a boolean mask (take mask.nonzero())")
    removed = g._checked_ids(nids, g.num_nodes(t), f"remove_nodes: node of {t!r}").cpu()
    if removed.numel() == 0:
        return g.clone()
    keep = torch.ones(g.num_nodes(t), dtype=torch.bool)
    keep[removed] = False
    kept_nodes = keep.nonzero().flatten()
    new_id = torch.cumsum(keep.to(torch.int64), 0) - 1  # old id -> new id where kept
    relations = g.canonical_etypes
    edges, kept_edges = [], []
    for c in relations:
        u, v = (x.cpu().to(torch.int64) for x in g.all_edges(etype=c))
        if t not in (c[0], c[2]):
            edges.append((u, v))
            kept_edges.append(None)  # every edge: the same feature tensors
            continue
        ok = (keep[u] if c[0] == t else True) & (keep[v] if c[2] == t else True)
        ok = torch.as_tensor(ok, dtype=torch.bool).expand(u.shape)
        eids = ok.nonzero().flatten()
        u, v = u[eids], v[eids]
        edges.append((new_id[u] if c[0] == t else u, new_id[v] if c[2] == t else v))
        kept_edges.append(eids)
    sizes = {s: g.batch_num_nodes(s) for s in g.ntypes}  # [B]: each graph's nodes less those it lost
    member = torch.searchsorted(torch.cumsum(sizes[t], 0), removed.unique(), right=True)
    sizes[t] = sizes[t] - torch.bincount(member, minlength=g.batch_size)
    new = _rebuilt(g, edges, sizes)
    _mp().carry_node_features(g, new, node_ids={t: kept_nodes})
    _mp().carry_edge_features(g, new, range(len(relations)), kept_edges)
    if store_ids:
        for s in g.ntypes:
            ids = kept_nodes if s == t else torch.arange(g.num_nodes(s))
            _mp().node_frame(new, s)[NID] = ids.to(device=new.device, dtype=g.idtype)
        for r, c in enumerate(relations):
            ids = kept_edges[r] if kept_edges[r] is not None else torch.arange(g.num_edges(c))
            _mp().edge_frame(new, r)[EID] = ids.to(device=new.device, dtype=g.idtype)
    return new


def _khop(g: DGLGraph, nodes, k, relabel_nodes: bool, store_ids: bool, output_device, inward: bool):
    what = "khop_in_subgraph" if inward else "khop_out_subgraph"
    if not isinstance(g, DGLGraph):
        raise TypeError(f"{what}: expected a topograph graph, got {type(g).__name__}")
    if g.is_block:
        raise DGLError(f"{what}: extracting a subgraph of a block is not allowed (as in DGL)")
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 0:
        raise DGLError(f"{what}: k must be an int >= 0, got {k!r}")
    typed = isinstance(nodes, Mapping)
    nodes = typed_nodes(g, nodes, what)
    seeds = {t: g._checked_ids(ids, g.num_nodes(t), f"{what}: node of {t!r}").cpu() for t, ids in nodes.items()}
    empty = torch.zeros(0, dtype=torch.int64)
    hops, last = [seeds], seeds
    reached = {t: torch.unique(ids.to(torch.int64)) for t, ids in seeds.items()}
    for _ in range(int(k)):
        found = {t: [] for t in g.ntypes}
        for s, e, d in g.canonical_etypes:
            u, v = (x.cpu().to(torch.int64) for x in g.all_edges(etype=(s, e, d)))
            if inward:  # the sources of the edges into last hop's nodes
                found[s].append(u[torch.isin(v, last.get(d, empty))])
            else:
                found[d].append(v[torch.isin(u, last.get(s, empty))])
        last = {t: torch.unique(torch.cat(ids)) if ids else empty for t, ids in found.items()}
        hops.append(last)
        # A hop that reaches no node outside the earlier hops ends the walk: every later hop's nodes are
        # neighbours of nodes already reached, so already reached (k = 10**12 on a 4-node cycle ran unbounded).
        if all(bool(torch.isin(ids, reached.get(t, empty)).all()) for t, ids in last.items()):
            break
        reached = {t: torch.unique(torch.cat([reached.get(t, empty), last.get(t, empty)])) for t in g.ntypes}
    kept, inverse = {}, {}
    for t in g.ntypes:
        kept[t], inverse[t] = torch.unique(torch.cat([h.get(t, empty) for h in hops]), return_inverse=True)
    from ._subgraph import node_subgraph

    sub = node_subgraph(g, kept, relabel_nodes=relabel_nodes, store_ids=store_ids)
    if output_device is not None:
        sub = sub.to(output_device)
    if not relabel_nodes:
        return sub
    device = torch.device(output_device) if output_device is not None else g.device
    seed_inverse = {t: inverse[t][:seeds[t].numel()].to(device) for t in seeds}
    return sub, (seed_inverse if typed else next(iter(seed_inverse.values())))


def khop_in_subgraph(graph: DGLGraph, nodes, k: int, *, relabel_nodes: bool = True, store_ids: bool = True,
                     output_device=None):
    """dgl.khop_in_subgraph: the subgraph induced by `nodes` (ids, or {ntype: ids}) and every node from which
    one of them is reached in at most k edges (all relations), by topograph.node_subgraph (the nodes of each
    type sorted by id, as DGL's). relabel_nodes: (subgraph, where each seed landed: a tensor, or {ntype: tensor}
    for nodes given as a dict); otherwise the subgraph alone, every node kept."""
    return _khop(graph, nodes, k, relabel_nodes, store_ids, output_device, inward=True)


def khop_out_subgraph(graph: DGLGraph, nodes, k: int, *, relabel_nodes: bool = True, store_ids: bool = True,
                      output_device=None):
    """dgl.khop_out_subgraph: as khop_in_subgraph, over the nodes reached from `nodes` in at most k edges."""
    return _khop(graph, nodes, k, relabel_nodes, store_ids, output_device, inward=False)


# DGLGraph's methods of the same names, as DGL's; set here to keep _graph.py small.
DGLGraph.khop_in_subgraph = lambda self, nodes, k, **kw: khop_in_subgraph(self, nodes, k, **kw)
DGLGraph.khop_out_subgraph = lambda self, nodes, k, **kw: khop_out_subgraph(self, nodes, k, **kw)


def compact_graphs(graphs, always_preserve=None, copy_ndata: bool = True, copy_edata: bool = True):
    """dgl.compact_graphs: the graphs (one, or a list of graphs with the same node types) relabelled onto one
    node set per type: always_preserve's nodes first (ids, or {ntype: ids}), then every node an edge of any of
    the graphs touches, in DGL's order of first appearance (graph by graph, relation by relation, its sources
    then its destinations); nodes touched by nothing are dropped. Each result keeps its edges in order, the kept
    nodes' features with NID (their old ids) and, with copy_edata, the edge features."""
    single = isinstance(graphs, DGLGraph)
    graphs = [graphs] if single else list(graphs)
    if not graphs:
        return []
    if graphs[0].is_block:
        raise DGLError("compact_graphs: blocks cannot be compacted")
    ntypes, idtype = graphs[0].ntypes, graphs[0].idtype
    for g in graphs[1:]:
        if g.ntypes != ntypes or g.idtype != idtype or g.device != graphs[0].device:
            raise DGLError(f"compact_graphs: every graph needs the node types {ntypes}, idtype {idtype} and device "
                           f"{graphs[0].device}; got {g.ntypes}, {g.idtype}, {g.device}")
    if always_preserve is not None and not isinstance(always_preserve, Mapping):
        if len(ntypes) > 1:
            raise DGLError("compact_graphs: always_preserve must be {ntype: ids} for a graph of several node types")
        always_preserve = {ntypes[0]: always_preserve}
    seen = {t: [torch.as_tensor((always_preserve or {}).get(t, []), dtype=torch.int64).cpu().reshape(-1)]
            for t in ntypes}
    for g in graphs:
        for (s, e, d) in g.canonical_etypes:
            u, v = g.edges(etype=(s, e, d))
            seen[s].append(u.cpu().to(torch.int64))
            seen[d].append(v.cpu().to(torch.int64))
    kept = {t: _first_occurrences(torch.cat(ids)) for t, ids in seen.items()}
    out = []
    for g in graphs:
        new_id = {}
        for t in ntypes:
            if kept[t].numel() and int(kept[t].max()) >= g.num_nodes(t):
                raise DGLError(f"compact_graphs: always_preserve holds node {int(kept[t].max())} of type {t!r}, "
                               f"which has {g.num_nodes(t)} nodes")
            new_id[t] = torch.full((g.num_nodes(t),), -1, dtype=torch.int64)
            new_id[t][kept[t]] = torch.arange(kept[t].numel())
        relations = g.canonical_etypes
        edges = []
        for (s, e, d) in relations:
            u, v = g.edges(etype=(s, e, d))
            edges.append((new_id[s][u.cpu().long()], new_id[d][v.cpu().long()]))
        new = _on_device(g, _plain(ntypes, relations, {t: kept[t].numel() for t in ntypes}, edges, idtype))
        if copy_ndata:
            for t in ntypes:
                ids = kept[t].to(g.device)
                new.nodes[t].data.update({k: x[ids] for k, x in g.nodes[t].data.items()})
                new.nodes[t].data[NID] = ids.to(idtype)  # the old ids, over any NID g had (as DGL's)
        if copy_edata:
            for c in relations:
                new.edges[c].data.update(dict(g.edges[c].data))
        out.append(new)
    return out[0] if single else out


def merge(graphs) -> DGLGraph:
    """dgl.merge: one graph with every graph's edges (per relation of the first graph, graph after graph, with
    their features named in the first graph), node counts the largest per type, and node features written graph
    after graph over rows 0..n-1 of each type (a later graph's rows win; a feature new to the merge starts at
    zeros), as DGL's."""
    from ._construct import heterograph

    graphs = list(graphs)
    if not graphs:
        raise DGLError("merge: the list of graphs is empty")
    ref = graphs[0]
    counts = {t: max(g.num_nodes(t) for g in graphs) for t in ref.ntypes}
    data = {c: tuple(torch.cat([g.edges(etype=c)[i].to(ref.device, ref.idtype) for g in graphs]) for i in (0, 1))
            for c in ref.canonical_etypes}
    merged = heterograph(data, num_nodes_dict=counts, idtype=ref.idtype, device=ref.device)
    for c in ref.canonical_etypes:
        for key in ref.edges[c].data.keys():
            missing = [i for i, g in enumerate(graphs) if key not in g.edges[c].data]
            if missing:
                raise DGLError(f"merge: edge feature {key!r} of {c} is on the first graph but not on graph "
                               f"{missing[0]}")
            merged.edges[c].data[key] = torch.cat([g.edges[c].data[key] for g in graphs])
    for g in graphs:
        for t in ref.ntypes:
            frame = merged.nodes[t].data
            for key, value in g.nodes[t].data.items():
                current = frame[key] if key in frame else value.new_zeros((counts[t],) + tuple(value.shape[1:]))
                frame[key] = torch.cat([value, current[value.shape[0]:]])
    return merged
