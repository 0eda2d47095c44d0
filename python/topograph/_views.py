"""DGL's views of a graph's features: g.nodes / g.edges (NodeView, EdgeView: ``g.nodes[ntype].data``, ``g.edges
[etype].data``, and called, the ids) and, on a graph of several node types or relations, g.ndata / g.edata /
g.srcdata / g.dstdata as DGL's HeteroNodeDataView / HeteroEdgeDataView ({type: tensor} per feature name). The
frames themselves (Frame: named tensors with their rows checked) are topograph/_message_passing.py's."""
from __future__ import annotations

import collections
from collections.abc import Mapping, MutableMapping
from typing import TYPE_CHECKING, List, Optional

import torch

from ._base import DGLError

if TYPE_CHECKING:
    from ._graph import DGLGraph


def _mp():
    from . import _message_passing  # it builds on ops, which builds on _graph, which builds on this module

    return _message_passing


class _TypedFeatures(MutableMapping):
    """DGL's HeteroNodeDataView / HeteroEdgeDataView, for a graph of several node types (relations): ``view[name]``
    is {type: tensor} over the types whose frame holds `name` ({} when none does, as DGL's); ``view[name] = {type:
    tensor}`` writes each type's frame (rows checked there), a lone tensor being a DGLError (which type?);
    ``del view[name]`` drops it wherever it is; iterating gives every name some type holds."""

    def __init__(self, frames: dict, what: str, kind: str, resolve=None):
        self._frames, self._what, self._kind, self._resolve = frames, what, kind, resolve

    def _frame(self, key):
        resolved = self._resolve(key) if self._resolve is not None else key
        if resolved not in self._frames:
            raise DGLError(f"{self._what}: no {self._kind} {key!r}; the graph has {list(self._frames)}")
        return self._frames[resolved]

    def __getitem__(self, name: str) -> dict:
        return {key: frame[name] for key, frame in self._frames.items() if name in frame}

    def __setitem__(self, name: str, value) -> None:
        if not isinstance(value, Mapping):
            raise DGLError(f"{self._what}[{name!r}]: the graph has several {self._kind}s {list(self._frames)}: "
                           f"assign {{{self._kind}: tensor}}, or one type's via g.nodes[ntype].data / "
                           f"g.edges[etype].data")
        for key, tensor in value.items():
            self._frame(key)[name] = tensor

    def __delitem__(self, name: str) -> None:
        for frame in self._frames.values():
            if name in frame:
                del frame[name]

    def _names(self) -> List[str]:
        return list(dict.fromkeys(name for frame in self._frames.values() for name in frame))

    def __iter__(self):
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __repr__(self) -> str:
        # DGL's text: HeteroNodeDataView's repr is a defaultdict(dict) {name: {type: tensor}}
        return repr(collections.defaultdict(dict, {name: self[name] for name in self._names()}))


class _Features:
    """``view[key].data``: the features of one node type or one relation (DGL's NodeSpace / EdgeSpace)."""

    def __init__(self, frame):
        self.data = frame


class _RowFeatures(MutableMapping):
    """DGL's NodeDataView / EdgeDataView over some ids (``g.nodes[ids].data``, ``g.edges[eids].data``): a name
    reads those rows; writing sets them, out of place (index_copy: autograd sees both), a name new to the frame
    starting as zeros elsewhere, as DGL's frame initializer; deleting is refused (a subset has no own column)."""

    def __init__(self, frame, ids: torch.Tensor, what: str):
        self._frame, self._ids, self._what = frame, ids, what

    def __getitem__(self, name: str) -> torch.Tensor:
        column = self._frame[name]
        return column[self._ids.to(column.device)]

    def __setitem__(self, name: str, value) -> None:
        if not isinstance(value, torch.Tensor):
            raise DGLError(f"{self._what}[{name!r}]: expected a tensor, got {type(value).__name__}")
        if value.dim() == 0 or value.shape[0] != self._ids.numel():
            raise DGLError(f"{self._what}[{name!r}]: expected a tensor of {self._ids.numel()} rows (one per id), "
                           f"got shape {tuple(value.shape)}")
        ids = self._ids.to(value.device)
        if name in self._frame:
            column = self._frame[name]
            if column.shape[1:] != value.shape[1:] or column.dtype != value.dtype:
                raise DGLError(f"{self._what}[{name!r}]: the feature is {column.dtype} {tuple(column.shape[1:])} a "
                               f"row, the value {value.dtype} {tuple(value.shape[1:])}")
            self._frame[name] = column.index_copy(0, ids.to(column.device), value.to(column.device))
        else:
            rows = self._frame._rows()
            zeros = torch.zeros((rows,) + tuple(value.shape[1:]), dtype=value.dtype, device=value.device)
            self._frame[name] = zeros.index_copy(0, ids, value)

    def __delitem__(self, name: str) -> None:
        raise DGLError(f"{self._what}: deleting {name!r} from a subset of the rows is not supported (as in DGL); "
                       "delete it from g.ndata / g.edata")

    def __iter__(self):
        return iter(self._frame)

    def __len__(self) -> int:
        return len(self._frame)

    def __contains__(self, name) -> bool:
        return name in self._frame

    def __repr__(self) -> str:
        return repr({name: self[name] for name in self._frame})  # DGL's: those rows of each feature


