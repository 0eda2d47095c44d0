"""DGL 2.1's positional encodings and whole-graph matrices of a homogeneous graph (dgl.random_walk_pe, dgl.lap_pe
and its deprecated alias laplacian_pe, dgl.shortest_dist, dgl.khop_adj) and its feature casts (dgl.to_half,
to_float, to_double, to_bfloat16), computed with torch on the graph's device.

The matrices are dense [N, N], as DGL's (random_walk_pe's powers, khop_adj) or as its fallback for small graphs
(lap_pe's eigendecomposition): these functions are for the small graphs positional encodings are used on
(molecules, graph-classification batches), not for million-node graphs.

Where these differ from DGL 2.1, on purpose:
  * the results are on g's device (DGL returns random_walk_pe, lap_pe and khop_adj on the CPU);
  * random_walk_pe with edge weights sums the weights of parallel edges (DGL multiplies that sum by the number of
    parallel edges again: A[u, v] = count * sum of weights, an artefact of multiplying two SciPy matrices), and
    works on a graph of one edge (DGL squeezes its weight [1] to a scalar, which SciPy refuses);
  * lap_pe with k >= N and padding=False raises DGLError (DGL's check is `assert "string"`, which never fails,
    and it pads anyway); lap_pe's random signs come from torch's generator (DGL's from NumPy's), and its
    eigenvectors are exact (DGL's come from ARPACK with tol=1e-2 when k + 1 < N - 1);
  * random_walk_pe with k = 0 and shortest_dist with a negative root are errors (DGL returns an [N, 1] encoding
    for k = 0, and counts a negative root from the end, its return_paths then failing with an IndexError);
  * random_walk_pe, lap_pe, shortest_dist and khop_adj refuse a block (the casts accept one).
"""
from __future__ import annotations

import numbers
import warnings
from typing import Optional

import torch

from ._base import DGLError, count_arg as _count
from ._graph import DGLGraph, _mp
from ._structure_ops import _homogeneous

__all__ = ["random_walk_pe", "lap_pe", "laplacian_pe", "shortest_dist", "khop_adj", "to_half", "to_float",
           "to_double", "to_bfloat16", "norm_by_dst", "laplacian_lambda_max"]

_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)




def _real(value, what: str, minimum: Optional[float] = None) -> float:
    """value as a float (bool and non-numbers refused, and values below minimum)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
            (minimum is not None and not value >= minimum):
        bound = "" if minimum is None else f" >= {minimum:g}"
        raise DGLError(f"{what} must be a real number{bound}, got {value!r}")
    return float(value)


def _edges(g: DGLGraph):
    """(sources, destinations) as int64 on g's device, by edge id."""
    u, v = g.edges()
    return u.to(torch.int64), v.to(torch.int64)


def _dense_adjacency(g: DGLGraph, dtype: torch.dtype, weight: Optional[torch.Tensor] = None) -> torch.Tensor:
    """A [N, N] on g's device, A[u, v] = the number of edges u -> v (or the sum of their weights [E])."""
    n = g.num_nodes()
    u, v = _edges(g)
    values = torch.ones(u.numel(), dtype=dtype, device=u.device) if weight is None else weight.to(u.device, dtype)
    return torch.zeros((n, n), dtype=dtype, device=u.device).index_put_((u, v), values, accumulate=True)


def _edge_weight(g: DGLGraph, name: str, what: str) -> torch.Tensor:
    """Edge feature `name` as a 1-D float64 tensor [E] ([E] or [E, 1] accepted, as DGL's squeeze)."""
    if name not in g.edata:
        raise DGLError(f"{what}: eweight_name {name!r} is not an edge feature (the graph has {sorted(g.edata)})")
    w = g.edata[name]
    if w.dim() == 2 and w.shape[1] == 1:
        w = w[:, 0]
    if w.dim() != 1:
        raise DGLError(f"{what}: edge feature {name!r} must be [E] or [E, 1] (one weight per edge), got "
                       f"{tuple(w.shape)}")
    return w.to(torch.float64)


