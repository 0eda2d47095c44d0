"""DGL 2.1's homophily measures of node labels y [N] over a graph's edges: edge_homophily (the share of edges
joining equal labels), node_homophily (per node with in-edges, the share of its in-edges from its own label,
averaged over every node, 0 for one without), linkx_homophily (Lim et al.: class-insensitive, chance removed)
and adjusted_homophily (Platonov et al.: edge homophily corrected for the label-degree distribution, on the
graph made bidirected); and the label informativeness of Platonov et al. (2023): how much a neighbour's label
tells of a node's, as the mutual information of the labels at an edge's two ends over the entropy of one end's,
with edges drawn uniformly (edge_label_informativeness) or a node uniformly and then one of its edges
(node_label_informativeness), also on the graph made bidirected (simple: parallel edges count once). Plain
torch; each returns a Python float, as DGL's (nan or inf where DGL's is: a graph without edges, or a label up
to the largest that no node, or no node with edges, carries: its share is 0 and the logs meet 0)."""
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


def _bidirected(graph: DGLGraph, y: torch.Tensor, what: str):
    """The bidirected simple graph on y's device, after y is checked against the given graph."""
    from ._transform import to_bidirected

    _edge_labels(graph, y, what)
    return to_bidirected(graph.cpu()).to(y.device)


def adjusted_homophily(graph: DGLGraph, y: torch.Tensor) -> float:
    graph = _bidirected(graph, y, "adjusted_homophily")
    h_edge = edge_homophily(graph, y)
    degrees = graph.in_degrees().float().to(y.device)
    degree_sums = torch.zeros(int(y.max()) + 1, device=y.device).index_add(0, y, degrees)
    adjust = ((degree_sums ** 2).sum() / graph.num_edges() ** 2).item()
    return (h_edge - adjust) / (1 - adjust)


def _label_pair_counts(graph: DGLGraph, y: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """[C, C]: entry (a, b) sums `weight` [E] over the edges from label a to label b (C = max label + 1)."""
    u, v = (t.to(device=y.device, dtype=torch.int64) for t in graph.edges())
    classes = int(y.max()) + 1
    flat = torch.zeros(classes * classes, device=y.device).index_add(0, y[u] * classes + y[v], weight)
    return flat.view(classes, classes)


def _class_shares(y: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """[C]: each label's share of `weight` [N] (its nodes' count, or their degrees' sum)."""
    sums = torch.zeros(int(y.max()) + 1, device=y.device).index_add(0, y, weight)
    return sums / sums.sum()


def edge_label_informativeness(graph: DGLGraph, y: torch.Tensor, eps: float = 1e-8) -> float:
    """LI_edge = 2 - H(pair) / H(one end): the labels at an edge's two ends (both directions, so each end is
    distributed as the degree-weighted labels); eps is added to the pairs' probabilities before their log (a
    pair of labels no edge joins)."""
    graph = _bidirected(graph, y, "edge_label_informativeness")
    degree_shares = _class_shares(y, graph.in_degrees().float().to(y.device))
    pairs = _label_pair_counts(graph, y, torch.ones(graph.num_edges(), device=y.device))
    pairs = pairs / pairs.sum() + eps
    return (2 - (pairs * pairs.log()).sum() / (degree_shares * degree_shares.log()).sum()).item()


def node_label_informativeness(graph: DGLGraph, y: torch.Tensor, eps: float = 1e-8) -> float:
    """LI_node = I / H(node label): a node drawn uniformly among those with edges, then one of its edges; its
    label against the other end's (distributed as the degree-weighted labels), eps added as in
    edge_label_informativeness."""
    graph = _bidirected(graph, y, "node_label_informativeness")
    degrees = graph.in_degrees().float().to(y.device)
    node_shares, degree_shares = _class_shares(y, torch.ones_like(degrees)), _class_shares(y, degrees)
    u = graph.edges()[0].to(device=y.device, dtype=torch.int64)
    pairs = _label_pair_counts(graph, y, 1 / ((degrees > 0).sum() * degrees[u])) + eps
    mutual = (pairs * (pairs / (node_shares[:, None] * degree_shares[None, :])).log()).sum()
    return (-mutual / (node_shares * node_shares.log()).sum()).item()
