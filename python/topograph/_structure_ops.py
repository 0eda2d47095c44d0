"""DGL 2.1's graphs made from a graph's structure or from points (dgl.transforms.functional): line_graph,
khop_graph, knn_graph and segmented_knn_graph. The edges are computed here with torch and the graph built by
the core (make_graph / batch), as _transform.py's transforms; each returns a new graph."""
from __future__ import annotations

import numbers
import warnings
from typing import Sequence

import torch

from . import _C
from ._base import DGLError
from ._graph import DGLGraph, _host_ids, _mp
from ._mutation import _on_device, _plain

_HOMOGENEOUS = (["_N"], [("_N", "_E", "_N")])


def _homogeneous(g, what: str) -> None:
    if not isinstance(g, DGLGraph):
        raise TypeError(f"{what}: expected a topograph graph, got {type(g).__name__}")
    if g.is_block or not g.is_homogeneous:
        raise DGLError(f"{what}: only a graph of one node type and one relation (as DGL's); this one has node types "
                       f"{g.ntypes} and relations {g.canonical_etypes}")


def _leaving(out_degree: torch.Tensor, nodes: torch.Tensor):
    """For items ending at nodes[i], each followed by every edge leaving that node, the edges listed by source
    (node j's out_degree[j] edges together, sources in increasing order): (i for each pair, the edge's position
    in that list), i after i, each one's edges in list order."""
    first = torch.cumsum(out_degree, 0) - out_degree  # where each node's edges start in the list
    follow = out_degree[nodes]
    item = torch.repeat_interleave(torch.arange(nodes.numel()), follow)
    offset = torch.arange(item.numel()) - torch.repeat_interleave(torch.cumsum(follow, 0) - follow, follow)
    return item, first[nodes[item]] + offset


def line_graph(g: DGLGraph, backtracking: bool = True, shared: bool = False) -> DGLGraph:
    """dgl.line_graph: node i of the result is edge i of g; an edge e1 -> e2 wherever g's edge e1 (u -> v) is
    followed by an edge e2 (v -> w), e2 != e1; backtracking=False also leaves out w == u. Edges ordered by e1,
    then by e2's id, as DGL's. shared: the result's ndata are g's edata (the same tensors). One graph (a batch
    becomes batch_size 1), g's idtype and device, as DGL's."""
    _homogeneous(g, "line_graph")
    u, v = (x.cpu().to(torch.int64) for x in g.all_edges())
    num = u.numel()
    by_src = torch.sort(u, stable=True).indices  # each node's out-edges by edge id
    e1, position = _leaving(torch.bincount(u, minlength=g.num_nodes()), v)
    e2 = by_src[position]
    keep = e2 != e1
    if not backtracking:
        keep &= v[e2] != u[e1]
    lg = _on_device(g, _plain(*_HOMOGENEOUS, {"_N": num}, [(e1[keep], e2[keep])], g.idtype))
    if shared:
        frame = _mp().frames(g).get(("e", 0))
        target = _mp().node_frame(lg, "_N")
        for name, value in (frame._data.items() if frame is not None else ()):
            target[name] = value
    return lg


def _counted(src: torch.Tensor, dst: torch.Tensor, n: int, count=None):
    """The distinct (src, dst) pairs sorted by (src, dst), each with the sum of its counts (1 each by default)."""
    key = src * max(n, 1) + dst
    distinct, inverse = torch.unique(key, return_inverse=True)
    weight = torch.ones_like(key) if count is None else count
    total = torch.zeros(distinct.numel(), dtype=torch.int64).index_add_(0, inverse, weight)
    return distinct // max(n, 1), distinct % max(n, 1), total


