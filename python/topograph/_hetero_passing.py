"""Message passing over several relations at once: DGL's multi_update_all, and update_all / apply_edges with
etype=None on a graph of several relations (DGL 2.1's gspmm_hetero / gsddmm_hetero path). Each runs the
one-relation message passing of _message_passing.py on every relation's view g[relation] (which shares g's
features), and every relation's result is computed before any is stored.

update_all(message_func, reduce_func, apply_node_func, etype=None) on several relations, as DGL 2.1:
  - built-in message and reducer only (a UDF is a DGLError, as DGL's: multi_update_all takes UDFs), reducer
    sum, max or min ('mean' is a NotImplementedError, as DGL's);
  - every relation sends; each destination type combines its relations' results by the reducer itself (sum of
    sums, max of maxes, min of mins), which is that reducer over the in-edges of every relation; a node without
    an in-edge in any relation gets 0;
  - every destination type of a relation gets the output (through a relation without edges only, zeros); a
    node type that is no relation's destination is not written;
  - apply_node_func runs per destination type over the combined result (its output is stored instead, as on
    one relation). DGL 2.1 hands it the per-type tuple and fails, so no DGL script relies on it.
apply_edges(func, edges=ALL, etype=None) on several relations: a built-in's messages on every relation's edges,
into each relation's edge features (a UDF, or edges other than ALL, is a DGLError).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Dict, List, Tuple

import torch

from ._base import DGLError, is_all
from ._message_passing import NodeBatch, _Overlay, edge_frame, message_dict, message_passing, node_frame, udf_output
from .function import BuiltinMessage, BuiltinReduce

# cross_reducer -> combine([per-relation [N, ...]]) -> [N, ...] ("stack": [N, relations, ...])
CROSS_REDUCERS = {"sum": lambda v: torch.stack(v).sum(0), "mean": lambda v: torch.stack(v).mean(0),
                  "max": lambda v: torch.stack(v).amax(0), "min": lambda v: torch.stack(v).amin(0),
                  "stack": lambda v: torch.stack(v, 1)}


def combined(parts: List[Tuple[tuple, torch.Tensor]], cross_reducer: str, what: str) -> torch.Tensor:
    """parts [(relation, [N, ...])], the results of the relations into one destination type, combined by
    cross_reducer; a DGLError names two relations whose rows differ in shape (nothing combines those)."""
    first_relation, first = parts[0]
    for relation, value in parts[1:]:
        if value.shape[1:] != first.shape[1:]:
            raise DGLError(f"{what} has rows of shape {tuple(first.shape[1:])} from {first_relation} but "
                           f"{tuple(value.shape[1:])} from {relation}: cannot combine them")
    return CROSS_REDUCERS[cross_reducer]([value for _, value in parts])


def _combined_per_destination(g, per_relation: List[Tuple[int, tuple]], cross_reducer: str, what: str
                              ) -> Dict[str, Dict[str, torch.Tensor]]:
    """Message passing on each relation r of per_relation [(r, (message_func, reduce_func[, apply_node_func]))],
    each destination type's results combined by cross_reducer: {stored destination type: {name: [N, ...]}},
    computed, not stored."""
    results: Dict[str, List[Tuple[int, Dict[str, torch.Tensor]]]] = {}
    isolating = set()  # outputs of max / min reducers, whose nodes without in-edges hold infinities
    for r, args in per_relation:
        _, _, d = g._g.canonical_etypes[r]
        rel = g[g.canonical_etypes[r]]  # shares g's frames
        written = message_passing(rel, *args)
        reduce = args[1]
        if len(args) == 2 and isinstance(reduce, BuiltinReduce) and reduce.op in ("max", "min") \
                and reduce.out in written:
            # DGL's rule: a node without in-edges of this relation holds -inf (max) / +inf (min) until the
            # relations are combined, so it drops out of a max / min across them; infinities left become 0
            isolated = (rel.in_degrees() == 0).to(written[reduce.out].device)
            written[reduce.out] = written[reduce.out].masked_fill(
                isolated.view(-1, *[1] * (written[reduce.out].dim() - 1)),
                float("-inf") if reduce.op == "max" else float("inf"))
            isolating.add(reduce.out)
        results.setdefault(d, []).append((r, written))
    per_destination = {}
    for d, outputs in results.items():
        outputs.sort(key=lambda item: item[0])  # the graph's relation order: stack's order, as DGL's
        per_destination[d] = {}
        for name in dict.fromkeys(k for _, out in outputs for k in out):
            value = combined([(g.canonical_etypes[r], out[name]) for r, out in outputs if name in out],
                             cross_reducer, f"{what}: {name!r} into {g._public_ntype(d)!r}")
            per_destination[d][name] = value.masked_fill(value.isinf(), 0.0) if name in isolating else value
    return per_destination


def multi_update_all(g, etype_dict, cross_reducer: str, apply_node_func=None) -> None:
    """DGLGraph.multi_update_all (its doc in _graph.py)."""
    if cross_reducer not in CROSS_REDUCERS:
        raise DGLError(f"multi_update_all: cross_reducer must be one of {sorted(CROSS_REDUCERS)}, "
                       f"got {cross_reducer!r}")
    if not isinstance(etype_dict, Mapping):
        raise TypeError(f"multi_update_all: etype_dict must be {{etype: (message_func, reduce_func)}}, "
                        f"got {type(etype_dict).__name__}")
    per_relation = []
    for etype, args in etype_dict.items():
        if not isinstance(args, (tuple, list)) or len(args) not in (2, 3):
            raise ValueError(f"multi_update_all: {etype!r} maps to {args!r}; expected (message_func, reduce_func) "
                             f"or (message_func, reduce_func, apply_node_func)")
        per_relation.append((g._relation(etype), tuple(args)))
    for d, out in _combined_per_destination(g, per_relation, cross_reducer, "multi_update_all").items():
        frame = node_frame(g, d)
        for name, value in out.items():
            frame[name] = value
        if apply_node_func is not None:
            ids = torch.arange(frame._rows())
            batch = NodeBatch(frame, ids, ntype=g._public_ntype(d))
            for name, value in udf_output(apply_node_func(batch), ids.shape[0], "apply_node_func").items():
                frame[name] = value


def update_all_relations(g, message_func, reduce_func, apply_node_func=None) -> None:
    """DGLGraph.update_all with etype=None on a graph of several relations (this module's doc)."""
    if not (isinstance(message_func, BuiltinMessage) and isinstance(reduce_func, BuiltinReduce)):
        raise DGLError(f"update_all: the graph has {len(g.canonical_etypes)} relations {g.canonical_etypes}: over "
                       f"all of them at once it takes built-in message and reduce functions only (as DGL 2.1); for "
                       f"user-defined ones name a relation (etype=...) or use multi_update_all")
    if reduce_func.op == "mean":
        raise NotImplementedError("update_all: reducer 'mean' over several relations at once is not supported (nor "
                                  "in DGL 2.1): use multi_update_all({etype: (message_func, fn.mean(...))}, "
                                  "cross_reducer)")
    every_relation = [(r, (message_func, reduce_func)) for r in range(len(g._g.canonical_etypes))]
    for d, out in _combined_per_destination(g, every_relation, reduce_func.op, "update_all").items():
        frame = node_frame(g, d)
        if apply_node_func is not None:  # over the combined result and the type's features, as on one relation
            ids = torch.arange(frame._rows())
            batch = NodeBatch(_Overlay(out, frame), ids, ntype=g._public_ntype(d))
            out = udf_output(apply_node_func(batch), ids.shape[0], "apply_node_func")
        for name, value in out.items():
            frame[name] = value


def apply_edges_relations(g, func, edges) -> None:
    """DGLGraph.apply_edges with etype=None on a graph of several relations (this module's doc)."""
    if not isinstance(func, BuiltinMessage):
        raise DGLError(f"apply_edges: the graph has {len(g.canonical_etypes)} relations {g.canonical_etypes}: over "
                       f"all of them at once it takes a built-in function only (as DGL 2.1); for a user-defined "
                       f"one name a relation (etype=...)")
    if not is_all(edges):
        raise DGLError(f"apply_edges: edges given on a graph of {len(g.canonical_etypes)} relations "
                       f"{g.canonical_etypes}: name their relation (etype=...)")
    per_relation = [message_dict(g[c], func) for c in g.canonical_etypes]  # every one before any is stored
    for r, out in enumerate(per_relation):
        frame = edge_frame(g, r)
        for name, value in out.items():
            frame[name] = value
