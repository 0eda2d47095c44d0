"""DGL's relation slices, g[key] (DGLGraph.__getitem__), as DGL 2.1's: key an edge type name, a canonical
(source type, edge type, destination type), or such a triple with ':' for any type (g['user', :, 'item'],
g[:, 'follows', :]; a name alone is g[:, name, :]).

- One relation matched: its view, over only the relation's node types, as DGL's: [source type] when both ends
  are one type (a homogeneous graph), else [source type, destination type] (source first, whatever g's order;
  a block's view is a block of those two sides). Its features are g's (relation_view).
  edge_type_subgraph(g, etypes) is the same view of several relations, over the node types they touch in g's
  order (so edge_type_subgraph(g, ['plays']).ntypes is ['game', 'user'] where g['plays'].ntypes is ['user',
  'game'], as in DGL 2.1).
- Several: one relation merging them (DGL's flatten_relations), a new graph with features of its own:
  * source nodes: every node of each source type of a matched relation, type after type in g's type order,
    each type's by id; destination nodes likewise; one node type when both sides have the same types (a
    homogeneous graph), else two (a uni-bipartite one); a block's merge is a block;
  * names: the types' names sorted and joined by '+' ('A1+A2'), the edge type's from the matched relations'
    names alike (repeats kept: 'AB2+AB2');
  * edges: relation after relation in g's relation order, each by edge id;
  * features: per side, those every type with nodes holds, concatenated (one that several hold with other row
    shapes or dtypes is a DGLError, as DGL's), then ndata[NTYPE] (the type's index in g) and ndata[NID] (the
    id within the type), int64; on the edges likewise over the relations with edges, then edata[ETYPE] (the
    relation's index in g) and edata[EID] (the id within it), of g's idtype;
  * a batch becomes one graph, as DGL's.
- None: a DGLError naming the key and the relations there are.

A view shares g's relation arrays and format caches (the store's edge_type_subgraph over the kept node types
copies no edges), and g keeps the views' stores per (relations, node types) until its own store changes (an
in-place mutation), so hetero message passing, which takes g[relation] for every relation at every call
(HeteroGraphConv, multi_update_all), builds nothing after the first call.
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

import torch

from . import _C
from ._base import EID, ETYPE, NID, NTYPE, DGLError

_ANY = slice(None)  # ':' in g[s, :, d]


def relation_slice(g, key):
    """g[key] (this module's doc)."""
    triple = tuple(key) if isinstance(key, (tuple, list)) else (_ANY, key, _ANY)
    if len(triple) != 3:
        raise DGLError(f"g[{key!r}]: a relation slice is g['etype'] or g['srctype', 'etype', 'dsttype'], each name "
                       f"or ':' for any (e.g. g['user', :, 'item']); got {len(triple)} items")
    matched = [r for r, relation in enumerate(g.canonical_etypes)
               if all(_matches(part, name) for part, name in zip(triple, relation))]
    if not matched:
        raise DGLError(f"g[{key!r}]: no relation matches; the graph has {g.canonical_etypes}")
    if len(matched) == 1:
        s, _, d = g._g.canonical_etypes[matched[0]]
        return relation_view(g, matched, [s] if s == d else [s, d])
    return _merged(g, matched)


def relation_view(g, relations: Sequence[int], node_types: Sequence[str]):
    """g's relations `relations` (indices, in that order) over g's stored node types `node_types` (in that
    order; each relation's two among them): a graph of g's kind sharing g's structure and g's frames (a feature
    set on either is seen by both). The store is made once per (relations, node types) while g's is unchanged."""
    from ._graph import _mp

    views = g.__dict__.get("_views")
    if views is None or views[0] is not g._g:  # none yet, or g's store was replaced (add_nodes, ...)
        views = g._views = (g._g, {})
    key = (tuple(relations), tuple(node_types))
    handle = views[1].get(key)
    if handle is None:
        stored = g._g.canonical_etypes
        handle = views[1][key] = g._g.edge_type_subgraph([stored[r] for r in relations], list(node_types))
    view = g._derived(handle)
    mp = _mp()
    shared = mp.frames(view)
    for t in node_types:
        shared[("n", t)] = mp.node_frame(g, t)
    for i, r in enumerate(relations):
        shared[("e", i)] = mp.edge_frame(g, r)
    return view


def _matches(part, name: str) -> bool:
    return part == _ANY if isinstance(part, slice) else part == name


def _merged(g, relations: List[int]):
    """One relation merging g's relations `relations` (indices, in g's order), with its features."""
    from ._block import _DST, _SRC, DGLBlock
    from ._graph import DGLGraph, _host_ids, _mp

    stored = [tuple(c) for c in g._g.canonical_etypes]
    in_type_order = lambda types: sorted(set(types), key=g._g.ntype_id)  # noqa: E731
    src_types = in_type_order(stored[r][0] for r in relations)
    dst_types = in_type_order(stored[r][2] for r in relations)
    src_start, num_src = _starts(g, src_types)
    dst_start, num_dst = _starts(g, dst_types)
    sources, destinations = [], []
    for r in relations:
        u, v = g._g.edges(r)
        sources.append(u.to(torch.int64) + src_start[stored[r][0]])
        destinations.append(v.to(torch.int64) + dst_start[stored[r][2]])
    joined = lambda names: "+".join(sorted(names))  # noqa: E731 (DGL's combine_names)
    src_name, dst_name = (joined(g._public_ntype(t) for t in types) for types in (src_types, dst_types))
    etype = joined(g.canonical_etypes[r][1] for r in relations)
    if g.is_block:
        node_types = [(_SRC + src_name, num_src), (_DST + dst_name, num_dst)]
    elif src_types == dst_types:
        node_types = [(src_name, num_src)]
    else:
        node_types = [(src_name, num_src), (dst_name, num_dst)]
    new_src, new_dst = node_types[0][0], node_types[-1][0]
    u, v = torch.cat(sources), torch.cat(destinations)
    handle = _C.make_graph(node_types, [((new_src, etype, new_dst), _host_ids(u, g.idtype), _host_ids(v, g.idtype))])
    new = (DGLBlock if g.is_block else DGLGraph)(handle)
    if g.device.type != "cpu":
        new = new.to(g.device)
    mp = _mp()
    for side, types, frame in (("source", src_types, mp.node_frame(new, new_src)),
                               ("destination", dst_types, mp.node_frame(new, new_dst))):
        parts = [(repr(g._public_ntype(t)), mp.node_frame(g, t)) for t in types]
        for name, value in _common_features(parts, f"g[...]: the {side} nodes' feature").items():
            frame[name] = value
        counts = [g._g.num_nodes(g._g.ntype_id(t)) for t in types]
        frame[NTYPE] = each_repeated([g._g.ntype_id(t) for t in types], counts, torch.int64, g.device)
        frame[NID] = ids_within(counts, torch.int64, g.device)
    edges = mp.edge_frame(new, 0)
    parts = [(str(g.canonical_etypes[r]), mp.edge_frame(g, r)) for r in relations]
    for name, value in _common_features(parts, "g[...]: the edge feature").items():
        edges[name] = value
    counts = [g._g.num_edges(r) for r in relations]
    edges[ETYPE] = each_repeated(relations, counts, g.idtype, g.device)
    edges[EID] = ids_within(counts, g.idtype, g.device)
    return new


def _starts(g, types: Sequence[str]) -> Tuple[Dict[str, int], int]:
    """Where each type's nodes start when the types' nodes follow one another, and how many there are in all."""
    starts, total = {}, 0
    for t in types:
        starts[t] = total
        total += g._g.num_nodes(g._g.ntype_id(t))
    return starts, total


def _common_features(parts: List[Tuple[str, object]], what: str) -> Dict[str, torch.Tensor]:
    """DGL 2.1's combine_frames over [(type, frame)]: the features every frame with rows holds, concatenated in
    that order; going frame by frame, one held so far by all but with another row shape or dtype on the next
    is a DGLError naming both types."""
    with_rows = [(label, frame) for label, frame in parts if frame._rows() > 0]
    if not with_rows:
        return {}
    first_label, first = with_rows[0]
    schemes = {name: (first_label, tuple(v.shape[1:]), v.dtype) for name, v in first._data.items()}
    for label, frame in with_rows[1:]:
        for name, (held_by, shape, dtype) in list(schemes.items()):
            value = frame._data.get(name)
            if value is None:
                del schemes[name]
            elif (tuple(value.shape[1:]), value.dtype) != (shape, dtype):
                raise DGLError(f"{what} {name!r} is {dtype} {shape} per row on {held_by} but {value.dtype} "
                               f"{tuple(value.shape[1:])} on {label}: cannot concatenate it")
    return {name: torch.cat([frame._data[name] for _, frame in with_rows]) for name in schemes}


def each_repeated(values: Sequence[int], counts: Sequence[int], dtype, device) -> torch.Tensor:
    """values[i] repeated counts[i] times, one after another: [sum(counts)] (a type index per node or edge of
    types laid one after another; also to_homogeneous's)."""
    return torch.repeat_interleave(torch.tensor(list(values), dtype=dtype),
                                   torch.tensor(list(counts), dtype=torch.int64)).to(device)


def ids_within(counts: Sequence[int], dtype, device) -> torch.Tensor:
    """0..counts[i]-1 for each i, one after another: [sum(counts)] (each node's or edge's id within its type)."""
    return torch.cat([torch.arange(n, dtype=dtype) for n in counts] or [torch.zeros(0, dtype=dtype)]).to(device)
