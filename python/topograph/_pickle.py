"""Pickling a DGLGraph, as DGL's graphs pickle: torch's DataLoader workers (GraphDataLoader(num_workers=k)) send
the batches they collate back to the main process pickled, and torch.save / multiprocessing pickle too. The store
is a C++ object, so a graph pickles as what rebuilds it: node types and counts, each relation's edges, the batch
(every graph's node and edge counts, so a batch comes back a batch), the device, and the features (torch pickles
the tensors). A block pickles the same way, its store's SRC/ and DST/ types as they are, and comes back a block
(DataLoader(num_workers=k) sends the sampled blocks back so)."""
from __future__ import annotations

from typing import Dict, List, Tuple

import torch

from . import _C
from ._base import DGLError


def reduce_graph(g) -> tuple:
    """The (callable, arguments) pair of pickle's __reduce__ for graph g."""
    from . import _message_passing as mp  # it builds on ops, which builds on _graph

    h = g._g
    types = list(h.ntypes)
    relations = [tuple(c) for c in h.canonical_etypes]
    node_counts = [list(h.batch_num_nodes(i)) for i in range(len(types))]  # per type: each graph's count [B]
    edge_counts = [list(h.batch_num_edges(r)) for r in range(len(relations))]
    edges = [tuple(ids.cpu() for ids in h.edges(r)) for r in range(len(relations))]  # global ids, idtype
    features = {key: dict(frame._data) for key, frame in mp.frames(g).items() if len(frame)}
    return restore_graph, (types, relations, node_counts, edge_counts, edges, features, str(g.device), g.is_block)


def _check_state(types, relations, node_counts, edge_counts, edges) -> None:
    """A pickled graph's counts agree with its edges and types before anything is built: a tampered or foreign
    state raised ValueError("'zz' is not in list") or IndexError, or built a graph that dropped edges silently."""
    def bad(why: str):
        raise DGLError(f"unpickling a graph: the state is inconsistent: {why}")

    try:
        types, relations = list(types), [tuple(r) for r in relations]
        node_counts, edge_counts, edges = list(node_counts), list(edge_counts), list(edges)
    except TypeError:
        bad("expected lists of types, relations, counts and edges")
    if len(node_counts) != len(types):
        bad(f"{len(node_counts)} node count lists for {len(types)} node types")
    if len(edge_counts) != len(relations) or len(edges) != len(relations):
        bad(f"{len(edge_counts)} edge count lists and {len(edges)} edge lists for {len(relations)} relations")
    sizes = {len(c) for c in node_counts + edge_counts}
    if len(sizes) > 1:
        bad(f"per-graph count lists of different lengths {sorted(sizes)}")
    for r, c in enumerate(relations):
        if len(c) != 3 or c[0] not in types or c[2] not in types:
            bad(f"relation {c!r} names a node type outside {types}")
        u, v = edges[r]
        if len(u) != len(v) or sum(edge_counts[r]) != len(u):
            bad(f"relation {c!r} lists {len(u)} sources and {len(v)} destinations against {sum(edge_counts[r])} "
                "counted edges")


def restore_graph(types: List[str], relations: List[Tuple[str, str, str]], node_counts: List[List[int]],
                  edge_counts: List[List[int]], edges: List[Tuple[torch.Tensor, torch.Tensor]],
                  features: Dict[tuple, Dict[str, torch.Tensor]], device: str, is_block: bool = False):
    """The graph reduce_graph described: each graph of the batch made from its own nodes and edges (ids made
    local), then batched, so the store holds the batch as topograph.batch made it; a DGLBlock when is_block."""
    from . import _message_passing as mp
    from ._block import DGLBlock
    from ._graph import DGLGraph

    _check_state(types, relations, node_counts, edge_counts, edges)
    batch_size = len(node_counts[0]) if node_counts else 1
    members = []
    for b in range(batch_size):
        rels = []
        for r, (c, (u, v)) in enumerate(zip(relations, edges)):
            s, d = types.index(c[0]), types.index(c[2])
            first, count = sum(edge_counts[r][:b]), edge_counts[r][b]
            rels.append((c, (u[first:first + count] - sum(node_counts[s][:b])).contiguous(),
                         (v[first:first + count] - sum(node_counts[d][:b])).contiguous()))
        members.append(_C.make_graph([(t, node_counts[i][b]) for i, t in enumerate(types)], rels))
    g = (DGLBlock if is_block else DGLGraph)(members[0] if batch_size == 1 else _C.batch(members))
    if torch.device(device).type != "cpu":
        g = g.to(device)
    for (kind, key), data in features.items():
        frame = mp.node_frame(g, key) if kind == "n" else mp.edge_frame(g, key)
        for name, value in data.items():
            frame[name] = value
    return g