class _NodeSpace:
    """DGL's NodeView: ``g.nodes(ntype)`` gives the ids 0..n-1, ``g.nodes[ntype].data`` the features; a block's
    srcnodes / dstnodes are its source / destination side (`side` 'src' / 'dst'; '' for a graph's nodes)."""

    def __init__(self, g: "DGLGraph", side: str):
        self._graph, self._side = g, side

    def _stored(self, ntype: Optional[str]) -> str:
        g = self._graph
        if ntype is None:
            types = g.srctypes if self._side == "src" else g.dsttypes if self._side == "dst" else g.ntypes
            if len(types) != 1:
                raise DGLError(f"the graph has node types {types}: name one")
            ntype = types[0]
        stored = g._stored_ntype(ntype, self._side)
        if stored not in g._g.ntypes:  # as DGL's; else a frame made for a mistyped name reads as empty
            side = {"src": "source ", "dst": "destination "}.get(self._side, "")
            types = g.srctypes if self._side == "src" else g.dsttypes if self._side == "dst" else g.ntypes
            raise DGLError(f"unknown {side}node type {ntype!r} (node types: {', '.join(types)})")
        return stored

    def __getitem__(self, key) -> _Features:
        # DGL's keys: a node type (or None, or the full slice ':'), some node ids of the one node type, or
        # (ids, node type).
        ids, ntype = None, key
        if isinstance(key, slice):
            if key != slice(None):
                raise DGLError(f"g.nodes[{key!r}]: only the full slice ':' is supported (as in DGL)")
            ntype = None
        elif isinstance(key, tuple):
            ids, ntype = key
        elif key is not None and not isinstance(key, str):
            ids, ntype = key, None
        stored = self._stored(ntype)
        frame = _mp().node_frame(self._graph, stored)
        if ids is None:
            return _Features(frame)
        what = f"g.nodes[ids{'' if ntype is None else ', ' + repr(ntype)}].data"
        return _Features(_RowFeatures(frame, self._graph._checked_ids(ids, self._graph.num_nodes(stored), what),
                                      what))

    def __call__(self, ntype: Optional[str] = None) -> torch.Tensor:
        return torch.arange(self._graph.num_nodes(self._stored(ntype)), dtype=self._graph.idtype)


class _EdgeSpace:
    """DGL's EdgeView: ``g.edges(form=, order=, etype=)`` (DGLGraph.all_edges), ``g.edges[etype].data``."""

    def __init__(self, g: "DGLGraph"):
        self._graph = g

    def __call__(self, form: str = "uv", order: str = "eid", etype=None):
        return self._graph.all_edges(form, order, etype)

    def __getitem__(self, key) -> _Features:
        # DGL's keys: a relation (a name, a canonical triple, None or ':'), some edge ids of the one relation, or
        # the edges between (u, v) ids.
        g = self._graph
        if isinstance(key, slice):
            if key != slice(None):
                raise DGLError(f"g.edges[{key!r}]: only the full slice ':' is supported (as in DGL)")
            key = None
        if key is None or isinstance(key, str) or (isinstance(key, tuple) and len(key) == 3):
            return _Features(_mp().edge_frame(g, g._relation(key)))
        relation = g._relation(None)
        frame = _mp().edge_frame(g, relation)
        if isinstance(key, tuple) and len(key) == 2:  # (u, v): the edges between them, as g.edge_ids
            eids = g.edge_ids(*key)
        else:
            eids = g._checked_ids(key, g.num_edges(), "g.edges[ids].data")
        return _Features(_RowFeatures(frame, torch.as_tensor(eids).reshape(-1).to(torch.int64), "g.edges[ids].data"))