def random_walk_pe(g: DGLGraph, k: int, eweight_name: Optional[str] = None) -> torch.Tensor:
    """dgl.random_walk_pe: float32 [N, k], column i-1 the probability that an i-step random walk from each node
    ends where it started (the diagonal of RW^i, i = 1..k). RW = A with each row divided by its sum, A[u, v] the
    number of edges u -> v or, with eweight_name (an edge feature [E] or [E, 1]), the sum of their weights; a node
    without out-edges keeps a zero row (DGL divides by rowsum + 1e-30), so its walks end at once and its
    encoding is 0. Computed in float64: k products of the sparse RW with the dense [N, N] power, O(k E N) time and
    O(N^2) memory. Unlike DGL, parallel weighted edges count their summed weight once (DGL multiplies it by
    their number again) and the result is on g's device (DGL's on the CPU); k must be >= 1."""
    _homogeneous(g, "random_walk_pe")
    k = _count(k, "random_walk_pe: k", 1)
    n = g.num_nodes()
    u, v = _edges(g)
    w = torch.ones(u.numel(), dtype=torch.float64, device=u.device) if eweight_name is None else \
        _edge_weight(g, eweight_name, "random_walk_pe").to(u.device)
    if n == 0:
        return torch.zeros((0, k), dtype=torch.float32, device=u.device)
    out_weight = torch.zeros(n, dtype=torch.float64, device=u.device).index_add(0, u, w)
    step = torch.sparse_coo_tensor(torch.stack([u, v]), w / (out_weight[u] + 1e-30), (n, n)).coalesce()
    power = step.to_dense()
    landing = [power.diagonal()]
    for _ in range(k - 1):
        power = torch.sparse.mm(step, power)
        landing.append(power.diagonal())
    return torch.stack(landing, dim=-1).to(torch.float32)


def lap_pe(g: DGLGraph, k: int, padding: bool = False, return_eigval: bool = False):
    """dgl.lap_pe: the Laplacian positional encoding, float32 [N, k]: the eigenvectors of L = I - D^-1/2 A D^-1/2
    (A[u, v] the number of edges u -> v, D the in-degrees clipped to >= 1, as DGL's) for its k smallest
    eigenvalues after the smallest one, each column times a random sign (torch's generator; DGL draws from
    NumPy's). return_eigval: (encoding, eigenvalues float32 [k]).

    L is made dense and decomposed exactly: torch.linalg.eigh when A is symmetric (a bidirected graph, which the
    encoding is meant for), else torch.linalg.eig, eigenvalues ordered by (real, imaginary) part as NumPy's and the
    real parts kept, as DGL's. That is O(N^3) time and O(N^2) memory (DGL uses ARPACK with tol=1e-2 on larger
    graphs). Within a repeated eigenvalue the vectors are one basis of its eigenspace (any rotation is as valid).

    With N <= k there are only N - 1 such vectors: padding=True appends zero columns (and NaN eigenvalues) up to
    k; padding=False raises DGLError (DGL 2.1 means to, but its check never fails and it pads anyway)."""
    _homogeneous(g, "lap_pe")
    k = _count(k, "lap_pe: k", 1)
    n = g.num_nodes()
    if n <= k and not padding:
        raise DGLError(f"lap_pe: k={k} needs more than k nodes (the smallest eigenvalue's vector is left out) and "
                       f"the graph has {n}; pass padding=True for zero columns and NaN eigenvalues past the "
                       f"{max(n - 1, 0)} it has")
    adjacency = _dense_adjacency(g, torch.float64)
    scale = g.in_degrees().to(adjacency.device, torch.float64).clamp(min=1) ** -0.5
    laplacian = torch.eye(n, dtype=torch.float64, device=adjacency.device) - \
        scale[:, None] * adjacency * scale[None, :]
    if torch.equal(adjacency, adjacency.T):  # D^-1/2 A D^-1/2 is symmetric exactly when A is
        values, vectors = torch.linalg.eigh(laplacian)  # ascending
    else:
        values, vectors = torch.linalg.eig(laplacian)
        order = torch.argsort(values.imag, stable=True)
        order = order[torch.argsort(values.real[order], stable=True)]  # by real part, then imaginary part
        values, vectors = values.real[order], vectors.real[:, order]
    found = max(min(n - 1, k), 0)
    values, vectors = values[1:found + 1], vectors[:, 1:found + 1]
    sign = (torch.rand(found) > 0.5).to(torch.float64) * 2 - 1
    encoding = (vectors * sign.to(vectors.device)).to(torch.float32)
    eigval = values.to(torch.float32)
    if found < k:
        encoding = torch.cat([encoding, encoding.new_zeros((n, k - found))], dim=1)
        eigval = torch.cat([eigval, eigval.new_full((k - found,), float("nan"))])
    return (encoding, eigval) if return_eigval else encoding


def laplacian_pe(g: DGLGraph, k: int, padding: bool = False, return_eigval: bool = False):
    """dgl.laplacian_pe: DGL's deprecated name of lap_pe (a FutureWarning, then lap_pe)."""
    warnings.warn("laplacian_pe is deprecated (as dgl.laplacian_pe): use lap_pe", FutureWarning, stacklevel=2)
    return lap_pe(g, k, padding, return_eigval)


