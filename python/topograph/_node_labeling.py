"""dgl.double_radius_node_labeling (Zhang and Chen, 2018; SEAL's structural labels): every node of an enclosing
subgraph labelled by its hop distances to the two ends of the target link, so that a GNN can tell the link's
ends, their common neighbours and the far nodes apart."""
from __future__ import annotations

import numbers

import torch

from ._base import DGLError
from ._graph import DGLGraph
from ._positional import shortest_dist
from ._structure_ops import _homogeneous
from ._transform import remove_edges, to_bidirected


def _node_id(x, n: int, what: str) -> int:
    if isinstance(x, torch.Tensor) and x.numel() == 1 and not x.dtype.is_floating_point and x.dtype != torch.bool:
        x = int(x)
    if isinstance(x, bool) or not isinstance(x, numbers.Integral) or not 0 <= x < n:
        raise DGLError(f"double_radius_node_labeling: {what} must be a node id in [0, {n}), got {x!r}")
    return int(x)


def _hops_avoiding(undirected: DGLGraph, root: int, avoided: int) -> torch.Tensor:
    """[N] int64 hop distances from root over paths that do not pass through `avoided` (its edges removed, as
    DGL drops its row and column), -1 where unreachable."""
    u, v = undirected.edges()
    touching = ((u == avoided) | (v == avoided)).nonzero().flatten()
    return shortest_dist(remove_edges(undirected, touching), root=root)


def double_radius_node_labeling(g: DGLGraph, src, dst) -> torch.Tensor:
    """[N] int64 on the CPU (as DGL's): 1 for src and dst; 0 for a node that cannot reach src without dst or
    dst without src (edges taken both ways); else, with d_s, d_t those distances and d = d_s + d_t, the
    pairing 1 + min(d_s, d_t) + (d // 2) * (d // 2 + d % 2 - 1), which numbers each (d_s, d_t) pair once, up
    to symmetry, in order of d. src == dst is a DGLError (DGL's result then depends on which node its index
    shift lands on)."""
    _homogeneous(g, "double_radius_node_labeling")
    n = g.num_nodes()
    src, dst = _node_id(src, n, "src"), _node_id(dst, n, "dst")
    if src == dst:
        raise DGLError(f"double_radius_node_labeling: src and dst must be two nodes of the target link, got {src} "
                       f"twice")
    undirected = to_bidirected(g)
    ds = _hops_avoiding(undirected, src, dst).cpu()
    dt = _hops_avoiding(undirected, dst, src).cpu()
    ds[dst], dt[src] = 0, 0
    d = ds + dt
    half = torch.div(d, 2, rounding_mode="floor")
    labels = 1 + torch.minimum(ds, dt) + half * (half + d % 2 - 1)
    labels[(ds < 0) | (dt < 0)] = 0
    labels[[src, dst]] = 1
    return labels
