"""DGL 2.1's diffusion transforms of a homogeneous graph: PPR, HeatKernel and GDC (dgl.PPR, ...), which replace the
edges by the entries of a dense diffusion matrix S [N, N] above a threshold, and SIGNDiffusion, which stores
T^i X for i = 1..k as node features. All are exported by topograph.transforms and at the top level.

PPR, HeatKernel and GDC build S from the dense weighted adjacency (float32, as DGL's) with an inverse, a matrix
exponential or matrix powers: O(N^3) time and O(N^2) memory, for small graphs only. The edge u -> v of the result
carries S[v, u] (S acts on column vectors indexed by destination, as DGL's), and the edges come ordered by
destination, then source (the row-major order of S's kept entries, as DGL's).

Where these differ from DGL 2.1, on purpose:
  * parallel edges u -> v add their weights in the adjacency (as khop_adj and random_walk_pe here); DGL writes
    them into one entry with an index assignment whose result torch leaves undefined (the last one on the CPU);
  * HeatKernel exponentiates t (A - I) by an eigendecomposition when that matrix is symmetric in value and by
    torch.linalg.matrix_exp otherwise (DGL: SciPy's expm, equal to rounding); DGL decides by the structure alone
    (edges in both directions), and for a bidirected graph with unequal weights either way uses the upper
    triangle only;
  * SIGNDiffusion 'rw' with weights gives 0 to a node without in-edges (DGL divides 0 by 0: NaN; its unweighted
    'rw' gives 0 too) and divides a 1-D feature node by node (DGL's reshape broadcasts it to [N, N]);
  * arguments are checked when the transform is made (alpha a probability, t >= 0, avg_degree an int >= 1, ...),
    and a missing input feature or a singular PPR system is a DGLError naming the argument.
"""
from __future__ import annotations

from typing import Optional

import torch

from . import function as fn
from ._base import DGLError
from ._positional import _count, _dense_adjacency, _edge_weight, _real
from ._structure_ops import _homogeneous
from .transforms import BaseTransform, GCNNorm, _probability, update_graph_structure

__all__ = ["PPR", "HeatKernel", "GDC", "SIGNDiffusion"]