def _bfs(u: torch.Tensor, v: torch.Tensor, n: int, roots: torch.Tensor) -> torch.Tensor:
    """Directed hop distances [R, N] (int64, -1 where unreachable) from each root, every root advanced one
    level at a time: the next level is the unvisited nodes that the sparse A^T times the frontier reaches."""
    device = u.device
    reverse = torch.sparse_coo_tensor(torch.stack([v, u]), torch.ones(u.numel(), device=device), (n, n))
    reverse = reverse.coalesce()
    columns = torch.arange(roots.numel(), device=device)
    dist = torch.full((n, roots.numel()), -1, dtype=torch.int64, device=device)  # [N, R]: node by root
    dist[roots, columns] = 0
    frontier = torch.zeros((n, roots.numel()), device=device)
    frontier[roots, columns] = 1
    level = 0
    while True:
        level += 1
        reached = (torch.sparse.mm(reverse, frontier) > 0) & (dist < 0)
        if not bool(reached.any()):
            return dist.T.contiguous()
        dist[reached] = level
        frontier = reached.to(frontier.dtype)


def _bfs_predecessors(u: torch.Tensor, v: torch.Tensor, dist: torch.Tensor) -> torch.Tensor:
    """SciPy's dijkstra predecessors for hop distances dist [R, N]: for node j at distance d >= 1 from a root, the
    highest-numbered node at distance d - 1 with an edge to j (its queue pops equal distances highest index
    first, and the first node popped sets j's predecessor), -1 elsewhere. Roots in chunks: [R, E] at once."""
    pred = torch.full_like(dist, -1)
    chunk = max(1, (1 << 22) // max(u.numel(), 1))
    for first in range(0, dist.shape[0], chunk):
        d = dist[first:first + chunk]
        du, dv = d[:, u], d[:, v]
        candidate = torch.where((dv > 0) & (du == dv - 1), u.expand_as(du), -1)
        pred[first:first + chunk].scatter_reduce_(1, v.expand_as(du), candidate, "amax")
    return pred


def _floyd_warshall_predecessors(u: torch.Tensor, v: torch.Tensor, n: int) -> torch.Tensor:
    """SciPy's floyd_warshall predecessors [N, N] of the unweighted graph (-1: none): pair (i, j) takes k's
    predecessor of j when going through k is strictly shorter, k = 0..N-1 in turn, one [N, N] step per k."""
    device = u.device
    dist = torch.full((n, n), float("inf"), device=device)
    dist[u, v] = 1
    dist.fill_diagonal_(0)
    rows = torch.arange(n, device=device)[:, None].expand(n, n)
    pred = torch.where(torch.isfinite(dist), rows, -1)
    pred.fill_diagonal_(-1)
    for k in range(n):
        through = dist[:, k:k + 1] + dist[k:k + 1, :]
        shorter = through < dist
        dist = torch.where(shorter, through, dist)
        pred = torch.where(shorter, pred[k:k + 1, :].expand(n, n), pred)
    return pred


def shortest_dist(g: DGLGraph, root: Optional[int] = None, return_paths: bool = False):
    """dgl.shortest_dist: directed hop distances (edges unweighted), int64, -1 where unreachable: [N, N] (row i
    from node i), or [N] from `root`. return_paths: (distances, paths), paths int64 [N, N, L] (or [N, L]) with
    paths[i, j] the edge ids from i to j in order, padded with -1 (all -1 for i == j or j unreachable), L the
    longest distance. Both on g's device.

    Among equally short paths, the one DGL returns: DGL takes SciPy's predecessors and, between two nodes, the
    lowest edge id (its edge_ids). SciPy's Dijkstra (a priority queue since about SciPy 1.15; 1.17 in DGL 2.1's
    environment here) makes j's predecessor its highest-numbered in-neighbour one hop nearer the root; for all
    pairs (root=None) of a graph with E >= N^2 / 4 edges (parallel edges and self loops counted) SciPy runs
    Floyd-Warshall instead, whose choice is reproduced by running it (N steps of O(N^2)). With an older SciPy
    (a Fibonacci heap) DGL may pick other paths of the same length. Distances come from a breadth-first search
    of all roots at once, one sparse product per level. A negative root is an error (SciPy counts it from the
    end, then DGL's path walk fails); DGL fails for return_paths on a graph without nodes, which gives empty
    paths here."""
    _homogeneous(g, "shortest_dist")
    n = g.num_nodes()
    if root is not None:
        if isinstance(root, torch.Tensor) and root.numel() == 1 and not root.dtype.is_floating_point:
            root = int(root)
        if isinstance(root, bool) or not isinstance(root, numbers.Integral) or not 0 <= root < n:
            raise DGLError(f"shortest_dist: root must be a node id in [0, {n}) or None, got {root!r}")
    u, v = _edges(g)
    roots = torch.arange(n, device=u.device) if root is None else torch.tensor([int(root)], device=u.device)
    dist = _bfs(u, v, n, roots)
    if not return_paths:
        return dist[0] if root is not None else dist
    if root is None and u.numel() >= n * n / 4:
        pred = _floyd_warshall_predecessors(u, v, n)
    else:
        pred = _bfs_predecessors(u, v, dist)
    longest = int(dist.max()) if dist.numel() else 0
    paths = torch.full((roots.numel(), n, longest), -1, dtype=torch.int64, device=u.device)
    # walk back from every reachable target at once: step s writes the path's edge at position d - 1 - s
    r, j = (dist > 0).nonzero(as_tuple=True)
    d, node = dist[r, j], j
    for s in range(longest):
        before = pred[r, node]
        paths[r, j, d - 1 - s] = g.edge_ids(before, node).to(device=u.device, dtype=torch.int64)
        left = d > s + 1
        r, j, d, node = r[left], j[left], d[left], before[left]
    return (dist[0], paths[0]) if root is not None else (dist, paths)


def khop_adj(g: DGLGraph, k: int) -> torch.Tensor:
    """dgl.khop_adj: A^k as a dense float32 [N, N], A[u, v] the number of edges u -> v (rows are sources, as
    DGL's adj_external(transpose=False)), so entry (u, v) counts the k-edge walks from u to v; k = 0 gives the
    identity, as DGL's. Computed in float64 (exact below 2^53; DGL multiplies int64), on g's device (DGL's on the
    CPU)."""
    _homogeneous(g, "khop_adj")
    k = _count(k, "khop_adj: k", 0)
    return torch.linalg.matrix_power(_dense_adjacency(g, torch.float64), k).to(torch.float32)


def _cast_features(g: DGLGraph, dtype: torch.dtype) -> DGLGraph:
    """g.clone() with every floating-point node and edge feature cast to dtype; the others (integer, bool,
    complex) are the same tensors, as DGL's frames cast only float16 / bfloat16 / float32 / float64 columns."""
    if not isinstance(g, DGLGraph):
        raise TypeError(f"expected a topograph graph, got {type(g).__name__}")
    new = g.clone()
    for frame in _mp().frames(new).values():
        for name, value in list(frame.items()):
            if value.dtype in _FLOATS and value.dtype != dtype:
                frame[name] = value.to(dtype)
    return new


def to_half(g: DGLGraph) -> DGLGraph:
    """dgl.to_half: a copy of g (the same structure, feature dicts of its own) whose floating-point node and edge
    features are float16; g is unchanged."""
    return _cast_features(g, torch.float16)


def to_float(g: DGLGraph) -> DGLGraph:
    """dgl.to_float: as to_half, to float32."""
    return _cast_features(g, torch.float32)


def to_double(g: DGLGraph) -> DGLGraph:
    """dgl.to_double: as to_half, to float64."""
    return _cast_features(g, torch.float64)


def to_bfloat16(g: DGLGraph) -> DGLGraph:
    """dgl.to_bfloat16: as to_half, to bfloat16."""
    return _cast_features(g, torch.bfloat16)


def norm_by_dst(g: DGLGraph, etype=None) -> torch.Tensor:
    """dgl.norm_by_dst: per edge, 1 / the in-degree of its destination [E] (float32), as a mean aggregation
    weights it."""
    _, v = g.edges(etype=etype)
    return 1.0 / g.in_degrees(etype=etype).to(torch.float32)[v.long()]


def laplacian_lambda_max(g: DGLGraph) -> list:
    """dgl.laplacian_lambda_max: per graph of the batch, the largest eigenvalue (real part) of its normalised
    Laplacian I - D^-1/2 A^T D^-1/2 (D the in-degrees clamped to >= 1), as ChebConv takes it; dense per graph."""
    from ._construct import unbatch
    try:
        import numpy  # not a dependency: DGL's type where it is there (scipy's eigenvalue, a float with .item())
        scalar = numpy.float64
    except ImportError:
        scalar = float

    out = []
    for member in unbatch(g):
        _homogeneous(member, "laplacian_lambda_max")
        norm = member.in_degrees().to(device="cpu", dtype=torch.float64).clamp(min=1).pow(-0.5)
        a = _dense_adjacency(member, torch.float64).T
        laplacian = torch.eye(member.num_nodes(), dtype=torch.float64) - norm[:, None] * a.cpu() * norm[None, :]
        values = torch.linalg.eigvals(laplacian) if member.num_nodes() else torch.zeros(1, dtype=torch.complex128)
        out.append(scalar(values.real[values.abs().argmax()]))
    return out
