"""DGL's message passing on all or some edges and nodes, and its id queries, as DGLGraph methods (the class
MessagePassingVerbs, a base of DGLGraph): update_all, apply_edges, send_and_recv, pull, push, apply_nodes,
filter_nodes, filter_edges, edge_ids and has_nodes.

A verb on some edges runs message passing on a compute graph, as DGL does: a bipartite graph (a DGLBlock) of
those k edges alone, from their distinct sources to the receiving nodes, whose features are the verb's graph's
rows gathered when read. So a built-in stays one kernel over k edges (the other edges are not visited) and a UDF
sees only those edges; EdgeBatch.edges() and NodeBatch.nodes() give the ids of the graph the verb was called on.
The results go to the receiving rows (index_copy, out of place: differentiable in the old rows and the new);
the other rows keep their values, or hold 0 where the feature is new (DGL's zero initializer).

Which nodes receive, as in DGL 2.1: send_and_recv and push, the destinations of the edges (a node that gets no
message keeps its value); pull, every node named, one without in-edges getting 0 from any reducer (DGL's
documented rule; DGL 2.1 itself gives max / min's -inf / +inf there when another node pulled has in-edges).
Unlike DGL 2.1, pull and push count each node once when it is named twice (DGL sends its edges twice); an edge
named twice in send_and_recv does send twice, as in DGL.

On a graph of several relations with etype=None, update_all and apply_edges run on every relation at once
(topograph/_hetero_passing.py); the other verbs want the relation named (a DGLError naming the verb), as DGL 2.1.
"""
from __future__ import annotations

import numbers
from typing import Dict, Optional

import torch

from . import _C
from ._base import ALL, DGLError, DGLTypeError, id_tensor, is_all


def _mp():
    from . import _message_passing  # it builds on ops, which builds on _graph, which builds on this module

    return _message_passing


def _hp():
    from . import _hetero_passing  # it builds on _message_passing

    return _hetero_passing


def _several_relations(g, etype) -> bool:
    """Whether a verb called with `etype` runs on every relation of g at once (DGL 2.1's update_all and
    apply_edges with etype=None on a graph of several relations)."""
    return etype is None and len(g._g.canonical_etypes) > 1


def _relation_view(g, etype, what: str):
    """g when it has one relation, else g[etype] (which shares g's features); DGLError naming the verb when
    etype is None and g has several (DGL 2.1 wants the relation named there too)."""
    if _several_relations(g, etype):
        raise DGLError(f"{what}: the graph has {len(g.canonical_etypes)} relations {g.canonical_etypes}: name one "
                       f"(etype=...)")
    r = g._relation(etype)
    return g if len(g._g.canonical_etypes) == 1 else g[g.canonical_etypes[r]]


def _as_ids(x, what: str) -> torch.Tensor:
    """An id, ids (a tensor of any shape, a list, a numpy array) as a 1-D int64 tensor; DGLTypeError (a TypeError and a
    DGLError, as DGL 2.1's) for non-integers."""
    t = id_tensor([x] if isinstance(x, numbers.Number) else x)
    if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torch.bool:
        raise DGLTypeError(f"{what}: ids must be integers, got {t.dtype}")
    return t.reshape(-1).to(torch.int64)


def _sorted_edge_keys(g, r: int, num_dst: int):
    """Relation r's edges as sorted keys source * num_dst + destination [E] and their edge ids (ties by id), made
    once per graph object (its topology never changes): edge_ids then costs a binary search per pair."""
    cache = g.__dict__.setdefault("_sorted_edge_keys", {})
    if r not in cache:
        eu, ev = g._g.edges(r)
        cache[r] = torch.sort(eu.to(torch.int64) * num_dst + ev.to(torch.int64), stable=True)
    return cache[r]


