"""DGL 2.1's traversals and the message passing that follows them (dgl.bfs_nodes_generator, bfs_edges_generator,
topological_nodes_generator, dfs_edges_generator, dfs_labeled_edges_generator; dgl.prop_nodes, prop_edges,
prop_nodes_bfs, prop_nodes_topo, prop_edges_dfs; DGLGraph.prop_nodes / prop_edges), on a graph of one relation.
Frontiers are id tensors in DGL's order: a frontier's nodes in the order they were reached, walking the previous
frontier in its order and each node's edges by edge id (the core's CSR / CSC). The BFS and topological generators
return lists; the DFS ones return tuples, as DGL's (its torch.split). The Tree-LSTM pattern (prop_nodes_topo with
user-defined reduce functions) runs as DGL's."""
from __future__ import annotations

from typing import List, Tuple

import torch

from ._base import DGLError
from ._graph import DGLGraph
from ._mutation import _first_positions


def _one_relation(g: DGLGraph, what: str) -> None:
    if len(g.canonical_etypes) != 1:
        raise DGLError(f"{what}: takes a graph of one relation, got {g.canonical_etypes}")


def _lines(g: DGLGraph, reverse: bool):
    """(indptr, neighbours, edge ids) of each node's out-edges, or in-edges when reverse, by edge id."""
    indptr, neighbours, eids = (t.to(device="cpu", dtype=torch.int64)
                                for t in g._g.adjacency(g._relation(None), not reverse, False))
    return indptr, neighbours, eids


def _expand(lines, frontier: torch.Tensor):
    """Every edge of the frontier's nodes, frontier order then edge id: (neighbour, edge id) tensors."""
    indptr, neighbours, eids = lines
    counts = indptr[frontier + 1] - indptr[frontier]
    owner = torch.repeat_interleave(torch.arange(frontier.numel()), counts)
    at = indptr[frontier][owner] + torch.arange(int(counts.sum())) - (torch.cumsum(counts, 0) - counts)[owner]
    return neighbours[at], eids[at]


def _first_seen(nodes: torch.Tensor, eids: torch.Tensor):
    """The distinct nodes in order of first appearance, with the edge that reached each first."""
    first = _first_positions(nodes)
    return nodes[first], eids[first]


def _sources(g: DGLGraph, source, what: str) -> torch.Tensor:
    """source (an id or ids) as 1-D int64 on the CPU, each checked against the node count."""
    _one_relation(g, what)
    n = g.num_nodes()
    nodes = torch.as_tensor(source, dtype=torch.int64).cpu().reshape(-1)
    if nodes.numel() and (int(nodes.min()) < 0 or int(nodes.max()) >= n):
        raise DGLError(f"{what}: source node {nodes.tolist()} outside [0, {n})")
    return nodes


def _bfs(g: DGLGraph, source, reverse: bool, what: str):
    frontier, n = _sources(g, source, what), g.num_nodes()
    lines, visited = _lines(g, reverse), torch.zeros(n, dtype=torch.bool)
    visited[frontier] = True
    nodes, edges = [frontier], []
    while True:
        reached, eids = _expand(lines, frontier)
        fresh = ~visited[reached]
        frontier, tree_edges = _first_seen(reached[fresh], eids[fresh])
        if frontier.numel() == 0:
            return nodes, edges
        visited[frontier] = True
        nodes.append(frontier)
        edges.append(tree_edges)


def _to_graph(g: DGLGraph, frontiers: List[torch.Tensor]) -> List[torch.Tensor]:
    return [f.to(device=g.device, dtype=g.idtype) for f in frontiers]


def bfs_nodes_generator(graph: DGLGraph, source, reverse: bool = False) -> List[torch.Tensor]:
    """Breadth-first frontiers from `source` (an id or ids: frontier 0, in that order) along out-edges (in-edges
    when reverse): each node once, in the frontier after the one that first reaches it."""
    return _to_graph(graph, _bfs(graph, source, reverse, "bfs_nodes_generator")[0])


