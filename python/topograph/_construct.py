"""The module-level functions that build a DGLGraph, under DGL's names: graph and heterograph from id pairs,
batch / unbatch (disjoint union and its inverse), edge_type_subgraph and reverse. The class is in _graph.py."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

import torch

from . import _C
from ._base import ALL, DGLError, DGLTypeError, count_arg
from ._graph import CanonicalEType, DGLGraph, EType, _host_ids, _ids, _idtype_of, _max_id, _mp
from ._segment import pointer_ids


def _graph_data(data, what: str):
    """One relation's edges in any of the forms dgl.graph / dgl.heterograph take, as (u, v, sources,
    destinations): u, v the edges' end ids in edge-id order; sources / destinations the node count an index
    pointer fixes on its side (len(indptr) - 1), None where nothing does. The forms:
      (u, v) or ('coo', (u, v));
      ('csr', (indptr [R + 1], indices [nnz], eids)): row r's edges go to indices[indptr[r]:indptr[r + 1]];
      ('csc', (indptr [C + 1], indices [nnz], eids)): column c's edges come from indices[indptr[c]:...];
    eids: empty (edge i is entry i) or a permutation of 0..nnz-1 (entry i is edge eids[i]), as DGL's.
    A list is a list of edges, [(u0, v0), (u1, v1), ...], as DGL reads one (its graphdata2tensors): only a
    tuple is (U, V), so [[0, 1], [2, 3]] is the edges 0 -> 1 and 2 -> 3."""
    if isinstance(data, list):
        if not all(isinstance(e, (tuple, list, torch.Tensor)) and len(e) == 2 for e in data):
            raise DGLError(f"{what}: a list is read as DGL reads one, a list of (src, dst) edge pairs; for "
                           f"(src ids, dst ids) pass a tuple")
        u = _ids([int(e[0]) for e in data], f"{what}: src")
        return u, _ids([int(e[1]) for e in data], f"{what}: dst"), None, None
    if not isinstance(data, tuple) or len(data) != 2:
        kind = type(data).__module__.split(".")[0]
        if kind in ("scipy", "networkx"):  # DGL's own message: dgl.graph left these to the from_* functions
            given = "a SciPy sparse matrix" if kind == "scipy" else "a NetworkX graph"
            raise DGLError(f"{what}: dgl.graph no longer takes {given}: use dgl.from_{kind}")
        raise DGLTypeError(f"{what}: data must be a pair (src ids, dst ids) or (format, arrays) with format 'coo', "
                        f"'csr' or 'csc'")
    if not isinstance(data[0], str):
        return _ids(data[0], f"{what}: src"), _ids(data[1], f"{what}: dst"), None, None
    fmt, arrays = data
    if fmt not in ("coo", "csr", "csc"):
        raise DGLError(f"{what}: unknown sparse format {fmt!r} (DGL's are 'coo', 'csr' and 'csc')")
    if fmt == "coo":
        if not isinstance(arrays, (tuple, list)) or len(arrays) != 2:
            raise DGLError(f"{what}: ('coo', arrays) needs arrays = (src ids, dst ids)")
        return _ids(arrays[0], f"{what}: src"), _ids(arrays[1], f"{what}: dst"), None, None
    if not isinstance(arrays, (tuple, list)) or len(arrays) != 3:
        raise DGLError(f"{what}: ({fmt!r}, arrays) needs arrays = (indptr, indices, edge ids; [] for 0..nnz-1)")
    indptr, indices = _ids(arrays[0], f"{what}: {fmt} indptr"), _ids(arrays[1], f"{what}: {fmt} indices")
    eids = arrays[2]  # empty: torch.tensor([]) is float32, which DGL takes too
    eids = _ids(eids, f"{what}: {fmt} edge ids") if len(eids) else torch.empty(0, dtype=torch.int64)
    nnz = indices.shape[0]
    lines = pointer_ids(indptr, nnz, f"{what}: {fmt}").to(indptr.dtype)  # each entry's row (csr) / column (csc)
    if eids.numel():
        seen = torch.zeros(nnz, dtype=torch.bool, device=indices.device)
        in_range = eids.numel() == nnz and bool(((eids >= 0) & (eids < nnz)).all())
        if in_range:
            seen[eids.long()] = True
        if not in_range or not bool(seen.all()):
            raise DGLError(f"{what}: {fmt} edge ids must be empty or a permutation of 0..{nnz - 1} (one per entry "
                           f"of indices), got {eids.numel()} ids")
        order = torch.empty_like(eids, dtype=torch.int64)
        order[eids.long()] = torch.arange(nnz, device=eids.device)  # edge id -> its entry
        lines, indices = lines[order], indices[order]
    if fmt == "csr":
        return lines, indices, indptr.numel() - 1, None
    return indices, lines, None, indptr.numel() - 1


def _check_same_dtype(u: torch.Tensor, v: torch.Tensor, idtype, what: str) -> None:
    """Without idtype, the two id tensors of a relation ((src, dst), or a csr / csc's indptr and indices) must
    have one dtype: DGL 2.1 raises DGLError for int32 with int64 (a list or numpy array is int64) rather than
    pick one; with idtype, both are cast to it, as there."""
    if idtype is None and u.dtype != v.dtype:
        raise DGLError(f"{what}: the id tensors have different dtypes, {u.dtype} and {v.dtype} (src and dst, or a "
                       f"csr / csc's indptr and indices); as DGL, give both one dtype or pass idtype= to cast them")


def _check_pointer_count(fixed, count: int, what: str, side: str) -> None:
    """A csr / csc relation's index pointer fixes its side's node count (DGL fails on any other)."""
    if fixed is not None and fixed != count:
        raise DGLError(f"{what}: the index pointer gives {fixed} {side} nodes (len(indptr) - 1) but the graph has "
                       f"{count}: as DGL, it must cover every node of that type")


def graph(data, num_nodes: Optional[int] = None, idtype=None, device=None, row_sorted: bool = False,
          col_sorted: bool = False) -> DGLGraph:
    """A one-type graph, as dgl.graph: node type '_N', edge type '_E'. data: (src ids, dst ids), ('coo', (src,
    dst)), ('csr', (indptr, indices, edge ids)), ('csc', ...) or a list of (src, dst) pairs, as DGL's
    (_graph_data).

    ``num_nodes`` defaults to the largest id + 1 (len(indptr) - 1 for csr / csc, which must then cover every
    node). Ids out of range or negative raise ValueError with Topograph's message (relation, position, value).

    row_sorted / col_sorted: DGL 2.1's hints that the COO is sorted by source / destination, which let DGL skip a
    sort; the graph is the same either way (the core sorts for its own formats), so they are accepted and unused."""
    u, v, sources, destinations = _graph_data(data, "graph")
    if u.shape[0] != v.shape[0]:
        raise DGLError(f"graph: {u.shape[0]} source ids but {v.shape[0]} destination ids")
    _check_same_dtype(u, v, idtype, "graph")
    dtype = _idtype_of((u, v), idtype)
    if num_nodes is None:
        n = max(_max_id(u), _max_id(v), sources or 0, destinations or 0)
    else:
        n = count_arg(num_nodes, "graph: num_nodes")
    _check_pointer_count(sources, n, "graph", "source")
    _check_pointer_count(destinations, n, "graph", "destination")
    handle = _C.make_graph([("_N", n)], [(("_N", "_E", "_N"), _host_ids(u, dtype), _host_ids(v, dtype))])
    g = DGLGraph(handle)
    return g if device is None or torch.device(device).type == "cpu" else g.to(device)


def heterograph(data_dict: Dict[CanonicalEType, tuple], num_nodes_dict: Optional[Dict[str, int]] = None,
                idtype=None, device=None) -> DGLGraph:
    """A graph of several node and edge types, as dgl.heterograph: {(src type, etype, dst type): data}, data in
    any form dgl.graph takes ((u, v), ('coo', ...), ('csr', ...), ('csc', ...): _graph_data).

    Node types and relations are sorted by name (DGL's order). A node type missing from num_nodes_dict gets
    the largest id that any relation gives it + 1 (or len(indptr) - 1 of a csr / csc relation, which must then
    cover every node of its type)."""
    rels, pointers = [], []
    for key, data in data_dict.items():
        if not (isinstance(key, tuple) and len(key) == 3 and all(isinstance(k, str) for k in key)):
            raise DGLTypeError(f"heterograph: relation keys are (src type, edge type, dst type), got {key!r}")
        u, v, sources, destinations = _graph_data(data, f"heterograph {key}")
        if u.shape[0] != v.shape[0]:
            raise DGLError(f"heterograph {key}: {u.shape[0]} source ids but {v.shape[0]} destination ids")
        _check_same_dtype(u, v, idtype, f"heterograph {key}")
        rels.append((key, u, v))
        pointers += [(key, key[0], sources, "source"), (key, key[2], destinations, "destination")]
    dtype = _idtype_of([t for _, u, v in rels for t in (u, v)], idtype)
    counts: Dict[str, int] = {}
    for (s, _, d), u, v in rels:
        counts[s] = max(counts.get(s, 0), _max_id(u))
        counts[d] = max(counts.get(d, 0), _max_id(v))
    for _, t, fixed, _ in pointers:
        counts[t] = max(counts[t], fixed or 0)
    for t, n in (num_nodes_dict or {}).items():
        counts[t] = count_arg(n, f"heterograph: num_nodes_dict[{t!r}]")
    for key, t, fixed, side in pointers:
        _check_pointer_count(fixed, counts[t], f"heterograph {key}", f"{side} ({t!r})")
    node_types = sorted(counts.items())
    relations = [(key, _host_ids(u, dtype), _host_ids(v, dtype)) for key, u, v in sorted(rels, key=lambda r: r[0])]
    g = DGLGraph(_C.make_graph(node_types, relations))
    return g if device is None or torch.device(device).type == "cpu" else g.to(device)


def batch(graphs: Sequence[DGLGraph], ndata=ALL, edata=ALL) -> DGLGraph:
    """Disjoint union, as dgl.batch: graph b's nodes and edges follow those of graphs 0..b-1, and so do their
    features (ndata / edata: ALL, which every member must hold alike, a list of names, or None)."""
    graphs = list(graphs)
    if not graphs:
        raise DGLError("batch: no graphs given")
    for g in graphs:
        if not isinstance(g, DGLGraph):
            raise TypeError(f"batch: expected topograph graphs, got {type(g).__name__}")
        if g.is_block:
            raise DGLError("batch: a block cannot be batched (as in DGL)")
    for name, keys in (("ndata", ndata), ("edata", edata)):
        if not (keys is None or keys == ALL or (isinstance(keys, (list, tuple)) and
                                                 all(isinstance(k, str) for k in keys))):
            raise DGLTypeError(f"batch: {name} must be ALL, a list of feature names or None, got {keys!r}")
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


def edge_type_subgraph(graph: DGLGraph, etypes: Sequence[EType], output_device=None) -> DGLGraph:
    """Only the named relations (names or canonical triples), in the order given, over the node types they
    touch in g's order (as DGL 2.1's); shares the structure (a block's subgraph is a block) and, as in DGL, the
    features: the subgraph's node frames are the graph's, its relations' edge frames those relations' (a
    feature set on either is seen by both). output_device: the subgraph on that device (features copied), as
    DGL's."""
    from ._slice import relation_view

    stored = graph._g.canonical_etypes
    kept = [graph._relation(e) for e in etypes]
    touched = {stored[r][0] for r in kept} | {stored[r][2] for r in kept}
    sub = relation_view(graph, kept, [t for t in graph._g.ntypes if t in touched])
    return sub if output_device is None else sub.to(output_device)


def reverse(g: DGLGraph, copy_ndata: bool = True, copy_edata: bool = False, *, share_ndata=None,
            share_edata=None) -> DGLGraph:
    """dgl.reverse, g.reverse (see DGLGraph.reverse); share_ndata / share_edata are DGL's old names of copy_ndata /
    copy_edata, which, as in DGL 2.1, override them with a warning."""
    return g.reverse(copy_ndata, copy_edata, share_ndata=share_ndata, share_edata=share_edata)


def _edge_type_subgraph_method(self, etypes, output_device=None):
    return edge_type_subgraph(self, etypes, output_device)


# g.edge_type_subgraph(etypes), as DGL's method; set here beside the function.
DGLGraph.edge_type_subgraph = _edge_type_subgraph_method


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
