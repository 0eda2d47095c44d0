"""dgl.function's built-in message and reduce functions, for DGLGraph.update_all / apply_edges.

They are descriptors only: update_all maps a built-in message + reducer onto one gspmm (messages from the
source and the edge) or a gsddmm then a gspmm (messages reading the destination, or dot), exactly as DGL
lowers them; no message is computed in Python.

    import topograph.function as fn
    g.update_all(fn.u_mul_e("h", "a", "m"), fn.sum("m", "h"))
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class BuiltinMessage:
    op: str  # a gsddmm op: add, sub, mul, div, dot, copy_lhs
    lhs_target: str  # u, v or e
    lhs_field: str
    rhs_target: Optional[str]
    rhs_field: Optional[str]
    out: str


@dataclass(frozen=True)
class BuiltinReduce:
    op: str  # sum, max, min, mean
    msg: str
    out: str


def copy_u(u: str, out: str) -> BuiltinMessage:
    return BuiltinMessage("copy_lhs", "u", u, None, None, out)


def copy_e(e: str, out: str) -> BuiltinMessage:
    return BuiltinMessage("copy_lhs", "e", e, None, None, out)


def copy_v(v: str, out: str) -> BuiltinMessage:
    return BuiltinMessage("copy_lhs", "v", v, None, None, out)


copy_src, copy_edge = copy_u, copy_e  # DGL's older names


def _binary(lhs: str, op: str, rhs: str):
    def message(lhs_field: str, rhs_field: str, out: str) -> BuiltinMessage:
        return BuiltinMessage(op, lhs, lhs_field, rhs, rhs_field, out)

    message.__name__ = message.__qualname__ = f"{lhs}_{op}_{rhs}"
    return message


def _reducer(op: str):
    def reduce(msg: str, out: str) -> BuiltinReduce:
        return BuiltinReduce(op, msg, out)

    reduce.__name__ = reduce.__qualname__ = op
    return reduce


__all__ = ["copy_u", "copy_e", "copy_v", "copy_src", "copy_edge", "sum", "max", "min", "mean"]
for _lhs, _rhs in itertools.permutations("uve", 2):
    for _op in ["add", "sub", "mul", "div", "dot"]:
        globals()[f"{_lhs}_{_op}_{_rhs}"] = _binary(_lhs, _op, _rhs)
        __all__.append(f"{_lhs}_{_op}_{_rhs}")
sum = _reducer("sum")  # noqa: A001 (DGL's names)
max = _reducer("max")  # noqa: A001
min = _reducer("min")  # noqa: A001
mean = _reducer("mean")
