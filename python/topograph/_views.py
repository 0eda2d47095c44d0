"""DGL's views of a graph's features: g.nodes / g.edges (NodeView, EdgeView: ``g.nodes[ntype].data``, ``g.edges
[etype].data``, and called, the ids) and, on a graph of several node types or relations, g.ndata / g.edata /
g.srcdata / g.dstdata as DGL's HeteroNodeDataView / HeteroEdgeDataView ({type: tensor} per feature name). The
frames themselves (Frame: named tensors with their rows checked) are topograph/_message_passing.py's."""
from __future__ import annotations

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
        return repr({name: self[name] for name in self._names()})


class _Features:
    """``view[key].data``: the features of one node type or one relation (DGL's NodeSpace / EdgeSpace)."""

    def __init__(self, frame):
        self.data = frame


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
                raise ValueError(f"the graph has node types {types}: name one")
            ntype = types[0]
        return g._stored_ntype(ntype, self._side)

    def __getitem__(self, ntype: str) -> _Features:
        return _Features(_mp().node_frame(self._graph, self._stored(ntype)))

    def __call__(self, ntype: Optional[str] = None) -> torch.Tensor:
        return torch.arange(self._graph.num_nodes(self._stored(ntype)), dtype=self._graph.idtype)


class _EdgeSpace:
    """DGL's EdgeView: ``g.edges(form=, order=, etype=)`` (DGLGraph.all_edges), ``g.edges[etype].data``."""

    def __init__(self, g: "DGLGraph"):
        self._graph = g

    def __call__(self, form: str = "uv", order: str = "eid", etype=None):
        return self._graph.all_edges(form, order, etype)

    def __getitem__(self, etype) -> _Features:
        return _Features(_mp().edge_frame(self._graph, self._graph._relation(etype)))