def bfs_edges_generator(graph: DGLGraph, source, reverse: bool = False) -> List[torch.Tensor]:
    """The edges that first reach each breadth-first frontier after the first (the BFS tree's edges, level by
    level)."""
    return _to_graph(graph, _bfs(graph, source, reverse, "bfs_edges_generator")[1])


def topological_nodes_generator(graph: DGLGraph, reverse: bool = False) -> List[torch.Tensor]:
    """Kahn's frontiers: the nodes without in-edges (out-edges when reverse) in id order, then the nodes whose
    last in-edge from earlier frontiers they were, in the order reached; a cycle is a DGLError."""
    _one_relation(graph, "topological_nodes_generator")
    n = graph.num_nodes()
    u, v = (t.to(device="cpu", dtype=torch.int64) for t in graph.edges())
    remaining = torch.bincount(u if reverse else v, minlength=n)
    lines = _lines(graph, reverse)
    frontier = torch.nonzero(remaining == 0).reshape(-1)
    frontiers, done = [], 0
    while frontier.numel():
        frontiers.append(frontier)
        done += frontier.numel()
        reached, _ = _expand(lines, frontier)
        if reached.numel() == 0:
            break
        remaining -= torch.bincount(reached, minlength=n)
        # a node is ready when its count reaches 0: in the order of the edge that brought it there
        last = torch.zeros(n, dtype=torch.int64).scatter_reduce(0, reached, torch.arange(reached.numel()), "amax")
        ready = torch.nonzero(remaining == 0).reshape(-1)
        ready = ready[torch.isin(ready, reached)]
        frontier = ready[torch.argsort(last[ready])]
    if done != n:
        raise DGLError(f"topological_nodes_generator: the graph has a cycle ({n - done} of {n} nodes on or after one)")
    return _to_graph(graph, frontiers)


FORWARD, REVERSE, NONTREE = 0, 1, 2  # DGL's DFS edge labels


def _dfs_trace(lines, n: int, source: int, has_reverse_edge: bool, has_nontree_edge: bool) -> List[Tuple[int, int]]:
    """One source's labelled DFS as DGL's C++ walks it: (edge id, label) in the order visited. The stack holds
    (node, position in its edge list, whether that edge entered the tree); an edge is FORWARD when it reaches a
    new node, and is met again when the walk comes back to it: REVERSE if it was a tree edge, NONTREE if its end
    was already visited the first time. A source without edges gives nothing (as DGL's). lines: _lines' tensors
    as Python lists (the walk steps one edge at a time)."""
    indptr, neighbours, eids = lines
    if indptr[source] == indptr[source + 1]:
        return []
    visited, trace = [False] * n, []
    visited[source] = True
    stack = [[source, indptr[source], False]]
    while stack:
        top = stack[-1]
        u, at, on_tree = top
        v = neighbours[at]
        if not visited[v]:
            visited[v], top[2] = True, True
            trace.append((eids[at], FORWARD))
            if indptr[v] < indptr[v + 1]:
                stack.append([v, indptr[v], False])
            continue
        if on_tree and has_reverse_edge:
            trace.append((eids[at], REVERSE))
        elif not on_tree and has_nontree_edge:
            trace.append((eids[at], NONTREE))
        stack.pop()
        if at + 1 < indptr[u + 1]:
            stack.append([u, at + 1, False])
    return trace


def _dfs(g: DGLGraph, source, reverse: bool, has_reverse_edge: bool, has_nontree_edge: bool, what: str):
    """(edge frontiers, label frontiers), int64 on the CPU: each source walks on its own (its own visited set,
    as DGL's: sources are meant to lie in different components), and frontier k holds the k-th edge of every
    trace still that long, in the order of the sources."""
    sources, lines = _sources(g, source, what), [t.tolist() for t in _lines(g, reverse)]
    traces = [_dfs_trace(lines, g.num_nodes(), s, has_reverse_edge, has_nontree_edge) for s in sources.tolist()]
    steps = [[t[k] for t in traces if k < len(t)] for k in range(max(map(len, traces), default=0))]
    edges = [torch.tensor([e for e, _ in step], dtype=torch.int64) for step in steps]
    labels = [torch.tensor([label for _, label in step], dtype=torch.int64) for step in steps]
    return edges, labels


