"""Topograph's topology builders (graph/builders.hpp; dilated, block, global_tokens and random are a topology
file's builders, docs/topologies.md): the edges of one relation for a batch of graphs of
`lengths` nodes each, numbered as a disjoint union (graph b's nodes after those of graphs 0..b-1), as
(src, dst) tensors for topograph.graph / topograph.heterograph. Edges point from the attended node to the
attending one (j -> i: i attends to j); no builder adds self loops unless it says so.

    lens = [5, 9]
    g = topograph.heterograph({("sat", "ring", "sat"): builders.ring(lens),
                               ("sat", "self", "sat"): builders.self_loops(lens),
                               ("sat", "to_relay", "relay"): builders.to_one(lens),
                               ("relay", "from_relay", "sat"): builders.from_one(lens)},
                              num_nodes_dict={"sat": sum(lens), "relay": len(lens)})   # Star-Transformer
"""
from __future__ import annotations

from typing import Sequence, Tuple, Union

import json

import torch

from . import _C

Lengths = Union[int, Sequence[int]]
Edges = Tuple[torch.Tensor, torch.Tensor]


def _lengths(lengths: Lengths):
    return [int(lengths)] if isinstance(lengths, int) else [int(n) for n in lengths]


def _check_idtype(idtype):
    if idtype not in (torch.int32, torch.int64):
        raise TypeError(f"idtype must be torch.int32 or torch.int64, got {idtype}")


def _build(name, lengths, widths=(), closed=False, idtype=torch.int64) -> Edges:
    _check_idtype(idtype)
    return _C.builder_edges(name, _lengths(lengths), list(widths), closed, idtype == torch.int64)


def _file_builder(function: str, builder: str, fields: dict, lengths, idtype) -> Edges:
    """A topology file's relation {"builder": builder, **fields} from tok to tok, over each graph: the file
    parser checks the fields (a ValueError names the builder and the field)."""
    _check_idtype(idtype)
    relation = {"name": builder, "src": "tok", "dst": "tok", "builder": builder, **fields}
    try:
        text = json.dumps(relation)
    except TypeError as e:
        raise TypeError(f"topograph.builders.{function}: {e}") from None
    return _C.relation_batch_edges(text, f"topograph.builders.{function}", _lengths(lengths), idtype == torch.int64)


def ring(lengths: Lengths, closed: bool = True, idtype=torch.int64) -> Edges:
    """i-1 -> i and i+1 -> i within each graph; closed: the first and last nodes are neighbours too."""
    return _build("ring", lengths, closed=closed, idtype=idtype)


def window(lengths: Lengths, width: Union[int, Sequence[int]], idtype=torch.int64) -> Edges:
    """j -> i for |i - j| <= (width - 1) / 2 within each graph, i itself included; width odd, one for all
    graphs or one per graph."""
    lens = _lengths(lengths)
    widths = [int(width)] * len(lens) if isinstance(width, int) else [int(w) for w in width]
    return _build("window", lens, widths=widths, idtype=idtype)


def full(lengths: Lengths, idtype=torch.int64) -> Edges:
    """Every j -> every i within each graph, self included."""
    return _build("full", lengths, idtype=idtype)


def self_loops(lengths: Lengths, idtype=torch.int64) -> Edges:
    """i -> i (between two node types with the same counts: the one-to-one relation)."""
    return _build("self_loops", lengths, idtype=idtype)


def to_one(lengths: Lengths, idtype=torch.int64) -> Edges:
    """Every node of graph b -> node b of a one-node-per-graph type (a relay / star centre)."""
    return _build("to_one", lengths, idtype=idtype)


def from_one(lengths: Lengths, idtype=torch.int64) -> Edges:
    """Node b of a one-node-per-graph type -> every node of graph b."""
    return _build("from_one", lengths, idtype=idtype)


def dilated(lengths: Lengths, dilation: int, reach: int, idtype=torch.int64) -> Edges:
    """j -> i for j = i +- dilation * m, m = 1 .. reach, within each graph (not i itself): a dilated window.
    dilation >= 1, reach >= 1."""
    return _file_builder("dilated", "dilated", {"dilation": dilation, "reach": reach}, lengths, idtype)


def block(lengths: Lengths, size: int, idtype=torch.int64) -> Edges:
    """j -> i for i and j in the same block of `size` consecutive nodes (i // size == j // size), i itself
    included: block-diagonal local attention. size >= 1."""
    return _file_builder("block", "block", {"size": size}, lengths, idtype)


def global_tokens(lengths: Lengths, positions: Sequence[int], idtype=torch.int64) -> Edges:
    """Longformer's global attention: the nodes at `positions` (within each graph) attend to every node, and
    every other node attends to them. Positions past a graph's end are skipped."""
    return _file_builder("global_tokens", "global", {"positions": [int(p) for p in positions]}, lengths, idtype)


def random(lengths: Lengths, per_node: int, seed: int = 0, idtype=torch.int64) -> Edges:
    """BigBird's random keys: `per_node` distinct sources drawn uniformly for each node of each graph (all of
    them when the graph has fewer; i itself may be drawn). The draw depends only on the seed, the graph's
    length and the node, so a sequence keeps its edges across batches and runs. per_node >= 1, seed >= 0."""
    return _file_builder("random", "random", {"per_node": per_node, "seed": seed}, lengths, idtype)


def spans(lengths: Lengths, words: Sequence[Sequence[Tuple[int, int]]], idtype=torch.int64) -> Tuple[Edges, Edges]:
    """Character / word edges of sentences of `lengths` characters whose words are the inclusive character
    spans `words[b]` = [(start, end), ...] (0 <= start <= end < length; BiG-Transformer's lexicon matches):
    (in: char c -> word j for c in word j, contains: word j -> char c, the same pairs reversed). Words are
    numbered sentence by sentence, the word type's count is sum(len(w) for w in words)."""
    _check_idtype(idtype)
    pairs = [[(int(s), int(e)) for s, e in sentence] for sentence in words]
    return _C.span_edges(_lengths(lengths), pairs, idtype == torch.int64)
