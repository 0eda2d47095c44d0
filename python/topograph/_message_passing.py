"""DGL's feature storage and message passing on a DGLGraph: ndata / edata / srcdata / dstdata,
update_all and the messages of apply_edges with dgl.function's built-ins or user-defined functions, local_scope.

Built-ins are lowered as DGL lowers them, onto topograph.ops: a message from the source and the edge
(copy_u, copy_e, u_mul_e, ...) reduced by sum / max / min / mean is one gspmm; any other message (one that
reads the destination, or dot) is a gsddmm that forms the [E, ...] messages, then a gspmm copy_rhs.

User-defined functions (UDFs) run in Python over torch ops, as DGL runs them, and so are as differentiable
as the torch code in them (and slower than the built-ins, which are one kernel each):
  message   f(edges) -> {name: [E, ...]}, edges an EdgeBatch: edges.src[name] / edges.dst[name] (the source's /
            destination's row of every edge, gathered when read), edges.data[name] (edge features), edges.edges()
  reduce    f(nodes) -> {name: [n, ...]}, nodes a NodeBatch: nodes.mailbox[name] [n, degree, ...] (the
            messages into each node, by edge id), nodes.data[name], nodes.nodes(); called once per distinct
            in-degree (DGL's degree buckets), never for nodes without in-edges (they get 0; when no node has
            one, nothing is written, as in DGL)
  apply     apply_node_func(nodes) -> {name: [num_dst, ...]} over every destination node, after the reduce;
            nodes.data holds the reduce's outputs and the node's features, and what it returns is stored
            instead of the reduce's outputs (as in DGL)
A built-in message with a UDF reducer, or a UDF message with a built-in reducer, mix as in DGL.
Everything here runs on one relation. The same on some edges or nodes (send_and_recv, pull, push, apply_edges
on ids) runs message_passing on a compute graph: topograph/_verbs.py; over several relations at once
(multi_update_all, update_all / apply_edges with etype=None) it runs per relation: topograph/_hetero_passing.py.
"""
from __future__ import annotations

import contextlib
from collections.abc import Mapping, MutableMapping
from typing import Callable, Dict, Iterator, Optional

import torch

