"""DGLGraph's small descriptive methods, as DGL 2.1's: node_attr_schemes / edge_attr_schemes (each feature's row
shape and dtype), get_ntype_id_from_src / get_ntype_id_from_dst (a block numbers its source types, then its
destination types), and is_pinned / pin_memory_ / unpin_memory_ (Topograph never pins a graph's host memory:
a graph goes to the GPU with g.to('cuda'), which copies it)."""
from __future__ import annotations

from collections import namedtuple
from typing import Optional

from ._base import DGLError
from ._graph import DGLGraph, EType

Scheme = namedtuple("Scheme", ["shape", "dtype"])  # dgl.frame.Scheme: a feature's row shape and dtype


def node_attr_schemes(g: DGLGraph, ntype: Optional[str] = None) -> dict:
    """{feature name: Scheme(row shape, dtype)} of node type ntype (None: the one type)."""
    return {name: Scheme(tuple(value.shape[1:]), value.dtype) for name, value in g.nodes[ntype].data.items()}


def edge_attr_schemes(g: DGLGraph, etype: EType = None) -> dict:
    """{feature name: Scheme(row shape, dtype)} of relation etype (None: the one relation)."""
    return {name: Scheme(tuple(value.shape[1:]), value.dtype) for name, value in g.edges[etype].data.items()}


def get_ntype_id_from_src(g: DGLGraph, ntype: str) -> int:
    """The id of source node type ntype: its index among g.srctypes (a graph's srctypes are its ntypes)."""
    if ntype not in g.srctypes:
        raise DGLError(f"get_ntype_id_from_src: {ntype!r} is not a source node type ({g.srctypes})")
    return g.srctypes.index(ntype)


def get_ntype_id_from_dst(g: DGLGraph, ntype: str) -> int:
    """The id of destination node type ntype: on a block len(srctypes) + its index among dsttypes (DGL numbers
    a block's types sources first), on a graph its index among ntypes."""
    if ntype not in g.dsttypes:
        raise DGLError(f"get_ntype_id_from_dst: {ntype!r} is not a destination node type ({g.dsttypes})")
    return (len(g.srctypes) if g.is_block else 0) + g.dsttypes.index(ntype)


def is_pinned(g: DGLGraph) -> bool:
    """False: Topograph does not pin a graph's host memory."""
    return False


def pin_memory_(g: DGLGraph):
    raise DGLError("pin_memory_: Topograph does not pin a graph's host memory; move the graph with g.to('cuda') "
                   "(one copy of its structure and features) and sample on the GPU")


def unpin_memory_(g: DGLGraph) -> DGLGraph:
    """Nothing is pinned, so nothing to undo (DGL's returns the graph too)."""
    return g


for _f in (node_attr_schemes, edge_attr_schemes, get_ntype_id_from_src, get_ntype_id_from_dst, is_pinned,
           pin_memory_, unpin_memory_):
    setattr(DGLGraph, _f.__name__, _f)
