"""Graphs with DGL's names over Topograph's graph store (graph/heterograph.hpp).

A DGLGraph holds a ``topograph._C.HeteroGraph``: immutable topology (node types, relations, lazily built
CSR/CSC shared by copies, reverse() and subgraphs). Node ids are copied into the graph at construction, so
tensors the caller keeps writing cannot change it. Ids are int32 or int64 (``idtype``), as in DGL.

The module-level constructors (graph, heterograph, batch, unbatch, edge_type_subgraph, reverse) are in
_construct.py; blocks (DGLBlock, to_block) in _block.py; graph transforms (add_self_loop, to_bidirected, to_simple,
...) in _transform.py; the DGLGraph methods of the same names call them.

The feature views (g.nodes, g.edges, and ndata / edata as {type: tensor} on a graph of several types) are in
_views.py; relation slices (g[etype], g[s, :, d]) in _slice.py (g[etype] keeps the relation's node types only and
shares g's features, as DGL's). Difference from DGL: graphs live on the CPU unless the core was built with CUDA.
"""
from __future__ import annotations

import numbers
import warnings
from typing import Iterable, List, Optional, Tuple, Union

import torch

from . import _C
from ._base import ALL, EID, NID, DGLError, DGLTypeError, id_tensor  # noqa: F401 (EID, NID: imported from here elsewhere)
from ._slice import relation_slice
from ._verbs import MessagePassingVerbs
from ._views import _EdgeSpace, _NodeSpace, _TypedFeatures

CanonicalEType = Tuple[str, str, str]
EType = Union[str, CanonicalEType, None]

_ID_DTYPES = {"int32": torch.int32, "int64": torch.int64}


def _device_args(device) -> Tuple[str, int]:
    d = torch.device(device)
    return d.type, (d.index or 0)


def _ids(x, what: str) -> torch.Tensor:
    """A 1-D integer id tensor (lists and numpy arrays are converted; int64 unless already an int tensor)."""
    t = id_tensor(x)
    if t.dtype not in (torch.int32, torch.int64, torch.int16, torch.int8, torch.uint8):
        raise DGLTypeError(f"{what}: node ids must be an integer tensor, got {t.dtype}")
    if t.dim() != 1:
        raise DGLError(f"{what}: node ids must be 1-D, got shape {tuple(t.shape)}")
    return t


def _node_id(v, what: str) -> int:
    """One node id (an int, a numpy integer, or an integer tensor of one element) as an int. A float, a bool or a
    float tensor is a DGLTypeError, as DGL 2.1 raises for them (int(1.7) made it node 1)."""
    if not isinstance(v, torch.Tensor) and hasattr(v, "dtype") and hasattr(v, "shape"):  # a numpy array or scalar
        v = torch.as_tensor(v)
    if isinstance(v, torch.Tensor):
        if v.numel() == 1 and not (v.dtype.is_floating_point or v.dtype.is_complex or v.dtype == torch.bool):
            return int(v.reshape(()))
        raise DGLTypeError(f"{what}: expected one integer node id, got a tensor of {v.dtype} with shape "
                           f"{tuple(v.shape)}")
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise DGLTypeError(f"{what}: expected one integer node id, got {v!r}")
    return int(v)


def _idtype_of(tensors: Iterable[torch.Tensor], idtype) -> torch.dtype:
    if idtype is not None:
        if idtype not in (torch.int32, torch.int64):
            raise DGLTypeError(f"idtype must be torch.int32 or torch.int64, got {idtype}")
        return idtype
    ts = list(tensors)
    return torch.int32 if ts and all(t.dtype == torch.int32 for t in ts) else torch.int64


def _max_id(t: torch.Tensor) -> int:
    return int(t.max()) + 1 if t.numel() else 0