def khop_graph(g: DGLGraph, k: int, copy_ndata: bool = True) -> DGLGraph:
    """dgl.khop_graph: an edge u -> v for each walk of exactly k edges from u to v in g (k = 0: one self loop
    per node). copy_ndata: the node features come along (the same tensors). One graph (a batch becomes
    batch_size 1), g's idtype and device, as DGL's. k = 1: g's edges in g's order, as DGL's. k >= 2: sorted by
    (source, destination), where DGL lists each source's edges in scipy's sparse-product order: the same edges
    and sources in the same order, each source's destinations in another order (compare them sorted)."""
    _homogeneous(g, "khop_graph")
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 0:
        raise DGLError(f"khop_graph: k must be an int >= 0, got {k!r}")
    n = g.num_nodes()
    u, v = (x.cpu().to(torch.int64) for x in g.all_edges())
    step_src, step_dst, step_count = _counted(u, v, n)  # the adjacency, each pair once with its multiplicity
    out_degree = torch.bincount(step_src, minlength=n)  # step_src is sorted
    src, dst, count = torch.arange(n), torch.arange(n), torch.ones(n, dtype=torch.int64)  # walks of 0 edges
    for _ in range(int(k)):  # each walk (src -> dst, count) extended by every pair leaving dst
        walk, pair = _leaving(out_degree, dst)
        src, dst, count = _counted(src[walk], step_dst[pair], n, count[walk] * step_count[pair])
    src, dst = torch.repeat_interleave(src, count), torch.repeat_interleave(dst, count)
    if k == 1:  # g's own edges in g's order, as DGL's (scipy's A ** 1 is A, its entries as DGL listed them)
        src, dst = u, v
    new = _on_device(g, _plain(*_HOMOGENEOUS, {"_N": n}, [(src, dst)], g.idtype))
    if copy_ndata:
        _mp().carry_node_features(g, new)
    return new


def _knn_check(x, k: int, algorithm: str, dist: str, exclude_self: bool, what: str) -> int:
    if algorithm != "bruteforce-blas":
        raise DGLError(f"{what}: algorithm {algorithm!r} is not available; 'bruteforce-blas' (the default) is, "
                       f"and the exact algorithms find the same neighbours")
    if dist not in ("euclidean", "cosine"):
        raise DGLError(f"{what}: dist must be 'euclidean' or 'cosine', got {dist!r}")
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{what}: x must be a tensor, got {type(x).__name__}")
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise DGLError(f"{what}: k must be an int, got {k!r}")
    k = int(k) + (1 if exclude_self else 0)  # the point itself, removed after
    if k <= 0:
        raise DGLError(f"{what}: invalid k value; expect k > 0, got k = {k}")
    if x.dim() == 0 or x.shape[0] == 0:
        raise DGLError(f"{what}: found an empty point set")
    return k


def pairwise_squared_distance(x: torch.Tensor) -> torch.Tensor:
    """dgl.nn.pytorch.factory.pairwise_squared_distance: x [..., P, D] -> [..., P, P], the squared euclidean
    distance of every pair of points, by DGL's computation |x_i|^2 + |x_j|^2 - 2 x_i.x_j (a matmul; it can be
    slightly negative from rounding, as DGL's)."""
    norms = torch.sum(x * x, -1, True)
    return norms + norms.transpose(-1, -2) - 2 * x @ x.transpose(-1, -2)


def _nearest(points: torch.Tensor, k: int, dist: str) -> torch.Tensor:
    """[S, P, D] -> [S, P, k] (or [P, D] -> [P, k]): each point's k nearest points of its set (itself
    included), nearest first, by DGL's computation (squared distances through a matmul, torch.topk), so ties
    resolve as DGL's do."""
    if dist == "cosine":
        points = points / (torch.sqrt(torch.sum(points * points, dim=-1, keepdim=True)) + 1e-5)
    return torch.topk(pairwise_squared_distance(points), k, -1, largest=False)[1].to(torch.int64)


def _clamped(k: int, smallest: int) -> int:
    if k > smallest:
        warnings.warn(f"'k' should be less than or equal to the number of points in 'x': expect k <= {smallest}, "
                      f"got k = {k}, use k = {smallest}", UserWarning, stacklevel=3)
        return smallest
    return k


