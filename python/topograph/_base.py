"""The names every module shares, as dgl.base holds them: ALL, NID, EID, NTYPE, ETYPE and DGLError."""
from __future__ import annotations

import operator

import torch

ALL = "__ALL__"  # dgl.base.ALL: every node / edge
NID = "_ID"  # dgl.NID: the original node ids of a block's (or subgraph's) nodes, in srcdata / dstdata
EID = "_ID"  # dgl.EID: the original edge ids of a block's edges, in edata
NTYPE = "_TYPE"  # dgl.NTYPE: each node's type index, in to_homogeneous's ndata (to_heterogeneous reads it)
ETYPE = "_TYPE"  # dgl.ETYPE: each edge's relation index, in to_homogeneous's edata (RelGraphConv's etypes)


class DGLError(ValueError):
    """dgl.DGLError: bad graph ids or arguments (a node or edge id out of range, a pair that is no edge, an edge
    type to name). A ValueError, so that ``except ValueError`` catches it too (DGL's derives from Exception)."""


class DGLTypeError(DGLError, TypeError):
    """An argument of the wrong type where DGL 2.1 raises DGLError: float or bool node ids, an idtype other than
    torch.int32 / torch.int64, graph data that is no pair. Both a DGLError, so that a DGL script's
    ``except dgl.DGLError`` catches it, and a TypeError, as topograph raised it before (``except TypeError``)."""


class DGLKeyError(DGLError, KeyError):
    """An unknown option name where DGL 2.1 raises KeyError (GINConv's aggregator_type): a KeyError for the scripts
    that catch that, and a DGLError (ValueError) as topograph raised it before."""


class DGLRuntimeError(DGLError, RuntimeError):
    """A bad shape or argument where DGL 2.1 checks in C++ and so raises RuntimeError (dgl.sparse's operators):
    a RuntimeError for the scripts that catch that, and a DGLError (ValueError) as topograph raised it before."""


def id_tensor(x) -> torch.Tensor:
    """Ids as given (a tensor as it is; a list, a numpy array or a scalar converted keeping its kind of number, int64
    for integers and for an empty list), for the callers' dtype checks. Converting straight to int64 truncated
    floats: in_degrees([1.7]) answered for node 1 and find_edges([0.6]) for edge 0, where DGL 2.1 raises."""
    if isinstance(x, torch.Tensor):
        return x
    t = torch.as_tensor(x)
    integral = not (t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torch.bool)
    return t.to(torch.int64) if integral or t.numel() == 0 else t


def is_all(x) -> bool:
    return isinstance(x, str) and x == ALL


def count_arg(value, what: str, minimum: int = 0) -> int:
    """An integer argument (a count, k, num_nodes) as an int: Python and numpy ints and 0-d integer tensors; a bool,
    a float (2.5 was truncated to 2), a string or a value under `minimum` is a DGLError naming `what`."""
    try:
        n = None if isinstance(value, bool) else operator.index(value)
    except TypeError:
        n = None
    if n is None or n < minimum:
        raise DGLError(f"{what} must be an int >= {minimum}, got {value!r}")
    return n