from . import ops
from ._base import DGLError, DGLTypeError
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
            # DGL's DGLError (a ValueError here too), so `except dgl.DGLError` catches it as in DGL
            raise DGLError(f"{self._what}[{name!r}]: expected a tensor of {self._rows()} rows, got {shape}")
        self._data[name] = value

    def __delitem__(self, name: str) -> None:
        del self._data[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return repr(dict(self._data))  # DGL's: print(g.ndata) shows the {name: tensor} dict


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


def carry_node_features(g, new, move=None, node_ids=None) -> None:
    """new's node types (by stored name) get g's node features: the same tensors, or move(tensor), or, for a
    type in node_ids ({type: ids}), the rows of those ids in g (a subgraph's)."""
    old = frames(g)
    for t in new._g.ntypes:
        frame = old.get(("n", t))
        if frame is not None:
            target = node_frame(new, t)
            ids = node_ids.get(t) if node_ids else None
            for name, value in frame._data.items():
                value = value.index_select(0, ids.to(value.device)) if ids is not None else value
                target[name] = move(value) if move is not None else value


def carry_edge_features(g, new, relations, edge_ids=None, fill: float = 1.0, move=None) -> None:
    """new's relation i gets the edge features of g's relation relations[i] (None: none); edge_ids[i], if
    given, is each new edge's id in g ([new edges], -1 for an edge g lacks: a row of `fill`, DGL's fill_data)."""
    old = frames(g)
    for i, r in enumerate(relations):
        frame = old.get(("e", r)) if r is not None else None
        if frame is None:
            continue
        target = edge_frame(new, i)
        ids = edge_ids[i] if edge_ids is not None else None
        for name, value in frame._data.items():
            if ids is not None:
                value = _gather_rows(value, ids, fill)
            target[name] = move(value) if move is not None else value


def _gather_rows(value: torch.Tensor, ids: torch.Tensor, fill: float) -> torch.Tensor:
    """value[ids] with rows of `fill` where ids is -1 (differentiable in value)."""
    ids = ids.to(value.device)
    keep = ids >= 0
    if bool(keep.all()):
        return value.index_select(0, ids)
    out = torch.full((ids.numel(), *value.shape[1:]), fill, dtype=value.dtype, device=value.device)
    return out.index_copy(0, keep.nonzero().flatten(), value.index_select(0, ids[keep]))


def batch_features(graphs, new, ndata, edata) -> None:
    """dgl.batch's features: per node type (relation), the members' features concatenated in batch order;
    ndata / edata: ALL (every feature, which every member with nodes (edges) of that type must hold alike),
    a list of names, or None. Members without nodes (edges) of a type are not asked for its features."""
    for what, keys in (("n", ndata), ("e", edata)):
        if keys is None:
            continue
        kinds = new._g.ntypes if what == "n" else range(len(new._g.canonical_etypes))
        for kind in kinds:
            rows = [(g.num_nodes(kind) if what == "n" else g.num_edges(g.canonical_etypes[kind])) for g in graphs]
            members = [b for b, n in enumerate(rows) if n > 0] or list(range(len(graphs)))
            data = [frames(graphs[b]).get((what, kind)) for b in members]
            data = [dict(f._data) if f is not None else {} for f in data]
            label = f"nodes[{kind!r}].data" if what == "n" else f"edges[{new.canonical_etypes[kind]}].data"
            names = list(data[0]) if keys == "__ALL__" else list(keys)
            for b, d in zip(members, data):
                if keys == "__ALL__" and sorted(d) != sorted(names):
                    raise DGLError(f"batch: graph {b}'s {label} has features {sorted(d)}, graph {members[0]}'s "
                                     f"{sorted(names)}: batch needs the same ones (or name them: ndata=[...])")
                for name in names:
                    if name not in d:
                        raise DGLError(f"batch: graph {b}'s {label} has no feature {name!r}")
                    first = data[0][name]
                    if d[name].shape[1:] != first.shape[1:] or d[name].dtype != first.dtype:
                        raise DGLError(f"batch: graph {b}'s {label}[{name!r}] is {d[name].dtype} "
                                         f"{tuple(d[name].shape[1:])} per row, graph {members[0]}'s {first.dtype} "
                                         f"{tuple(first.shape[1:])}")
            target = node_frame(new, kind) if what == "n" else edge_frame(new, kind)
            for name in names:
                target[name] = torch.cat([d[name] for d in data])


def unbatch_features(g, members) -> None:
    """The inverse of batch_features: each member's rows of g's features."""
    for (what, kind), frame in frames(g).items():
        sizes = (g.batch_num_nodes(kind) if what == "n" else g.batch_num_edges(g.canonical_etypes[kind])).tolist()
        for name, value in frame._data.items():
            for member, part in zip(members, torch.split(value, sizes)):
                (node_frame(member, kind) if what == "n" else edge_frame(member, kind))[name] = part


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
    x = frame[field]
    side = {"u": "source node", "v": "destination node"}.get(target, "edge")
    ops._need_float(x, f"message passing: the {side} feature {field!r}")  # as DGL, no integer features
    return x


def _messages(g, msg: BuiltinMessage) -> torch.Tensor:
    """Per-edge messages [E, ...] of a built-in (a gsddmm)."""
    lhs = _operand(g, msg.lhs_target, msg.lhs_field)
    if msg.op == "copy_lhs":
        return ops.gsddmm(g, "copy_lhs", lhs, None, msg.lhs_target, msg.lhs_target)
    rhs = _operand(g, msg.rhs_target, msg.rhs_field)
    return ops.gsddmm(g, msg.op, lhs, rhs, msg.lhs_target, msg.rhs_target)


class GatheredRows(Mapping):
    """A node frame's rows at the given ids, gathered when a feature is read (index_select: differentiable)."""

    def __init__(self, frame: Frame, ids: torch.Tensor):
        self._frame, self._ids = frame, ids

    def __getitem__(self, name: str) -> torch.Tensor:
        x = self._frame[name]
        return x.index_select(0, self._ids.to(x.device))

    def __iter__(self) -> Iterator[str]:
        return iter(self._frame)

    def __len__(self) -> int:
        return len(self._frame)


class EdgeBatch:
    """DGL's EdgeBatch, for user-defined message and apply_edges functions: every edge of the relation (on a
    verb's compute graph, topograph/_verbs.py, edges() gives the ids of the graph the verb was called on)."""

    def __init__(self, g, src: torch.Tensor, dst: torch.Tensor):
        s, r, d = one_relation(g, "message passing")
        self._src, self._dst, self._eid = src, dst, torch.arange(src.shape[0], dtype=src.dtype)
        parent = getattr(g, "_parent_ids", None)  # (source, destination, edge) ids in the verb's graph
        if parent is not None:
            self._src, self._dst, self._eid = parent[0][src.to(torch.int64)], parent[1][dst.to(torch.int64)], parent[2]
        self.canonical_etype = g.canonical_etypes[r]
        self.src = GatheredRows(node_frame(g, s), src.to(torch.int64))  # [E, ...] per feature
        self.dst = GatheredRows(node_frame(g, d), dst.to(torch.int64))
        self.data = edge_frame(g, r)  # [E, ...] by edge id

    def edges(self):
        """(source ids, destination ids, edge ids)."""
        return self._src, self._dst, self._eid

    def batch_size(self) -> int:
        return int(self._src.shape[0])

    def __len__(self) -> int:
        return self.batch_size()


class NodeBatch:
    """DGL's NodeBatch, for user-defined reduce and apply_node_func: `ids` nodes of the destination type `ntype`
    (its public name), with their features (data) and, in a reduce, the messages into them (mailbox[name]
    [n, degree, ...]); nodes() gives `reported` where the ids are a compute graph's positions (the verb's graph's
    ids), else `ids`."""

    def __init__(self, frame: Mapping, ids: torch.Tensor, mailbox: Optional[Dict[str, torch.Tensor]] = None,
                 reported: Optional[torch.Tensor] = None, *, ntype: str):
        self._ids = reported if reported is not None else ids
        self.data = GatheredRows(frame, ids)
        self.mailbox = mailbox if mailbox is not None else {}
        self.ntype = ntype  # DGL's UDFs on heterographs branch on it (nodes.ntype == 'user')

    def nodes(self) -> torch.Tensor:
        return self._ids

    def batch_size(self) -> int:
        return int(self._ids.shape[0])

    def __len__(self) -> int:
        return self.batch_size()


def udf_output(result, rows: int, what: str) -> Dict[str, torch.Tensor]:
    """A UDF's return value: a dict of tensors with `rows` rows each."""
    if not isinstance(result, Mapping):
        raise DGLTypeError(f"{what} must return a dict {{name: tensor}}, got {type(result).__name__}")
    for name, value in result.items():
        if not isinstance(value, torch.Tensor) or value.dim() == 0 or value.shape[0] != rows:
            shape = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
            raise DGLError(f"{what}: {name!r} must be a tensor of {rows} rows, got {shape}")
    return dict(result)


def _reported_nodes(g, ids: torch.Tensor) -> Optional[torch.Tensor]:
    """The ids a NodeBatch reports for destination positions `ids`: on a verb's compute graph, the verb's graph's."""
    parent = getattr(g, "_parent_ids", None)
    return parent[1][ids] if parent is not None else None


class _Overlay(Mapping):
    """What apply_node_func reads, as in DGL: the reduce's outputs, then the destination's features."""

    def __init__(self, new: Dict[str, torch.Tensor], frame: Mapping):
        self._new, self._frame = new, frame

    def __getitem__(self, name: str) -> torch.Tensor:
        return self._new[name] if name in self._new else self._frame[name]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._new, *self._frame]))

    def __len__(self) -> int:
        return len(dict.fromkeys([*self._new, *self._frame]))


