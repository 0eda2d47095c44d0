"""DGL's blocks (message-flow graphs): DGLBlock, to_block, create_block and block_to_graph.

A DGLBlock is a DGLGraph whose source and destination sides are node types of their own in the store: type
``t`` of the original graph is ``SRC/t`` on the source side and ``DST/t`` on the destination side (DGL's own
prefixes for naming one side of a block), so every op, which reads source rows from a relation's source type
and writes a row per node of its destination type, takes a block as it takes any graph. The public names
(ntypes, canonical_etypes, srcnodes[t], ...) are the original ones.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import List, Optional, Sequence

import torch

from . import _C
from ._base import DGLError
from ._graph import (EID, NID, CanonicalEType, DGLGraph, _NodeSpace, _TypedFeatures, _host_ids, _ids, _max_id, _mp,
                     metagraph_edges)

_SRC, _DST = "SRC/", "DST/"


class DGLBlock(DGLGraph):
    """A bipartite graph of source and destination nodes (DGL's block, message-flow graph), as to_block makes
    it. In the store, public node type ``t`` is ``SRC/t`` on the source side and ``DST/t`` on the destination
    side; queries take the public names (a bare type name means its source side, as in DGL, and the prefixed
    names are accepted too)."""

    is_block = True
    is_unibipartite = True  # sources and destinations are apart, even under the same type names

    @property
    def srctypes(self) -> List[str]:
        return [t[len(_SRC):] for t in self._g.ntypes if t.startswith(_SRC)]

    @property
    def dsttypes(self) -> List[str]:
        return [t[len(_DST):] for t in self._g.ntypes if t.startswith(_DST)]

    @property
    def ntypes(self) -> List[str]:
        src, dst = self.srctypes, self.dsttypes
        return src if src == dst else src + [t for t in dst if t not in src]

    @property
    def canonical_etypes(self) -> List[CanonicalEType]:
        return [(self._public_ntype(s), e, self._public_ntype(d)) for (s, e, d) in self._g.canonical_etypes]

    def num_nodes(self, ntype: Optional[str] = None) -> int:
        """Source plus destination nodes of every type when None; of ``ntype``'s source side otherwise (DGL's
        rule; name ``DST/t`` for the destination side, or use num_dst_nodes)."""
        if ntype is None:
            return self._g.total_num_nodes()
        return self._g.num_nodes(self._g.ntype_id(self._stored_ntype(ntype, "")))

    number_of_nodes = num_nodes

    def num_src_nodes(self, ntype: Optional[str] = None) -> int:
        types = self.srctypes if ntype is None else [ntype]
        return sum(self._g.num_nodes(self._g.ntype_id(self._stored_ntype(t, "src"))) for t in types)

    def num_dst_nodes(self, ntype: Optional[str] = None) -> int:
        types = self.dsttypes if ntype is None else [ntype]
        return sum(self._g.num_nodes(self._g.ntype_id(self._stored_ntype(t, "dst"))) for t in types)

    number_of_src_nodes = num_src_nodes
    number_of_dst_nodes = num_dst_nodes

    @property
    def ndata(self):
        raise DGLError("a block has source and destination nodes: use block.srcdata / block.dstdata (or "
                       "block.srcnodes[ntype].data / block.dstnodes[ntype].data)")

    @property
    def srcdata(self):
        """Features of the source nodes of the block's one source type [num_src_nodes, ...]; with several
        source types, {ntype: ...} as a heterograph's ndata (DGL's HeteroNodeDataView)."""
        return self._side_view(self.srcnodes, self.srctypes, "srcdata")

    @property
    def dstdata(self):
        """Features of the destination nodes [num_dst_nodes, ...]; {ntype: ...} with several types."""
        return self._side_view(self.dstnodes, self.dsttypes, "dstdata")

    @staticmethod
    def _side_view(space: _NodeSpace, types: List[str], what: str):
        if len(types) == 1:
            return space[types[0]].data
        return _TypedFeatures({t: space[t].data for t in types}, what, "node type")

    @property
    def srcnodes(self) -> _NodeSpace:
        return _NodeSpace(self, "src")

    @property
    def dstnodes(self) -> _NodeSpace:
        return _NodeSpace(self, "dst")

    def reverse(self, *args, **kwargs) -> "DGLGraph":
        raise NotImplementedError("reverse: not defined for a block (its destinations would become sources)")

    def batch_num_nodes(self, ntype: Optional[str] = None) -> torch.Tensor:
        return torch.tensor([self.num_nodes(ntype)], dtype=torch.int64)

    def __repr__(self) -> str:
        """DGL's text: one line for one relation; else four, the metagraph's types in the order DGL's block
        metagraph adds them (by relation, source then destination)."""
        if self.is_homogeneous:
            return (f"Block(num_src_nodes={self.num_src_nodes()}, num_dst_nodes={self.num_dst_nodes()}, "
                    f"num_edges={self.num_edges()})")
        src = {t: self.num_src_nodes(t) for t in self.srctypes}
        dst = {t: self.num_dst_nodes(t) for t in self.dsttypes}
        relations = self.canonical_etypes
        edges = {c: self.num_edges(c) for c in relations}
        meta = metagraph_edges(dict.fromkeys(t for s, _, d in relations for t in (s, d)), relations)
        return (f"Block(num_src_nodes={src},\n      num_dst_nodes={dst},\n      num_edges={edges},\n"
                f"      metagraph={meta})")

    def _stored_etype(self, etype: CanonicalEType) -> CanonicalEType:
        s, e, d = etype
        return self._stored_ntype(s, "src"), e, self._stored_ntype(d, "dst")

    def _stored_ntype(self, ntype: str, side: str) -> str:
        if ntype.startswith((_SRC, _DST)):
            return ntype
        stored = self._g.ntypes
        if side == "dst" or (side == "" and _SRC + ntype not in stored):
            return _DST + ntype
        return _SRC + ntype

    def _public_ntype(self, stored: str) -> str:
        return stored[len(_SRC):] if stored.startswith(_SRC) else stored[len(_DST):] if stored.startswith(_DST) else stored


def to_block(g: DGLGraph, dst_nodes=None, include_dst_in_src: bool = True, src_nodes=None) -> DGLBlock:
    """The block (DGL's message-flow graph) of every edge into ``dst_nodes``, as dgl.to_block.

    dst_nodes: ids (a graph with one node type) or {ntype: ids}; by default, per type, every node with an
    in-edge, sorted. They must include every node with an in-edge (ValueError naming one that is missing),
    so every edge is kept. The block's destination nodes of type t are dst_nodes[t] in the order given; its
    source nodes of type t are dst_nodes[t] first (include_dst_in_src), then the other sources of its edges in
    order of first appearance (relation by relation, edges by id); or, when
    ``src_nodes`` is given (ids or {ntype: ids}, as dst_nodes), exactly src_nodes[t] in the order given: it
    must hold every source of a kept edge, may hold more (sources without edges), and starts with
    dst_nodes[t] when include_dst_in_src (ValueError otherwise). Edges keep the graph's order (block edge k
    is edge k of its relation), as DGL 2.1's. Original ids: ``block.srcdata[topograph.NID]``,
    ``block.dstdata[topograph.NID]`` (``srcnodes[t].data`` / ``dstnodes[t].data`` with several types) and
    ``block.edata[topograph.EID]``; the graph's own node and edge features are carried over, gathered by them.
    Every op takes the block: source features are [num_src_nodes, ...], outputs [num_dst_nodes, ...]."""
    if not isinstance(g, DGLGraph):
        raise TypeError(f"to_block: expected a topograph graph, got {type(g).__name__}")
    if g.is_block:
        raise ValueError("to_block: the graph is already a block")
    idtype, types, relations = g.idtype, g.ntypes, g.canonical_etypes
    if dst_nodes is None:  # per type, every node with an in-edge, sorted
        edges = [g.all_edges(etype=c) for c in relations]
        dst = {t: torch.unique(torch.cat([v.to(torch.int64) for (_, _, d), (_, v) in zip(relations, edges) if d == t]
                                         or [torch.zeros(0, dtype=torch.int64)]))
               for t in types}
    else:
        dst = _block_nodes(g, dst_nodes, "dst_nodes")
    given = _block_nodes(g, src_nodes, "src_nodes") if src_nodes is not None else None
    # the core checks the ids and numbers the sources (graph/to_block.hpp): one pass over the kept edges
    host = lambda ids: ids.to(device="cpu", dtype=torch.int64).contiguous()  # noqa: E731
    sources, parts = g._g.to_block_parts([host(dst[t]) for t in types],
                                         [host(given[t]) for t in types] if given is not None else None,
                                         include_dst_in_src)
    src = dict(zip(types, sources))
    block_edges = [(eid, u, p) for u, p, eid in parts]  # (parent edge ids, source positions, dst positions)

    node_types = [(_SRC + t, src[t].numel()) for t in types] + [(_DST + t, dst[t].numel()) for t in types]
    stored_relations = [((_SRC + s, e, _DST + d), _host_ids(u, idtype), _host_ids(p, idtype))
                        for (s, e, d), (_, u, p) in zip(relations, block_edges)]
    block = DGLBlock(_C.make_graph(node_types, stored_relations))
    if g.device.type != "cpu":
        block = block.to(g.device)

    _carry_block_features(g, block, [src[t] for t in types], [dst[t] for t in types],
                          [eid for eid, _, _ in block_edges])
    return block


def _carry_block_features(g: DGLGraph, block: "DGLBlock", src: Sequence[torch.Tensor], dst: Sequence[torch.Tensor],
                          eids: Sequence[torch.Tensor]) -> None:
    """As DGL's blocks carry them: per node type (g's order), the original ids (NID) of the block's sources
    and destinations and g's node features gathered by them; per relation, the original edge ids (EID) and g's
    edge features gathered by them."""
    frames, idtype = _mp().frames(g), g.idtype
    for t, s_ids, d_ids in zip(g.ntypes, src, dst):
        for side, ids in ((block.srcnodes, s_ids), (block.dstnodes, d_ids)):
            frame = side[t].data
            for name, value in getattr(frames.get(("n", t)), "_data", {}).items():
                frame[name] = value[ids.to(value.device)]
            frame[NID] = ids.to(idtype)
    for r, eid in enumerate(eids):
        frame = block.edges[block.canonical_etypes[r]].data
        for name, value in getattr(frames.get(("e", r)), "_data", {}).items():
            frame[name] = value[eid.to(value.device)]
        frame[EID] = eid.to(idtype)


def _block_nodes(g: DGLGraph, nodes, what: str) -> dict:
    """to_block's dst_nodes / src_nodes (ids, or {ntype: ids}) as {ntype: int64 ids}, empty for a type not named."""
    types = g.ntypes
    if isinstance(nodes, Mapping):
        unknown = [t for t in nodes if t not in types]
        if unknown:
            raise ValueError(f"to_block: {what} names node type(s) {unknown}; the graph has {types}")
        return {t: _ids(nodes[t], f"to_block: {what}[{t!r}]").to(torch.int64) if t in nodes
                else torch.zeros(0, dtype=torch.int64) for t in types}
    if len(types) != 1:
        raise DGLError(f"to_block: the graph has node types {types}: give {what} as {{ntype: ids}}")
    return {types[0]: _ids(nodes, f"to_block: {what}").to(torch.int64)}