def _knn_result(segs: Sequence[int], neighbours, k: int, exclude_self: bool, device) -> DGLGraph:
    """The batch of one graph per point set: point i's edges (neighbour -> i) nearest first, i after i; with
    exclude_self each point's own edge removed (or, where more than k + 1 points coincide and it was not
    among them, its last neighbour: DGL removes a random one of those, all at distance 0)."""
    members = []
    for size, near in zip(segs, neighbours):
        src = near.reshape(-1).cpu()
        dst = torch.arange(size).repeat_interleave(k)
        if exclude_self:
            keep = src != dst
            extra = keep.view(size, k).all(1)  # no self among its k: drop its last neighbour instead
            keep.view(size, k)[extra, k - 1] = False
            src, dst = src[keep], dst[keep]
        members.append(_C.make_graph([("_N", size)], [(("_N", "_E", "_N"), _host_ids(src, torch.int64),
                                                         _host_ids(dst, torch.int64))]))
    g = DGLGraph(members[0] if len(members) == 1 else _C.batch(members))
    return g if torch.device(device).type == "cpu" else g.to(device)


def knn_graph(x: torch.Tensor, k: int, algorithm: str = "bruteforce-blas", dist: str = "euclidean",
              exclude_self: bool = False) -> DGLGraph:
    """dgl.knn_graph (algorithm 'bruteforce-blas'): x [N, D] gives a graph of N nodes with an edge j -> i for
    each of the k points j nearest to i (i itself included unless exclude_self), dist 'euclidean' or 'cosine';
    x [B, N, D] a batch of B such graphs. Edges by destination, each one's neighbours nearest first; k beyond
    the point count is clamped to it with a warning; int64 ids on x's device, as DGL's."""
    k = _knn_check(x, k, algorithm, dist, exclude_self, "knn_graph")
    if x.dim() not in (2, 3):
        raise DGLError(f"knn_graph: x must be [N, D] or [B, N, D], got shape {tuple(x.shape)}")
    points = x.unsqueeze(0) if x.dim() == 2 else x
    k = _clamped(k, points.shape[1])
    near = _nearest(points, k, dist)
    return _knn_result([points.shape[1]] * points.shape[0], list(near), k, exclude_self, x.device)


def segmented_knn_graph(x: torch.Tensor, k: int, segs: Sequence[int], algorithm: str = "bruteforce-blas",
                        dist: str = "euclidean", exclude_self: bool = False) -> DGLGraph:
    """dgl.segmented_knn_graph: x [N, D] split into point sets of segs[b] rows, a batch of one knn_graph per
    set (k clamped to the smallest set, with a warning, as DGL's)."""
    k = _knn_check(x, k, algorithm, dist, exclude_self, "segmented_knn_graph")
    segs = [int(s) for s in segs]
    if x.dim() != 2 or sum(segs) != x.shape[0] or min(segs, default=0) <= 0:
        raise DGLError(f"segmented_knn_graph: segs {segs} must be positive and add up to the rows of x "
                       f"[N, D] (got shape {tuple(x.shape)})")
    k = _clamped(k, min(segs))
    near = [_nearest(part, k, dist) for part in torch.split(x, segs)]
    return _knn_result(segs, near, k, exclude_self, x.device)


def radius_graph(x: torch.Tensor, r: float, p: float = 2, self_loop: bool = False,
                 compute_mode: str = "donot_use_mm_for_euclid_dist", get_distances: bool = False):
    """dgl.radius_graph: an edge i -> j between the points x [N, D] at distance <= r (p-norm; no self loops
    unless self_loop), by source then destination; with get_distances, also their distances [E, 1]."""
    if r <= 0:
        raise DGLError(f"radius_graph: r must be > 0, got {r}")
    if x.dim() != 2 or x.shape[0] == 0:
        raise DGLError(f"radius_graph: x must be a non-empty point set [N, D], got shape {tuple(x.shape)}")
    distances = torch.cdist(x, x, p=p, compute_mode=compute_mode)
    if not self_loop:
        distances.fill_diagonal_(r + 1)
    src, dst = torch.nonzero(distances <= r, as_tuple=True)
    from ._construct import graph

    g = graph((src, dst), num_nodes=x.shape[0], device=x.device)
    return (g, distances[src, dst].unsqueeze(-1)) if get_distances else g


# DGLGraph's method of the same name, as DGL's; set here to keep _graph.py small.
DGLGraph.line_graph = lambda self, backtracking=True, shared=False: line_graph(self, backtracking, shared)