def dfs_edges_generator(graph: DGLGraph, source, reverse: bool = False) -> Tuple[torch.Tensor, ...]:
    """The DFS tree's edges from each source along out-edges (in-edges when reverse), one per frontier in the
    order the walk takes them; with several sources, frontier k holds each walk's k-th edge."""
    return tuple(_to_graph(graph, _dfs(graph, source, reverse, False, False, "dfs_edges_generator")[0]))


def dfs_labeled_edges_generator(graph: DGLGraph, source, reverse: bool = False, has_reverse_edge: bool = False,
                                has_nontree_edge: bool = False, return_labels: bool = True):
    """The DFS's edges labelled FORWARD (0: reaches a new node), REVERSE (1: a tree edge met again when the walk
    returns through it; with has_reverse_edge) and NONTREE (2: an edge to a node already visited; with
    has_nontree_edge), frontiers as dfs_edges_generator's. Returns (edge frontiers, label frontiers: int64), or
    the edge frontiers alone without return_labels."""
    edges, labels = _dfs(graph, source, reverse, has_reverse_edge, has_nontree_edge, "dfs_labeled_edges_generator")
    edges = tuple(_to_graph(graph, edges))
    return (edges, tuple(labels)) if return_labels else edges


def prop_nodes(graph: DGLGraph, nodes_generator, message_func, reduce_func, apply_node_func=None) -> None:
    """graph.pull(frontier, ...) for each node frontier in turn: a frontier's nodes read what the earlier ones
    wrote."""
    for frontier in nodes_generator:
        graph.pull(frontier, message_func, reduce_func, apply_node_func)


def prop_edges(graph: DGLGraph, edges_generator, message_func, reduce_func, apply_node_func=None) -> None:
    """graph.send_and_recv(frontier, ...) for each edge frontier in turn."""
    for frontier in edges_generator:
        graph.send_and_recv(frontier, message_func, reduce_func, apply_node_func)


def prop_nodes_bfs(graph: DGLGraph, source, message_func, reduce_func, reverse: bool = False,
                   apply_node_func=None) -> None:
    prop_nodes(graph, bfs_nodes_generator(graph, source, reverse), message_func, reduce_func, apply_node_func)


def prop_nodes_topo(graph: DGLGraph, message_func, reduce_func, reverse: bool = False, apply_node_func=None) -> None:
    """prop_nodes over the topological frontiers (the first frontier pulls too, so its nodes get what a node
    without in-edges gets: 0 for the built-in reducers, as DGL's)."""
    prop_nodes(graph, topological_nodes_generator(graph, reverse), message_func, reduce_func, apply_node_func)


def prop_edges_dfs(graph: DGLGraph, source, message_func, reduce_func, reverse: bool = False,
                   has_reverse_edge: bool = False, has_nontree_edge: bool = False, apply_node_func=None) -> None:
    """prop_edges over dfs_labeled_edges_generator's edge frontiers (one edge each with one source, so a node
    receives along the walk's order)."""
    frontiers = dfs_labeled_edges_generator(graph, source, reverse, has_reverse_edge, has_nontree_edge,
                                            return_labels=False)
    prop_edges(graph, frontiers, message_func, reduce_func, apply_node_func)


def _prop_nodes_method(self, nodes_generator, message_func, reduce_func, apply_node_func=None, etype=None) -> None:
    """DGLGraph.prop_nodes, as DGL 2.1's: pull(frontier, ..., etype=etype) for each node frontier in turn."""
    for frontier in nodes_generator:
        self.pull(frontier, message_func, reduce_func, apply_node_func, etype=etype)


def _prop_edges_method(self, edges_generator, message_func, reduce_func, apply_node_func=None, etype=None) -> None:
    """DGLGraph.prop_edges, as DGL 2.1's: send_and_recv(frontier, ..., etype=etype) for each edge frontier."""
    for frontier in edges_generator:
        self.send_and_recv(frontier, message_func, reduce_func, apply_node_func, etype=etype)


DGLGraph.prop_nodes = _prop_nodes_method
DGLGraph.prop_edges = _prop_edges_method