def message_dict(g, message_func) -> Dict[str, torch.Tensor]:
    """Per-edge messages {name: [E, ...]} of a built-in (a gsddmm) or a user-defined message function."""
    if isinstance(message_func, BuiltinMessage):
        return {message_func.out: _messages(g, message_func)}
    if not callable(message_func):
        raise TypeError(f"message function must be a topograph.function built-in or a callable, got {message_func!r}")
    src, dst = g.all_edges()
    return udf_output(message_func(EdgeBatch(g, src, dst)), src.shape[0], "a message function")


def _reduce_udf(g, reduce_func, messages: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
    """DGL's degree bucketing: the destinations of each in-degree d > 0 reduce together over a mailbox
    [n, d, ...] (messages by edge id); the results are scattered into [num_dst, ...], 0 where no edge enters."""
    _, _, d = one_relation(g, "update_all")
    num_dst = g.num_nodes(d)
    _, dst = g.all_edges()
    dst = dst.to(torch.int64)
    by_dst = torch.sort(dst, stable=True).indices  # edge ids grouped by destination, by edge id within
    degree = torch.bincount(dst, minlength=num_dst)
    first = torch.cumsum(degree, 0) - degree  # each destination's first position in by_dst
    out: Dict[str, torch.Tensor] = {}
    for deg in torch.unique(degree[degree > 0]).tolist():
        nodes = torch.nonzero(degree == deg).view(-1)
        eids = by_dst[first[nodes].view(-1, 1) + torch.arange(deg)]  # [n, deg]
        mailbox = {name: m[eids.to(m.device)] for name, m in messages.items()}
        batch = NodeBatch(node_frame(g, d), nodes, mailbox, _reported_nodes(g, nodes), ntype=g._public_ntype(d))
        result = udf_output(reduce_func(batch), nodes.shape[0], "a reduce function")
        for name, value in result.items():
            if name not in out:
                out[name] = value.new_zeros((num_dst,) + tuple(value.shape[1:]))
            if out[name].shape[1:] != value.shape[1:]:
                raise ValueError(f"a reduce function: {name!r} has rows {tuple(value.shape[1:])} for in-degree {deg} "
                                 f"but {tuple(out[name].shape[1:])} for another")
            out[name] = out[name].index_copy(0, nodes.to(value.device), value)
    return out


def message_passing(g, message_func, reduce_func, apply_node_func=None) -> Dict[str, torch.Tensor]:
    """DGL's core.message_passing: the new destination features {name: [num_dst, ...]} of messages along every
    edge of g's one relation, reduced per destination (0 where no edge enters), stored by the caller. With
    apply_node_func, its output (over the reduce's outputs and the destination's features) replaces the reduce's,
    as in DGL: only what it returns is stored."""
    _, _, d = one_relation(g, "update_all")
    if isinstance(message_func, BuiltinMessage) and isinstance(reduce_func, BuiltinReduce):
        out = {reduce_func.out: _reduce_builtin(g, message_func, reduce_func)}
    elif isinstance(reduce_func, BuiltinReduce):  # UDF messages, then the built-in reducer over them
        messages = message_dict(g, message_func)
        if reduce_func.msg not in messages:
            raise DGLError(f"update_all: the reducer reads message {reduce_func.msg!r}, the message function "
                           f"writes {sorted(messages)}")
        out = {reduce_func.out: ops.gspmm_zero_empty(g, "copy_rhs", reduce_func.op, None, messages[reduce_func.msg])}
    elif callable(reduce_func):
        # computed in full before any is stored: a reducer reading nodes.data sees the features before the update
        out = _reduce_udf(g, reduce_func, message_dict(g, message_func))
    else:
        raise TypeError(f"reduce function must be a topograph.function built-in or a callable, got {reduce_func!r}")
    if apply_node_func is not None:
        ids = torch.arange(g.num_nodes(d))
        batch = NodeBatch(_Overlay(out, node_frame(g, d)), ids, reported=_reported_nodes(g, ids),
                          ntype=g._public_ntype(d))
        out = udf_output(apply_node_func(batch), ids.shape[0], "apply_node_func")
    return out


def update_all(g, message_func, reduce_func, apply_node_func=None) -> None:
    _, _, d = one_relation(g, "update_all")
    frame = node_frame(g, d)
    for name, value in message_passing(g, message_func, reduce_func, apply_node_func).items():
        frame[name] = value


def _reduce_builtin(g, message_func: BuiltinMessage, reduce_func: BuiltinReduce) -> torch.Tensor:
    """A built-in message reduced by a built-in: [num_dst, ...], 0 for a destination without in-edges."""
    if message_func.out != reduce_func.msg:
        raise DGLError(f"update_all: the reducer reads message {reduce_func.msg!r}, "
                       f"the message function writes {message_func.out!r}")
    m, reduce = message_func, reduce_func.op
    if m.op == "copy_lhs" and m.lhs_target in "ue":
        x = _operand(g, m.lhs_target, m.lhs_field)
        return ops.gspmm_zero_empty(g, "copy_lhs", reduce, x, None) if m.lhs_target == "u" else \
            ops.gspmm_zero_empty(g, "copy_rhs", reduce, None, x)
    if m.op in ("add", "sub", "mul", "div") and (m.lhs_target, m.rhs_target) == ("u", "e"):
        return ops.gspmm_zero_empty(g, m.op, reduce, _operand(g, "u", m.lhs_field), _operand(g, "e", m.rhs_field))
    if m.op in ("add", "mul") and (m.lhs_target, m.rhs_target) == ("e", "u"):  # commutative: one gspmm too
        return ops.gspmm_zero_empty(g, m.op, reduce, _operand(g, "u", m.rhs_field), _operand(g, "e", m.lhs_field))
    return ops.gspmm_zero_empty(g, "copy_rhs", reduce, None, _messages(g, m))


@contextlib.contextmanager
def local_scope(g):
    """Features set inside are dropped on exit and the ones replaced come back (DGL's local_scope)."""
    saved = {key: dict(frame._data) for key, frame in frames(g).items()}
    try:
        yield
    finally:
        for key, frame in frames(g).items():
            frame._data = dict(saved.get(key, {}))