class _Sparsified(BaseTransform):
    """The steps PPR, HeatKernel and GDC share: the dense adjacency in, the diffusion matrix S thresholded out.
    A subclass defines diffuse(adjacency) -> S, both float32 [N, N] indexed [destination, source]."""

    def __init__(self, eweight_name: str, eps, avg_degree: int):
        name = type(self).__name__
        if not isinstance(eweight_name, str):
            raise DGLError(f"{name}: eweight_name must be a str (the edge feature read and written), "
                           f"got {eweight_name!r}")
        self.eweight_name = eweight_name
        self.eps = None if eps is None else _real(eps, f"{name}: eps")
        self.avg_degree = _count(avg_degree, f"{name}: avg_degree", 1)

    def get_eps(self, num_nodes: int, mat: torch.Tensor):
        """The threshold: eps when given, else the (avg_degree * N)-th largest entry of S, so that about
        avg_degree edges per node remain (every entry with ties, all N^2 when avg_degree > N)."""
        if self.eps is not None:
            return self.eps
        if self.avg_degree > num_nodes:
            return float("-inf")
        return torch.sort(mat.flatten(), descending=True).values[self.avg_degree * num_nodes - 1]

    def diffuse(self, adjacency: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def __call__(self, g):
        name = type(self).__name__
        _homogeneous(g, name)
        weight = _edge_weight(g, self.eweight_name, name) if self.eweight_name in g.edata else None
        # rows are destinations: S multiplies column vectors of the nodes' values, as DGL's mat[dst, src]
        # (contiguous: LAPACK then sees the same layout as DGL's, for the same rounding)
        diffused = self.diffuse(_dense_adjacency(g, torch.float32, weight).T.contiguous())
        dst, src = (diffused >= self.get_eps(g.num_nodes(), diffused)).nonzero(as_tuple=True)
        new = update_graph_structure(g, {g.canonical_etypes[0]: (src, dst)}, copy_edata=False)
        new.edata[self.eweight_name] = diffused[dst, src]
        return new


class PPR(_Sparsified):
    """dgl.PPR: personalized PageRank diffusion, S = alpha (I - (1 - alpha) A)^-1 with A [N, N] the adjacency
    (A[v, u] the summed weight edata[eweight_name] of the edges u -> v, 1 each when the graph lacks that
    feature; not normalised, as DGL's), then the edges u -> v with S[v, u] >= the threshold (get_eps), S[v, u]
    in edata[eweight_name] (float32). A new graph with g's node features and no other edge features."""

    def __init__(self, alpha: float = 0.15, eweight_name: str = "w", eps=None, avg_degree: int = 5):
        self.alpha = _probability(alpha, "PPR: alpha")
        super().__init__(eweight_name, eps, avg_degree)

    def diffuse(self, adjacency):
        system = (self.alpha - 1) * adjacency
        system.diagonal().add_(1)
        try:
            return self.alpha * torch.inverse(system)
        except torch.linalg.LinAlgError as err:
            raise DGLError(f"PPR: I - (1 - alpha) A is singular for alpha={self.alpha} on this graph's weights, "
                           f"so it has no PageRank diffusion") from err


class HeatKernel(_Sparsified):
    """dgl.HeatKernel: heat kernel diffusion, S = exp(t (A - I)) with A as PPR's, then thresholded as PPR's (the
    edges u -> v with S[v, u] >= get_eps, weights S[v, u] float32 in edata[eweight_name])."""

    def __init__(self, t: float = 2.0, eweight_name: str = "w", eps=None, avg_degree: int = 5):
        self.t = _real(t, "HeatKernel: t", 0.0)
        super().__init__(eweight_name, eps, avg_degree)

    def diffuse(self, adjacency):
        generator = self.t * adjacency
        generator.diagonal().sub_(self.t)
        if torch.equal(generator, generator.T):  # V exp(e) V^T, as DGL's for a bidirected graph
            values, vectors = torch.linalg.eigh(generator, UPLO="U")
            return vectors @ torch.diag(values.exp()) @ vectors.T
        return torch.linalg.matrix_exp(generator)


class GDC(_Sparsified):
    """dgl.GDC: graph diffusion convolution, S = sum_i coefs[i] A^i (A^0 = I) with A as PPR's, then thresholded
    as PPR's (weights S[v, u] float32 in edata[eweight_name])."""

    def __init__(self, coefs, eweight_name: str = "w", eps=None, avg_degree: int = 5):
        if isinstance(coefs, (str, bytes)) or not hasattr(coefs, "__len__") or len(coefs) == 0:
            raise DGLError(f"GDC: coefs must be a non-empty list of real numbers (the weight of each power of A "
                           f"from A^0), got {coefs!r}")
        self.coefs = [_real(c, "GDC: each of coefs") for c in coefs]
        super().__init__(eweight_name, eps, avg_degree)

    def diffuse(self, adjacency):
        power = torch.eye(adjacency.shape[0], dtype=adjacency.dtype, device=adjacency.device)
        diffused = self.coefs[0] * power
        for coef in self.coefs[1:]:
            power = power @ adjacency
            diffused += coef * power
        return diffused


class SIGNDiffusion(BaseTransform):
    """dgl.SIGNDiffusion: g.ndata[f'{out_feat_name}_{i}'] = T^i X for i = 1..k, X = g.ndata[in_feat_name] ([N, ...])
    and T by diffuse_op, with w(u -> v) = edata[eweight_name] when the graph has it (otherwise, and with
    eweight_name None, 1; a name the graph lacks is not an error, as DGL's):
      'raw': (T X)[v] = sum over edges u -> v of w X[u];
      'rw': that sum divided by the sum of w over v's in-edges (the mean without weights); 0 without in-edges;
      'gcn': the 'raw' sum with GCNNorm's weights, d(u)^-1/2 w d(v)^-1/2, d the in-weight (in-degree) sums;
      'ppr': H_i = (1 - alpha) T_gcn H_(i-1) + alpha X, as APPNP's propagation.
    As DGL's, g itself gets the k features (its other data untouched) and is returned."""

    _OPS = ("raw", "rw", "gcn", "ppr")

    def __init__(self, k: int, in_feat_name: str = "feat", out_feat_name: str = "out_feat",
                 eweight_name: Optional[str] = None, diffuse_op: str = "raw", alpha: float = 0.2):
        if diffuse_op not in self._OPS:
            raise DGLError(f"SIGNDiffusion: diffuse_op must be one of {list(self._OPS)}, got {diffuse_op!r}")
        self.k = _count(k, "SIGNDiffusion: k", 0)
        self.in_feat_name, self.out_feat_name, self.eweight_name = in_feat_name, out_feat_name, eweight_name
        self.diffuse_op, self.alpha = diffuse_op, _probability(alpha, "SIGNDiffusion: alpha")

    def __call__(self, g):
        _homogeneous(g, "SIGNDiffusion")
        if self.in_feat_name not in g.ndata:
            raise DGLError(f"SIGNDiffusion: in_feat_name {self.in_feat_name!r} is not a node feature (the graph "
                           f"has {sorted(g.ndata)})")
        with g.local_scope():  # the weights and intermediate features stay out of g
            steps = self._diffuse(g)
        for i, feat in enumerate(steps, 1):
            g.ndata[f"{self.out_feat_name}_{i}"] = feat
        return g

    def _diffuse(self, g) -> list:
        """The k features T^i X, with g's data free to change (in a local scope): the working feature "h" is
        passed k times, each result then mapped by `after` (the PPR restart, the 'rw' division) when set."""
        x = g.ndata[self.in_feat_name]
        weighted = self.eweight_name is not None and self.eweight_name in g.edata
        reduce, after = fn.sum("m", "h"), None
        if self.diffuse_op in ("gcn", "ppr"):
            name = "w" if self.eweight_name is None else self.eweight_name
            if self.eweight_name is None:
                g.edata.pop("w", None)  # unweighted, as DGL's: an edge feature "w" is not a weight here
            GCNNorm(eweight_name=name)(g)
            message = fn.u_mul_e("h", name, "m")
            if self.diffuse_op == "ppr":
                after = lambda h: (1 - self.alpha) * h + self.alpha * x  # noqa: E731
        elif not weighted:
            message = fn.copy_u("h", "m")
            if self.diffuse_op == "rw":
                reduce = fn.mean("m", "h")
        else:
            message = fn.u_mul_e("h", self.eweight_name, "m")
            if self.diffuse_op == "rw":
                after = self._by_in_weight(g)
        g.ndata["h"], steps = x, []
        for _ in range(self.k):
            g.update_all(message, reduce)
            if after is not None:
                g.ndata["h"] = after(g.ndata["h"])
            steps.append(g.ndata["h"])
        return steps

    def _by_in_weight(self, g):
        """h -> h divided node by node by the node's in-weight z (the sum of its in-edges' weights: [N] for one
        weight per edge, [N, ...] for more, given trailing 1s to broadcast over h [N, ...]); 0 for a node
        without in-edges, whose z is 0."""
        g.update_all(fn.copy_e(self.eweight_name, "m"), fn.sum("m", "z"))
        in_weight, received = g.ndata["z"], g.in_degrees() > 0

        def divide(h):
            z = in_weight.reshape(tuple(in_weight.shape) + (1,) * (h.dim() - in_weight.dim())).to(h.device)
            mask = received.reshape((-1,) + (1,) * (h.dim() - 1)).to(h.device)
            return torch.where(mask, h / torch.where(mask, z, torch.ones_like(z)), torch.zeros_like(h))
        return divide
