"""DGL's feature storage and message passing on a DGLGraph: ndata / edata / srcdata / dstdata,
update_all and apply_edges with dgl.function's built-ins, local_scope.

Built-ins are lowered as DGL lowers them, onto topograph.ops: a message from the source and the edge
(copy_u, copy_e, u_mul_e, ...) reduced by sum / max / min / mean is one gspmm; any other message (one that
reads the destination, or dot) is a gsddmm that forms the [E, ...] messages, then a gspmm copy_rhs.
For now: graphs with one relation, built-in functions only (user-defined functions and apply_node_func
raise NotImplementedError; topograph.ops composes anything else). Features belong to one DGLGraph object:
graphs derived from it (reverse, subgraphs, add_self_loop, batch) start without features.
"""
from __future__ import annotations

import contextlib
from collections.abc import MutableMapping
from typing import Callable, Dict, Iterator

import torch

from . import ops
from .function import BuiltinMessage, BuiltinReduce


class Frame(MutableMapping):
    """Named features of one node type or one relation: tensors of `rows` rows (checked on assignment)."""

    def __init__(self, rows: Callable[[], int], what: str):
        self._rows, self._what = rows, what
        self._data: Dict[str, torch.Tensor] = {}

    def __getitem__(self, name: str) -> torch.Tensor:
        try:
            return self._data[name]
        except KeyError:
            raise KeyError(f"{self._what} has no feature {name!r} (it has {sorted(self._data)})") from None

    def __setitem__(self, name: str, value: torch.Tensor) -> None:
        if not isinstance(value, torch.Tensor) or value.dim() == 0 or value.shape[0] != self._rows():
            shape = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
            raise ValueError(f"{self._what}[{name!r}]: expected a tensor of {self._rows()} rows, got {shape}")
        self._data[name] = value

    def __delitem__(self, name: str) -> None:
        del self._data[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"{self._what}({ {k: tuple(v.shape) for k, v in self._data.items()} })"


def frames(g) -> dict:
    """The graph's frames, made on first use: ('n', ntype) and ('e', relation index) -> Frame."""
    if not hasattr(g, "_frames"):
        g._frames = {}
    return g._frames


def node_frame(g, ntype: str) -> Frame:
    return frames(g).setdefault(("n", ntype), Frame(lambda: g.num_nodes(ntype), f"nodes of {ntype!r}"))


def edge_frame(g, relation: int) -> Frame:
    etype = g.canonical_etypes[relation]
    return frames(g).setdefault(("e", relation), Frame(lambda: g.num_edges(etype), f"edges of {etype}"))


def one_relation(g, what: str):
    """(src type, relation index, dst type) of a graph with one relation, the types as the store names them
    (a block's SRC/t and DST/t: its two sides keep separate features)."""
    if len(g.canonical_etypes) != 1:
        raise NotImplementedError(f"{what}: for now on graphs with one relation; this one has "
                                  f"{g.canonical_etypes} (use topograph.ops on g[etype])")
    s, _, d = g._g.canonical_etypes[0]
    return s, 0, d


def _operand(g, target: str, field: str) -> torch.Tensor:
    s, r, d = one_relation(g, "message passing")
    frame = node_frame(g, s) if target == "u" else node_frame(g, d) if target == "v" else edge_frame(g, r)
    return frame[field]


def _messages(g, msg: BuiltinMessage) -> torch.Tensor:
    """Per-edge messages [E, ...] of a built-in (a gsddmm)."""
    lhs = _operand(g, msg.lhs_target, msg.lhs_field)
    if msg.op == "copy_lhs":
        return ops.gsddmm(g, "copy_lhs", lhs, None, msg.lhs_target, msg.lhs_target)
    rhs = _operand(g, msg.rhs_target, msg.rhs_field)
    return ops.gsddmm(g, msg.op, lhs, rhs, msg.lhs_target, msg.rhs_target)


def _check_builtin(func, kind, what):
    if not isinstance(func, kind):
        raise NotImplementedError(f"{what}: only dgl.function built-ins (topograph.function) for now, got {func!r}")


def update_all(g, message_func, reduce_func, apply_node_func=None) -> None:
    _check_builtin(message_func, BuiltinMessage, "update_all")
    _check_builtin(reduce_func, BuiltinReduce, "update_all")
    if apply_node_func is not None:
        raise NotImplementedError("update_all: apply_node_func is not supported yet; apply it to the result")
    if message_func.out != reduce_func.msg:
        raise ValueError(f"update_all: the reducer reads message {reduce_func.msg!r}, "
                         f"the message function writes {message_func.out!r}")
    _, _, d = one_relation(g, "update_all")
    m, reduce = message_func, reduce_func.op
    if m.op == "copy_lhs" and m.lhs_target in "ue":
        x = _operand(g, m.lhs_target, m.lhs_field)
        out = ops.gspmm_zero_empty(g, "copy_lhs", reduce, x, None) if m.lhs_target == "u" else \
            ops.gspmm_zero_empty(g, "copy_rhs", reduce, None, x)
    elif m.op in ("add", "sub", "mul", "div") and (m.lhs_target, m.rhs_target) == ("u", "e"):
        out = ops.gspmm_zero_empty(g, m.op, reduce, _operand(g, "u", m.lhs_field), _operand(g, "e", m.rhs_field))
    elif m.op in ("add", "mul") and (m.lhs_target, m.rhs_target) == ("e", "u"):  # commutative: one gspmm too
        out = ops.gspmm_zero_empty(g, m.op, reduce, _operand(g, "u", m.rhs_field), _operand(g, "e", m.lhs_field))
    else:
        out = ops.gspmm_zero_empty(g, "copy_rhs", reduce, None, _messages(g, m))
    node_frame(g, d)[reduce_func.out] = out


def apply_edges(g, func, edges) -> None:
    _check_builtin(func, BuiltinMessage, "apply_edges")
    if not (isinstance(edges, str) and edges == "__ALL__"):
        raise NotImplementedError("apply_edges: only edges=ALL (every edge) for now")
    _, r, _ = one_relation(g, "apply_edges")
    edge_frame(g, r)[func.out] = _messages(g, func)


@contextlib.contextmanager
def local_scope(g):
    """Features set inside are dropped on exit and the ones replaced come back (DGL's local_scope)."""
    saved = {key: dict(frame._data) for key, frame in frames(g).items()}
    try:
        yield
    finally:
        for key, frame in frames(g).items():
            frame._data = dict(saved.get(key, {}))