def _edge_ids_of(g, r: int, u, v, what: str, all_matches: bool = False):
    """Edge ids of relation r from u[i] to v[i] (a single id on either side pairs with each of the other's): the
    lowest id of each pair (DGLError naming a pair that is no edge), or, with all_matches, (u, v, eid) of every
    edge between each pair, by pair then id (a pair that is no edge adds nothing). int64 tensors."""
    s, _, d = g._g.canonical_etypes[r]
    num_src, num_dst = g._g.num_nodes(g._g.ntype_id(s)), g._g.num_nodes(g._g.ntype_id(d))
    src = g._checked_ids(u, num_src, f"{what}: source node")
    dst = g._checked_ids(v, num_dst, f"{what}: destination node")
    if src.numel() != dst.numel():
        if 1 not in (src.numel(), dst.numel()):
            raise DGLError(f"{what}: {src.numel()} source ids but {dst.numel()} destination ids")
        src, dst = torch.broadcast_tensors(src, dst)
    keys, order = _sorted_edge_keys(g, r, num_dst)
    query = (src * num_dst + dst).to(keys.device)
    first = torch.searchsorted(keys, query)
    end = torch.searchsorted(keys, query, right=True)
    if not all_matches:
        missing = (first == end).nonzero().flatten()
        if missing.numel():
            i = int(missing[0])
            raise DGLError(f"{what}: ({int(src[i])}, {int(dst[i])}) is not an edge of {g.canonical_etypes[r]}")
        return order[first]
    counts = end - first
    pair = torch.repeat_interleave(torch.arange(query.numel(), device=keys.device), counts)  # [matches]
    within = torch.arange(pair.numel(), device=keys.device) - (torch.cumsum(counts, 0) - counts)[pair]
    return src.to(keys.device)[pair], dst.to(keys.device)[pair], order[first[pair] + within]


def _parse_edges(rel, edges, what: str) -> torch.Tensor:
    """int64 ids of `edges` in rel's one relation: ALL, an id, ids, or a tuple (sources, destinations)."""
    if is_all(edges):
        return torch.arange(rel.num_edges())
    if isinstance(edges, tuple):
        if len(edges) != 2:
            raise DGLError(f"{what}: edges as a tuple are (source ids, destination ids), got {len(edges)} items")
        return _edge_ids_of(rel, 0, edges[0], edges[1], what)
    return rel._checked_ids(edges, rel.num_edges(), f"{what}: edge")


def _compute_graph(rel, src: torch.Tensor, dst: torch.Tensor, eid: torch.Tensor,
                   receivers: Optional[torch.Tensor] = None):
    """The compute graph of rel's edges eid (src[i] -> dst[i], ids in rel): a DGLBlock from the distinct sources
    to `receivers` (sorted distinct ids holding every dst; by default the distinct dst), its edges in the order
    given, its features rel's rows gathered when read. Returns (block, receivers as int64)."""
    from ._block import DGLBlock

    mp = _mp()
    stored_src, _, stored_dst = rel._g.canonical_etypes[0]
    src_type, etype, dst_type = rel.canonical_etypes[0]
    sources, src_pos = torch.unique(src.to(torch.int64), return_inverse=True)
    if receivers is None:
        receivers, dst_pos = torch.unique(dst.to(torch.int64), return_inverse=True)
    else:
        dst_pos = torch.searchsorted(receivers, dst.to(torch.int64))
    idtype = rel.idtype
    host = lambda t: t.to(device="cpu", dtype=idtype).contiguous()  # noqa: E731 (the store copies host ids)
    src_side, dst_side = "SRC/" + src_type, "DST/" + dst_type  # DGLBlock's names: the two sides stay apart
    handle = _C.make_graph([(src_side, sources.numel()), (dst_side, receivers.numel())],
                           [((src_side, etype, dst_side), host(src_pos), host(dst_pos))])
    block = DGLBlock(handle)
    if rel.device.type != "cpu":
        block = block.to(rel.device)
    frames = mp.frames(block)
    frames[("n", src_side)] = mp.GatheredRows(mp.node_frame(rel, stored_src), sources)
    frames[("n", dst_side)] = mp.GatheredRows(mp.node_frame(rel, stored_dst), receivers)
    frames[("e", 0)] = mp.GatheredRows(mp.edge_frame(rel, 0), eid)
    block._parent_ids = (sources.to(idtype), receivers.to(idtype), eid.to(idtype))  # read by Edge/NodeBatch
    return block, receivers


def _write_rows(frame, ids: torch.Tensor, data: Dict[str, torch.Tensor], what: str) -> None:
    """Rows `ids` of frame get data {name: [len(ids), ...]}; the other rows keep theirs (0 in a new feature)."""
    for name, value in data.items():
        old = frame._data.get(name)
        if old is None:
            old = value.new_zeros((frame._rows(),) + tuple(value.shape[1:]))
        elif old.shape[1:] != value.shape[1:] or old.dtype != value.dtype:
            raise DGLError(f"{what}: feature {name!r} has {old.dtype} rows of shape {tuple(old.shape[1:])}; the new "
                           f"rows are {value.dtype} {tuple(value.shape[1:])}")
        frame[name] = old.index_copy(0, ids.to(old.device), value)


def _send(rel, src, dst, eid, receivers, message_func, reduce_func, apply_node_func, what: str) -> None:
    mp = _mp()
    block, receivers = _compute_graph(rel, src, dst, eid, receivers)
    out = mp.message_passing(block, message_func, reduce_func, apply_node_func)
    _write_rows(mp.node_frame(rel, rel._g.canonical_etypes[0][2]), receivers, out, what)