def create_block(data_dict, num_src_nodes=None, num_dst_nodes=None, idtype=None, device=None) -> DGLBlock:
    """dgl.create_block: a block from its edges. data_dict: (u, v) for one node type on each side (source ids u
    in [0, num_src_nodes), destination ids v in [0, num_dst_nodes), ints), or {(src type, etype, dst type): (u,
    v)} with num_src_nodes / num_dst_nodes {type: count} (a type named only there gets no edges); (u, v) may be
    any form topograph.graph takes (('coo' | 'csr' | 'csc', arrays) too). Counts left out are the largest id + 1
    (len(indptr) - 1 on a pointer's side). Ids, counts and formats are checked as topograph.heterograph does."""
    from ._construct import _graph_data, heterograph

    if not isinstance(data_dict, Mapping):
        data_dict = {("_N", "_E", "_N"): data_dict}
        num_src_nodes = None if num_src_nodes is None else {"_N": num_src_nodes}
        num_dst_nodes = None if num_dst_nodes is None else {"_N": num_dst_nodes}
    counts = {}
    for prefix, given in ((_SRC, num_src_nodes), (_DST, num_dst_nodes)):
        if given is not None and not isinstance(given, Mapping):
            raise ValueError(f"create_block: with relations named, num_src_nodes / num_dst_nodes must be {{type: "
                             f"count}}, got {given!r}")
        counts.update({prefix + t: int(n) for t, n in (given or {}).items()})
    stored = {(_SRC + s, e, _DST + d): data for (s, e, d), data in data_dict.items()}
    for (s, e, d), data in data_dict.items():  # counts left out: the largest id + 1 (a csr / csc pointer's)
        u, v, sources, destinations = _graph_data(data, f"create_block {(s, e, d)}")
        for t, ids, fixed in ((_SRC + s, u, sources), (_DST + d, v, destinations)):
            if t not in counts:
                counts[t] = fixed if fixed is not None else _max_id(ids)
    g = heterograph(stored, num_nodes_dict=counts, idtype=idtype, device=device)
    return DGLBlock(g._g)


def block_to_graph(block: DGLBlock) -> DGLGraph:
    """dgl.block_to_graph: the block as a graph whose source types are renamed `<type>_src` and destination
    types `<type>_dst`, same edges (same ids) and features (srcdata, dstdata, edata)."""
    from ._construct import heterograph

    if not isinstance(block, DGLBlock):
        raise TypeError(f"block_to_graph: expected a block, got {type(block).__name__}")
    counts = {t + "_src": block.num_src_nodes(t) for t in block.srctypes}
    counts.update({t + "_dst": block.num_dst_nodes(t) for t in block.dsttypes})
    relations = block.canonical_etypes
    g = heterograph({(s + "_src", e, d + "_dst"): block.edges(etype=(s, e, d)) for (s, e, d) in relations},
                    num_nodes_dict=counts, idtype=block.idtype, device=block.device)
    for t in block.srctypes:
        g.nodes[t + "_src"].data.update(dict(block.srcnodes[t].data))
    for t in block.dsttypes:
        g.nodes[t + "_dst"].data.update(dict(block.dstnodes[t].data))
    for (s, e, d) in relations:
        g.edges[(s + "_src", e, d + "_dst")].data.update(dict(block.edges[(s, e, d)].data))
    return g