def metagraph_edges(node_order, relations) -> list:
    """DGL's printed metagraph, networkx's MultiDiGraph.edges(keys=True): (source type, destination type, edge
    type), by source in node_order, each source's destinations by first edge, then the keys."""
    meta = []
    for s in node_order:
        mine = [(d, e) for u, e, d in relations if u == s]
        for d in dict.fromkeys(d for d, _ in mine):
            meta += [(s, d, e) for dd, e in mine if dd == d]
    return meta


class DGLGraph(MessagePassingVerbs):
    """A (hetero)graph: DGL's query names over Topograph's store. Build with ``topograph.graph`` /
    ``topograph.heterograph`` / ``topograph.batch``. The verbs on some nodes or edges (apply_nodes, apply_edges,
    send_and_recv, pull, push, filter_nodes, filter_edges) and edge_ids / has_nodes are in _verbs.py."""

    is_block = False

    def __init__(self, handle=None, *args, **kwargs):
        """The package builds graphs from the core's store (handle). As DGL 2.1's deprecated constructor,
        DGLGraph() is an empty graph (nodes and edges then added in place) and DGLGraph((u, v)) is
        topograph.graph((u, v)), DGLGraph(networkx graph) dgl.from_networkx's and DGLGraph(scipy matrix)
        dgl.from_scipy's structure (DGL's graphdata2tensors; no features); DGL's other constructor arguments are
        accepted and ignored, as there."""
        if handle is None or not isinstance(handle, _C.HeteroGraph):
            from ._external import handle_of_graph_data

            handle = handle_of_graph_data(handle)
        self._g = handle

    # --- schema
    @property
    def ntypes(self) -> List[str]:
        return list(self._g.ntypes)

    @property
    def canonical_etypes(self) -> List[CanonicalEType]:
        return [tuple(c) for c in self._g.canonical_etypes]

    @property
    def etypes(self) -> List[str]:
        return [e for (_, e, _) in self.canonical_etypes]

    @property
    def srctypes(self) -> List[str]:
        """As DGL's: the source types of a uni-bipartite graph (no type both a source and a destination), else
        every node type a relation uses; in ntypes' order (g['plays'] is ['user'], g['follows'] ['user'])."""
        return self._side_types()[0]

    @property
    def dsttypes(self) -> List[str]:
        """As DGL's: the destination types of a uni-bipartite graph, else every node type a relation uses."""
        return self._side_types()[1]

    def _side_types(self) -> Tuple[List[str], List[str]]:
        src = {s for (s, _, _) in self.canonical_etypes}
        dst = {d for (_, _, d) in self.canonical_etypes}
        if src & dst:  # not uni-bipartite: both sides are every type
            src = dst = src | dst
        return [t for t in self.ntypes if t in src], [t for t in self.ntypes if t in dst]

    @property
    def idtype(self) -> torch.dtype:
        return _ID_DTYPES[self._g.idtype]

    @property
    def device(self) -> torch.device:
        return torch.device(self._g.device)

    @property
    def is_homogeneous(self) -> bool:
        return len(self.ntypes) == 1 and len(self.canonical_etypes) == 1

    def to_canonical_etype(self, etype: EType) -> CanonicalEType:
        return self.canonical_etypes[self._relation(etype)]

    def get_ntype_id(self, ntype: Optional[str]) -> int:
        """The index of ntype in self.ntypes (None: the one type), as DGL's."""
        name = self._ntype(ntype)
        if name not in self.ntypes:
            raise DGLError(f"node type {name!r} is not one of the graph's {self.ntypes}")
        return self.ntypes.index(name)

    def get_etype_id(self, etype: EType) -> int:
        """The index of etype (a name or a canonical triple; None: the one relation) in canonical_etypes."""
        return self._relation(etype)

    @property
    def is_multigraph(self) -> bool:
        """Whether some relation has two edges with the same source and destination (DGL's property)."""
        for r, (s, _, d) in enumerate(self.canonical_etypes):
            u, v = (t.to(torch.int64) for t in self._g.edges(r))
            if torch.unique(u * self.num_dst_nodes(d) + v).numel() < u.numel():
                return True
        return False

    def metagraph(self):
        """The node types and relations as a NetworkX MultiDiGraph (an edge per relation, keyed by its edge type
        name), as DGL's; needs networkx."""
        from ._external import _module

        nx = _module("networkx")
        meta = nx.MultiDiGraph()
        meta.add_nodes_from(self.ntypes)
        for s, e, d in self.canonical_etypes:
            meta.add_edge(s, d, key=e)
        return meta

    # --- sizes
    def num_nodes(self, ntype: Optional[str] = None) -> int:
        """Nodes of `ntype`; of every type together when None (as DGL)."""
        if ntype is None:
            return self._g.total_num_nodes()
        return self._g.num_nodes(self._g.ntype_id(ntype))

    def num_edges(self, etype: EType = None) -> int:
        """Edges of `etype`; of every relation together when None (as DGL)."""
        if etype is None:
            return self._g.total_num_edges()
        return self._g.num_edges(self._relation(etype))

    number_of_nodes = num_nodes
    number_of_edges = num_edges

    def num_src_nodes(self, ntype: Optional[str] = None) -> int:
        return self.num_nodes(ntype if ntype is not None else self.canonical_etypes[self._relation(None)][0])

    def num_dst_nodes(self, ntype: Optional[str] = None) -> int:
        return self.num_nodes(ntype if ntype is not None else self.canonical_etypes[self._relation(None)][2])

    number_of_src_nodes = num_src_nodes
    number_of_dst_nodes = num_dst_nodes

    # --- structure
    def in_degrees(self, v=ALL, etype: EType = None):
        """In-degrees of the relation's destination nodes: a tensor of idtype (an int for one node id)."""
        return self._select(self._g.in_degrees(self._relation(etype)), v)

    def out_degrees(self, u=ALL, etype: EType = None):
        """Out-degrees of the relation's source nodes: a tensor of idtype (an int for one node id)."""
        return self._select(self._g.out_degrees(self._relation(etype)), u)

    @property
    def edges(self) -> "_EdgeSpace":
        """``g.edges(form='uv', order='eid', etype=None)``: the relation's edges (all_edges); ``g.edges[etype]
        .data``: that relation's features (DGL's EdgeView)."""
        return _EdgeSpace(self)

    def all_edges(self, form: str = "uv", order: str = "eid", etype: EType = None):
        """The relation's edges: (src, dst) for form='uv', edge ids for 'eid', (src, dst, eid) for 'all';
        by edge id (order='eid') or sorted by (src, dst) (order='srcdst')."""
        src, dst = self._g.edges(self._relation(etype))
        eid = torch.arange(src.shape[0], dtype=src.dtype)
        if order == "srcdst":
            key = src.to(torch.int64) * (_max_id(dst) + 1) + dst.to(torch.int64)
            perm = torch.sort(key, stable=True).indices
            src, dst, eid = src[perm], dst[perm], eid[perm]
        elif order != "eid":
            raise DGLError(f"edges: order must be 'eid' or 'srcdst', got {order!r}")
        return self._form((src, dst, eid), form, "edges")

    def in_edges(self, v, form: str = "uv", etype: EType = None):
        """Edges into the nodes v (an id or ids), grouped by node in the order given: (src, dst) for form='uv',
        edge ids for 'eid', (src, dst, eid) for 'all'. Node ids are checked (ValueError)."""
        return self._form(self._g.in_edges(self._relation(etype), self._node_list(v)), form, "in_edges")

    def out_edges(self, u, form: str = "uv", etype: EType = None):
        """Edges out of the nodes u, as in_edges."""
        return self._form(self._g.out_edges(self._relation(etype), self._node_list(u)), form, "out_edges")

    def predecessors(self, v: int, etype: EType = None) -> torch.Tensor:
        """Sources of v's in-edges by edge id (a neighbour joined by k edges appears k times, as DGL)."""
        return self._g.predecessors(self._relation(etype), _node_id(v, "predecessors"))

    def successors(self, v: int, etype: EType = None) -> torch.Tensor:
        """Destinations of v's out-edges by edge id."""
        return self._g.successors(self._relation(etype), _node_id(v, "successors"))

    def has_edges_between(self, u, v, etype: EType = None):
        """Whether the relation has an edge u[i] -> v[i]: a bool for two ints, else a bool tensor (one id of
        either side, an int or a single id, pairs with each of the other's). Ids out of range: ValueError."""
        r = self._relation(etype)
        s, _, d = self._g.canonical_etypes[r]
        num_dst = self._g.num_nodes(self._g.ntype_id(d))
        src = self._checked_ids(u, self._g.num_nodes(self._g.ntype_id(s)), "has_edges_between: u")
        dst = self._checked_ids(v, num_dst, "has_edges_between: v")
        if src.numel() != dst.numel() and 1 not in (src.numel(), dst.numel()):
            raise DGLError(f"has_edges_between: {src.numel()} source ids but {dst.numel()} destination ids")
        eu, ev = self._g.edges(r)
        present = torch.isin((src * num_dst + dst).to(eu.device), eu.to(torch.int64) * num_dst + ev.to(torch.int64))
        both_ints = isinstance(u, numbers.Integral) and isinstance(v, numbers.Integral)
        return bool(present[0]) if both_ints else present

    def find_edges(self, eid, etype: EType = None) -> Tuple[torch.Tensor, torch.Tensor]:
        """(sources, destinations) of the edges eid (ids, or one int: tensors of one), idtype. Ids out of
        range: ValueError."""
        r = self._relation(etype)
        eu, ev = self._g.edges(r)
        ids = self._checked_ids(eid, eu.shape[0], "find_edges: edge").to(eu.device)
        return eu[ids], ev[ids]

    # --- features and message passing (topograph/_message_passing.py: one relation for now)
    @property
    def ndata(self):
        """Node features {name: [num_nodes, ...]} of the graph's one node type; with several, DGL's
        HeteroNodeDataView: ``g.ndata[name]`` is {ntype: tensor} over the types holding it and ``g.ndata[name] =
        {ntype: tensor}`` sets those types' rows (g.nodes[ntype].data is one type's)."""
        if len(self.ntypes) == 1:
            return _mp().node_frame(self, self.ntypes[0])
        return _TypedFeatures({t: _mp().node_frame(self, t) for t in self.ntypes}, "ndata", "node type")

    @property
    def srcdata(self):
        """Features of the source nodes: of the one source type (srctypes), else {ntype: ...} as ndata's."""
        return self._side_data(self.srctypes, "srcdata")

    @property
    def dstdata(self):
        """Features of the destination nodes: of the one destination type (dsttypes), else {ntype: ...}."""
        return self._side_data(self.dsttypes, "dstdata")

    def _side_data(self, types: List[str], what: str):
        if len(types) == 1:
            return _mp().node_frame(self, types[0])
        return _TypedFeatures({t: _mp().node_frame(self, t) for t in types}, what, "node type")

    @property
    def nodes(self) -> "_NodeSpace":
        """``g.nodes(ntype)``: the node ids; ``g.nodes[ntype].data``: that type's features (DGL's NodeView)."""
        return _NodeSpace(self, "")

    @property
    def srcnodes(self) -> "_NodeSpace":
        return _NodeSpace(self, "")

    @property
    def dstnodes(self) -> "_NodeSpace":
        return _NodeSpace(self, "")

    @property
    def edata(self):
        """Edge features {name: [num_edges, ...]} (by edge id) of the graph's one relation; with several, DGL's
        HeteroEdgeDataView: ``g.edata[name]`` is {canonical etype: tensor} over the relations holding it and
        ``g.edata[name] = {etype: tensor}`` (names or canonical triples) sets them."""
        relations = self.canonical_etypes
        if len(relations) == 1:
            return _mp().edge_frame(self, 0)
        return _TypedFeatures({c: _mp().edge_frame(self, r) for r, c in enumerate(relations)}, "edata", "relation",
                              self.to_canonical_etype)

    def multi_update_all(self, etype_dict, cross_reducer: str, apply_node_func=None) -> None:
        """update_all per relation, {etype: (message_func, reduce_func[, apply_node_func])}, then per node type
        the relations' results combined by cross_reducer ("sum", "mean", "max", "min": elementwise over the
        relations, a node without in-edges of one counting that relation's zeros, as DGL; "stack": [N,
        relations, ...] in the graph's relation order), then apply_node_func on every type that received."""
        from ._hetero_passing import multi_update_all

        multi_update_all(self, etype_dict, cross_reducer, apply_node_func)

    def local_scope(self):
        return _mp().local_scope(self)

    def formats(self, formats=None):
        """DGL's formats(): with no argument, {'created': [...], 'not created': [...]} over 'coo', 'csr' and 'csc'
        (the COO is always kept; CSR and CSC are built on first use, and copy_u summed or averaged builds them
        without edge ids). With formats named, DGL returns a graph restricted to them; here every format stays
        available and is built only when used, so the graph itself is returned (an unknown name is an error)."""
        if formats is not None:
            names = [formats] if isinstance(formats, str) else list(formats)
            unknown = [f for f in names if f not in ("coo", "csr", "csc", "any")]
            if unknown:
                raise DGLError(f"formats: unknown format(s) {unknown}; known: 'coo', 'csr', 'csc', 'any'")
            return self
        built = [self._g.built_formats(r) for r in range(len(self._g.canonical_etypes))]
        created = ["coo"] + [name for i, name in ((0, "csr"), (1, "csc")) if built and all(b[i] for b in built)]
        return {"created": created, "not created": [f for f in ("coo", "csr", "csc") if f not in created]}

    def create_formats_(self) -> None:
        """Builds every relation's CSR and CSC (with edge ids) now, as DGL's create_formats_ (a script calls it
        before forking data-loader workers, so that they share the formats instead of each building them)."""
        self._g.create_formats()

    def reverse(self, copy_ndata: bool = True, copy_edata: bool = False, *, share_ndata=None,
                share_edata=None) -> "DGLGraph":
        """Every relation (A, e, B) becomes (B, e, A), same edge ids; shares the structure (no copy). As DGL's,
        the node features come along (the same tensors) and, with copy_edata, the edge features. share_ndata /
        share_edata: DGL's old names of copy_ndata / copy_edata, overriding them with a warning as DGL 2.1's."""
        if share_ndata is not None:
            warnings.warn("share_ndata argument has been renamed to copy_ndata.")
            copy_ndata = share_ndata
        if share_edata is not None:
            warnings.warn("share_edata argument has been renamed to copy_edata.")
            copy_edata = share_edata
        new = self._derived(self._g.reverse())
        if copy_ndata:
            _mp().carry_node_features(self, new)
        if copy_edata:
            old = [tuple(c) for c in self._g.canonical_etypes]
            _mp().carry_edge_features(self, new, [old.index((d, e, s)) for s, e, d in new._g.canonical_etypes])
        return new

    def __getitem__(self, key) -> "DGLGraph":
        """DGL's relation slice (_slice.py): g[etype], g['user', :, 'item'] (':' for any type): one relation's view
        (its features g's), or the relations matched merged into a new graph."""
        return relation_slice(self, key)

    def subgraph(self, nodes, *, relabel_nodes: bool = True, store_ids: bool = True,
                  output_device=None) -> "DGLGraph":
        """topograph.node_subgraph(self, nodes, ...), as DGLGraph.subgraph."""
        from ._subgraph import node_subgraph

        return node_subgraph(self, nodes, relabel_nodes=relabel_nodes, store_ids=store_ids,
                             output_device=output_device)

    def edge_subgraph(self, edges, *, relabel_nodes: bool = True, store_ids: bool = True,
                      output_device=None) -> "DGLGraph":
        """topograph.edge_subgraph(self, edges, ...), as DGLGraph.edge_subgraph."""
        from ._subgraph import edge_subgraph

        return edge_subgraph(self, edges, relabel_nodes=relabel_nodes, store_ids=store_ids,
                             output_device=output_device)

    def add_self_loop(self, edge_feat_names=None, fill_data=1.0, etype: EType = None) -> "DGLGraph":
        """topograph.add_self_loop(self, ...), as DGLGraph.add_self_loop."""
        from ._transform import add_self_loop

        return add_self_loop(self, edge_feat_names, fill_data, etype)

    def remove_self_loop(self, etype: EType = None) -> "DGLGraph":
        """topograph.remove_self_loop(self, etype), as DGLGraph.remove_self_loop."""
        from ._transform import remove_self_loop

        return remove_self_loop(self, etype)

    def remove_edges(self, eids, etype: EType = None, store_ids: bool = False) -> None:
        """In place, as DGLGraph.remove_edges: the graph becomes topograph.remove_edges(self, eids, etype,
        store_ids) (its structure is immutable, so it takes the new one's, and the new one's features; views
        taken before, such as g[etype], keep the old graph)."""
        from ._transform import remove_edges

        self._become(remove_edges(self, eids, etype, store_ids))

    def add_nodes(self, num: int, data=None, ntype: Optional[str] = None) -> None:
        """In place, as DGLGraph.add_nodes: the graph becomes topograph.add_nodes(self, num, data, ntype) (its
        structure and features; views taken before keep the old graph; a batch becomes one graph, as DGL's)."""
        from ._mutation import add_nodes

        self._become(add_nodes(self, num, data, ntype))

    def add_edges(self, u, v, data=None, etype: EType = None) -> None:
        """In place, as DGLGraph.add_edges: the graph becomes topograph.add_edges(self, u, v, data, etype)."""
        from ._mutation import add_edges

        self._become(add_edges(self, u, v, data, etype))

    def remove_nodes(self, nids, ntype: Optional[str] = None, store_ids: bool = False) -> None:
        """In place, as DGLGraph.remove_nodes: the graph becomes topograph.remove_nodes(self, nids, ntype,
        store_ids)."""
        from ._mutation import remove_nodes

        self._become(remove_nodes(self, nids, ntype, store_ids))

    def _become(self, new: "DGLGraph") -> None:
        self._g, self._frames = new._g, _mp().frames(new)

    def to_simple(self, return_counts="count", writeback_mapping: bool = False, copy_ndata: bool = True,
                  copy_edata: bool = False, aggregator: str = "arbitrary"):
        """topograph.to_simple(self, ...), as DGLGraph.to_simple."""
        from ._transform import to_simple

        return to_simple(self, return_counts, writeback_mapping, copy_ndata, copy_edata, aggregator)

    def to(self, device, **kwargs) -> "DGLGraph":
        """The graph and its features on `device` (as DGL's to); kwargs go to each feature's Tensor.to, as DGL
        2.1's (non_blocking=True, copy=True, ...)."""
        new = self._derived(self._g.to(*_device_args(device)))
        target = torch.device(new.device) if not isinstance(new.device, torch.device) else new.device
        move = lambda value: value.to(target, **kwargs)  # noqa: E731
        _mp().carry_node_features(self, new, move)
        _mp().carry_edge_features(self, new, range(len(self._g.canonical_etypes)), move=move)
        return new

    def cpu(self) -> "DGLGraph":
        return self.to("cpu")

    def clone(self) -> "DGLGraph":
        """As DGL's clone: the same structure (shared: it is immutable) and feature dicts of its own over the same
        tensors, so features set on either are not seen by the other."""
        new = self._derived(self._g)
        _mp().carry_node_features(self, new)
        _mp().carry_edge_features(self, new, range(len(self._g.canonical_etypes)))
        return new

    def local_var(self) -> "DGLGraph":
        """DGL's local_var, the idiom before local_scope: clone's graph (the same structure and feature tensors,
        feature dicts of its own), so a feature set on it inside a function is not seen by the caller's graph."""
        return self.clone()

    @property
    def is_unibipartite(self) -> bool:
        """As DGL's: no node type is both a relation's source and a relation's destination (a block always is)."""
        return not ({s for (s, _, _) in self.canonical_etypes} & {d for (_, _, d) in self.canonical_etypes})

    def astype(self, idtype) -> "DGLGraph":
        """The graph with ids of `idtype` (torch.int32 or torch.int64), as DGL's astype: itself when it has them
        already, else a new graph (a block for a block) with the same edges, batch and features (the same
        tensors; ndata[NID] / edata[EID] keep their dtype, as DGL's)."""
        from ._pickle import reduce_graph, restore_graph

        if idtype not in (torch.int32, torch.int64):
            raise DGLError(f"astype: idtype must be torch.int32 or torch.int64, got {idtype}")
        if idtype == self.idtype:
            return self
        _, (types, relations, nodes, edge_counts, edges, features, device, is_block) = reduce_graph(self)
        edges = [(u.to(idtype), v.to(idtype)) for u, v in edges]
        return restore_graph(types, relations, nodes, edge_counts, edges, features, device, is_block)

    def int(self) -> "DGLGraph":
        """astype(torch.int32), as DGL's (its examples run `g = g.int().to(device)`)."""
        return self.astype(torch.int32)

    def long(self) -> "DGLGraph":
        """astype(torch.int64), as DGL's."""
        return self.astype(torch.int64)

    # --- batches
    @property
    def batch_size(self) -> int:
        return self._g.batch_size

    # in the graph's idtype, as DGL 2.1 keeps them (a script may compare or concatenate them with its ids)
    def batch_num_nodes(self, ntype: Optional[str] = None) -> torch.Tensor:
        return torch.tensor(self._g.batch_num_nodes(self._g.ntype_id(self._ntype(ntype))), dtype=self.idtype)

    def batch_num_edges(self, etype: EType = None) -> torch.Tensor:
        return torch.tensor(self._g.batch_num_edges(self._relation(etype)), dtype=self.idtype)

    def __reduce__(self):
        """Pickled as the types, edges, batch, device and features that rebuild it (_pickle.py), as DGL's graphs
        pickle: GraphDataLoader's worker processes send their batches back so."""
        from ._pickle import reduce_graph

        return reduce_graph(self)

    def __repr__(self) -> str:
        """DGL's text: one type, the counts and each feature's Scheme; several, the counts per type and the
        metagraph's edges (source type, destination type, edge type) in networkx's order, as DGL prints them."""
        if self.is_homogeneous:
            from ._schemes import edge_attr_schemes, node_attr_schemes

            return (f"Graph(num_nodes={self.num_nodes()}, num_edges={self.num_edges()},\n"
                    f"      ndata_schemes={node_attr_schemes(self)}\n      edata_schemes={edge_attr_schemes(self)})")
        nodes = {t: self.num_nodes(t) for t in self.ntypes}
        edges = {c: self.num_edges(c) for c in self.canonical_etypes}
        meta = metagraph_edges(self.ntypes, self.canonical_etypes)
        return f"Graph(num_nodes={nodes},\n      num_edges={edges},\n      metagraph={meta})"

    # --- helpers
    def _relation(self, etype: EType) -> int:
        """The relation index of `etype` (a name, a canonical triple, or None when there is one relation)."""
        if etype is None:
            n = len(self.canonical_etypes)
            if n != 1:
                raise DGLError(f"the graph has {n} relations {self.canonical_etypes}: name one (etype=...), "
                                 f"or take g[etype]")
            return 0
        return self._g.relation_id(self._stored_etype(tuple(etype)) if isinstance(etype, (tuple, list)) else etype)

    # The store's names of node types and relations: the public ones, except in a block (DGLBlock).
    def _stored_etype(self, etype: CanonicalEType) -> CanonicalEType:
        return etype

    def _stored_ntype(self, ntype: str, side: str) -> str:
        """The store's node type of public type `ntype` on `side` ('' either, 'src' or 'dst')."""
        return ntype

    def _public_ntype(self, stored: str) -> str:
        return stored

    def _derived(self, handle: "_C.HeteroGraph") -> "DGLGraph":
        """A graph of the same kind over a handle derived from this one (reverse, subgraph, device copy)."""
        return type(self)(handle)

    def _ntype(self, ntype: Optional[str]) -> str:
        if ntype is not None:
            return ntype
        if len(self.ntypes) != 1:
            raise DGLError(f"the graph has node types {self.ntypes}: name one (ntype=...)")
        return self.ntypes[0]

    @staticmethod
    def _checked_ids(ids, count: int, what: str) -> torch.Tensor:
        """An id, or ids, as a 1-D int64 tensor, each in [0, count) (ValueError naming the first that is not)."""
        if isinstance(ids, numbers.Integral):
            t = torch.tensor([int(ids)])
        elif isinstance(ids, torch.Tensor):  # a 0-d tensor is one id; an empty one of any dtype, none
            t = _ids(ids.reshape(-1) if ids.numel() else ids.reshape(0).to(torch.int64), what)
        else:
            t = _ids(ids, what)
        t = t.to(torch.int64)
        bad = (t < 0) | (t >= count)
        if bool(bad.any()):
            raise DGLError(f"{what} id {int(t[bad][0])} out of range [0, {count})")
        return t

    @staticmethod
    def _node_list(nodes) -> List[int]:
        return [int(nodes)] if isinstance(nodes, int) else _ids(nodes, "node ids").tolist()

    @staticmethod
    def _form(src_dst_eid, form: str, what: str):
        src, dst, eid = src_dst_eid
        if form == "uv":
            return src, dst
        if form == "eid":
            return eid
        if form == "all":
            return src, dst, eid
        raise DGLError(f"{what}: form must be 'uv', 'eid' or 'all', got {form!r}")

    @staticmethod
    def _select(values: torch.Tensor, nodes):
        if isinstance(nodes, str) and nodes == ALL:
            return values
        if isinstance(nodes, int):
            if not 0 <= nodes < values.shape[0]:
                raise DGLError(f"node id {nodes} out of range [0, {values.shape[0]})")
            return int(values[nodes])
        ids = _ids(nodes, "node ids").to(torch.int64)
        bad = (ids < 0) | (ids >= values.shape[0])
        if bool(bad.any()):
            raise DGLError(f"node id {int(ids[bad][0])} out of range [0, {values.shape[0]})")
        return values[ids]


def _mp():
    from . import _message_passing  # it builds on ops, which builds on this module

    return _message_passing


def _host_ids(t: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    # The graph copies its ids (it is immutable); a contiguous CPU tensor of the id dtype is read directly.
    # An int64 id past int32's range would wrap in the cast (2**31 became -2**31, then "not a valid node id").
    if dtype == torch.int32 and t.dtype == torch.int64 and t.numel():
        lo, hi = int(t.min()), int(t.max())
        if hi > _ID_MAX[torch.int32] or lo < -_ID_MAX[torch.int32] - 1:
            bad = hi if hi > _ID_MAX[torch.int32] else lo
            raise ValueError(f"node id {bad} does not fit idtype torch.int32 (use torch.int64)")
    return t.to(device="cpu", dtype=dtype).contiguous()


_ID_MAX = {torch.int32: 2**31 - 1, torch.int64: 2**63 - 1}  # the largest id of each idtype