def _mask(result, count: int, what: str) -> torch.Tensor:
    if not (isinstance(result, torch.Tensor) and result.dtype == torch.bool and tuple(result.shape) == (count,)):
        got = f"{result.dtype} {tuple(result.shape)}" if isinstance(result, torch.Tensor) else type(result).__name__
        raise DGLError(f"{what}: the predicate must return a bool tensor of shape ({count},), got {got}")
    return result


class MessagePassingVerbs:
    """DGL's message-passing verbs and id queries; a base class of DGLGraph (topograph/_graph.py)."""

    def update_all(self, message_func, reduce_func, apply_node_func=None, etype=None) -> None:
        """Messages along every edge of the relation, reduced at each destination into dstdata (every destination:
        0 without in-edges, under any reducer); built-ins or UDFs (EdgeBatch -> {name: [E, ...]}, NodeBatch with
        .mailbox -> {name: [n, ...]}); then apply_node_func, whose output is stored instead, if given. With
        etype=None on a graph of several relations, as DGL 2.1: every relation, built-ins only, each destination
        type's relations combined by the reducer (topograph/_hetero_passing.py)."""
        if _several_relations(self, etype):
            _hp().update_all_relations(self, message_func, reduce_func, apply_node_func)
            return
        _mp().update_all(self if etype is None else _relation_view(self, etype, "update_all"), message_func,
                         reduce_func, apply_node_func)

    def apply_edges(self, func, edges=ALL, etype=None) -> None:
        """Per-edge values of a message function (a built-in, or a UDF over an EdgeBatch) into edata, on every edge
        or on `edges` (ids, or a tuple (sources, destinations)): the other edges keep their rows (0 in a new one).
        With etype=None on a graph of several relations, as DGL 2.1: a built-in on every edge of every relation."""
        if _several_relations(self, etype):
            _hp().apply_edges_relations(self, func, edges)
            return
        mp = _mp()
        rel = _relation_view(self, etype, "apply_edges")
        frame = mp.edge_frame(rel, 0)
        if is_all(edges):
            for name, value in mp.message_dict(rel, func).items():
                frame[name] = value
            return
        eid = _parse_edges(rel, edges, "apply_edges")
        if eid.numel():
            src, dst = rel.find_edges(eid)
            block, _ = _compute_graph(rel, src, dst, eid)
            _write_rows(frame, eid, mp.message_dict(block, func), "apply_edges")

    def send_and_recv(self, edges, message_func, reduce_func, apply_node_func=None, etype=None) -> None:
        """Messages along `edges` only (ids, a tuple (sources, destinations), or ALL, which DGL 2.1 does not take
        here), reduced at their destinations, then apply_node_func on those. As DGL 2.1: only those destinations'
        rows are written (a node that gets no message keeps its value; 0 where the feature is new), an edge named
        twice sends twice, no edges runs nothing. Ids out of range, or a pair that is no edge: DGLError naming it."""
        rel = _relation_view(self, etype, "send_and_recv")
        if is_all(edges) and rel.num_edges() == 0:
            return
        if is_all(edges) and apply_node_func is None:  # the relation itself is the compute graph: no gathers
            mp = _mp()
            receivers = (rel.in_degrees() > 0).nonzero().flatten().to(torch.int64)
            out = mp.message_passing(rel, message_func, reduce_func)
            _write_rows(mp.node_frame(rel, rel._g.canonical_etypes[0][2]), receivers,
                        {name: value.index_select(0, receivers.to(value.device)) for name, value in out.items()},
                        "send_and_recv")
            return
        eid = _parse_edges(rel, edges, "send_and_recv")
        if eid.numel() == 0:
            return
        src, dst = rel.find_edges(eid)
        _send(rel, src, dst, eid, None, message_func, reduce_func, apply_node_func, "send_and_recv")

    def pull(self, v, message_func, reduce_func, apply_node_func=None, etype=None) -> None:
        """Each node of v (an id or ids, each counted once) reduces the messages along all its in-edges, then
        apply_node_func on them; a node of v without in-edges gets 0 (DGL's documented rule, for every reducer),
        the nodes not in v keep their rows."""
        rel = _relation_view(self, etype, "pull")
        dst_type = rel._g.canonical_etypes[0][2]
        nodes = rel._checked_ids(v, rel._g.num_nodes(rel._g.ntype_id(dst_type)), "pull: v node")
        if nodes.numel() == 0:
            return
        receivers = torch.unique(nodes)
        src, dst, eid = rel.in_edges(receivers, form="all")
        _send(rel, src, dst, eid.to(torch.int64), receivers, message_func, reduce_func, apply_node_func, "pull")

    def push(self, u, message_func, reduce_func, apply_node_func=None, etype=None) -> None:
        """send_and_recv along every out-edge of the nodes u (an id or ids, each counted once)."""
        rel = _relation_view(self, etype, "push")
        src_type = rel._g.canonical_etypes[0][0]
        nodes = rel._checked_ids(u, rel._g.num_nodes(rel._g.ntype_id(src_type)), "push: u node")
        if nodes.numel() == 0:
            return
        src, dst, eid = rel.out_edges(torch.unique(nodes), form="all")
        if eid.numel():
            _send(rel, src, dst, eid.to(torch.int64), None, message_func, reduce_func, apply_node_func, "push")

    def apply_nodes(self, func, v=ALL, ntype: Optional[str] = None) -> None:
        """func(NodeBatch) -> {name: [n, ...]} over every node of the type, or the nodes v (in the order given),
        into their rows of the type's features (the other rows keep theirs, 0 where the feature is new)."""
        mp = _mp()
        frame = self.nodes[ntype].data
        rows = frame._rows()
        ids = torch.arange(rows) if is_all(v) else self._checked_ids(v, rows, "apply_nodes: v node")
        batch = mp.NodeBatch(frame, ids, reported=ids.to(self.idtype), ntype=self._ntype(ntype))
        out = mp.udf_output(func(batch), ids.numel(), "apply_nodes")
        if is_all(v):
            for name, value in out.items():
                frame[name] = value
        else:
            _write_rows(frame, ids, out, "apply_nodes")

    def filter_nodes(self, predicate, nodes=ALL, ntype: Optional[str] = None) -> torch.Tensor:
        """The nodes (of every node of the type, or of `nodes`, in that order) for which predicate(NodeBatch), a
        bool tensor [n], is True: ids of the graph's idtype."""
        mp = _mp()
        frame = self.nodes[ntype].data
        rows = frame._rows()
        ids = torch.arange(rows) if is_all(nodes) else self._checked_ids(nodes, rows, "filter_nodes: node")
        batch = mp.NodeBatch(frame, ids, reported=ids.to(self.idtype), ntype=self._ntype(ntype))
        keep = _mask(predicate(batch), ids.numel(), "filter_nodes")
        return ids[keep.cpu()].to(self.idtype)

    def filter_edges(self, predicate, edges=ALL, etype=None) -> torch.Tensor:
        """The edges (every edge, or `edges`: ids or a tuple (sources, destinations), in that order) for which
        predicate(EdgeBatch), a bool tensor [k], is True: edge ids of the graph's idtype."""
        mp = _mp()
        rel = _relation_view(self, etype, "filter_edges")
        eid = _parse_edges(rel, edges, "filter_edges")
        if is_all(edges):
            batch = mp.EdgeBatch(rel, *rel.all_edges())
        else:
            block, _ = _compute_graph(rel, *rel.find_edges(eid), eid)
            batch = mp.EdgeBatch(block, *block.all_edges())
        keep = _mask(predicate(batch), eid.numel(), "filter_edges")
        return eid[keep.cpu()].to(self.idtype)

    def edge_ids(self, u, v, return_uv: bool = False, etype=None):
        """The id of the edge u[i] -> v[i] for each pair (ints: an int; one id on either side pairs with each
        of the other's); a pair joined by several edges gives the lowest id (DGL: any of them). A pair that is no
        edge, or a node id out of range: DGLError naming it. return_uv: (u, v, eid) of every edge between each
        pair, by pair then edge id (pairs that are no edge add nothing). The graph's idtype."""
        r = self._relation(etype)
        if return_uv:
            return tuple(t.to(self.idtype) for t in _edge_ids_of(self, r, u, v, "edge_ids", all_matches=True))
        eid = _edge_ids_of(self, r, u, v, "edge_ids")
        both_ints = isinstance(u, numbers.Integral) and isinstance(v, numbers.Integral)
        return int(eid[0]) if both_ints else eid.to(self.idtype)

    def has_nodes(self, vid, ntype: Optional[str] = None):
        """Whether each id names a node of the type (a bool for an int, else a bool tensor); a negative id is a
        DGLError, as in DGL."""
        count = self.num_nodes(self._ntype(ntype))
        ids = _as_ids(vid, "has_nodes")
        if bool((ids < 0).any()):
            raise DGLError(f"has_nodes: node id {int(ids[ids < 0][0])} is negative")
        present = ids < count
        return bool(present[0]) if isinstance(vid, numbers.Integral) else present
