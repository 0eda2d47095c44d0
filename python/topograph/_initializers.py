"""DGLGraph.set_n_initializer / set_e_initializer, which older scripts call with dgl.init.zero_initializer:
topograph fills the rows of a feature that an update does not reach with zeros, which is that initializer;
another one is a DGLError. (The old DGLGraph methods DGL 1.0 removed, add_edge, edge_id, has_node,
has_edge_between, in_degree, out_degree, is_readonly, stay absent here too.)"""
from __future__ import annotations

from ._base import DGLError
from ._graph import DGLGraph
from .init import zero_initializer


def _check_initializer(initializer, what: str) -> None:
    if initializer is not zero_initializer:
        raise DGLError(f"{what}: topograph fills the rows an update does not reach with zeros, which is "
                       f"dgl.init.zero_initializer; another initializer ({initializer!r}) is not supported")


# DGL 2.1's parameters: (initializer, field=None, ntype=None) and (initializer, field=None, etype=None); zeros are
# what every field of every type gets, so field and type only select where the one supported initializer goes.
def set_n_initializer(g: DGLGraph, initializer, field=None, ntype=None) -> None:
    _check_initializer(initializer, "set_n_initializer")


def set_e_initializer(g: DGLGraph, initializer, field=None, etype=None) -> None:
    _check_initializer(initializer, "set_e_initializer")


DGLGraph.set_n_initializer = set_n_initializer
DGLGraph.set_e_initializer = set_e_initializer
