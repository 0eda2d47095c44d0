"""DGL 2.1's homophily measures of node labels y [N] over a graph's edges: edge_homophily (the share of edges
joining equal labels), node_homophily (per node with in-edges, the share of its in-edges from its own label,
averaged over every node, 0 for one without), linkx_homophily (Lim et al.: class-insensitive, chance removed)
and adjusted_homophily (Platonov et al.: edge homophily corrected for the label-degree distribution, on the
graph made bidirected). Plain torch; each returns a Python float, as DGL's."""
from __future__ import annotations

import torch

from ._base import DGLError
from ._graph import DGLGraph


def _edge_labels(graph: DGLGraph, y: torch.Tensor, what: str):
    if len(graph.canonical_etypes) != 1:
        raise DGLError(f"{what}: takes a graph of one relation, got {graph.canonical_etypes}")
    if y.dim() != 1 or y.shape[0] != graph.num_nodes():
        raise DGLError(f"{what}: y must hold one label per node [{graph.num_nodes()}], got {tuple(y.shape)}")
    u, v = (t.to(device=y.device, dtype=torch.int64) for t in graph.edges())
    return u, v, (y[u] == y[v]).float()


def edge_homophily(graph: DGLGraph, y: torch.Tensor) -> float:
    _, _, same = _edge_labels(graph, y, "edge_homophily")
    return same.mean().item()


def node_homophily(graph: DGLGraph, y: torch.Tensor) -> float:
    _, v, same = _edge_labels(graph, y, "node_homophily")
    n = graph.num_nodes()
    count = torch.zeros(n, device=y.device).index_add(0, v, torch.ones_like(same))
    share = torch.zeros(n, device=y.device).index_add(0, v, same) / count.clamp(min=1)
    return share.mean().item()


def linkx_homophily(graph: DGLGraph, y: torch.Tensor) -> float:
    _, v, same = _edge_labels(graph, y, "linkx_homophily")
    n, classes = graph.num_nodes(), int(y.max()) + 1
    same_deg = torch.zeros(n, device=y.device).index_add(0, v, same)
    deg = graph.in_degrees().float().to(y.device)
    value = 0.0
    for k in range(classes):
        mask = y == k
        value += max(0.0, (same_deg[mask].sum() / deg[mask].sum()).item() - mask.sum().item() / n)
    return value / (classes - 1)


def adjusted_homophily(graph: DGLGraph, y: torch.Tensor) -> float:
    from ._transform import to_bidirected

    graph = to_bidirected(graph.cpu()).to(y.device)
    h_edge = edge_homophily(graph, y)
    degrees = graph.in_degrees().float().to(y.device)
    degree_sums = torch.zeros(int(y.max()) + 1, device=y.device).index_add(0, y, degrees)
    adjust = ((degree_sums ** 2).sum() / graph.num_edges() ** 2).item()
    return (h_edge - adjust) / (1 - adjust)
