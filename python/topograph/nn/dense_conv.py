"""dgl.nn's dense convolutions (DGL 2.1 names, parameters and equations): DenseGraphConv, DenseSAGEConv and
DenseChebConv take a dense adjacency adj [N_dst, N_src] (adj[d, s]: the edge s -> d, or its weight) instead of
a graph, for small graphs and pooling models (DiffPool) whose adjacency is itself learned and dense. Plain
torch matmuls."""
from __future__ import annotations

from typing import Optional

import torch

from .conv import optional_bias


def _rows(norm: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return norm.view(norm.shape + (1,) * (like.dim() - 1)).to(like.device)


class DenseGraphConv(torch.nn.Module):
    """GraphConv on a dense adjacency: h = D_dst^-1/2 adj D_src^-1/2 x W (norm 'both'), D_dst^-1 adj x W
    ('right'), adj x W ('none'); degrees are adj's row / column sums clamped to >= 1; + bias, activation."""

    def __init__(self, in_feats: int, out_feats: int, norm: str = "both", bias: bool = True, activation=None):
        super().__init__()
        if norm not in ("both", "right", "none"):
            raise ValueError(f"DenseGraphConv: norm must be 'both', 'right' or 'none', got {norm!r}")
        self._in_feats, self._out_feats, self._norm, self._activation = in_feats, out_feats, norm, activation
        self.weight = torch.nn.Parameter(torch.empty(in_feats, out_feats))
        optional_bias(self, out_feats, bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        torch.nn.init.xavier_uniform_(self.weight)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)

    def forward(self, adj: torch.Tensor, feat: torch.Tensor) -> torch.Tensor:
        adj = adj.to(feat)
        x = feat * _rows(adj.sum(0).clamp(min=1).pow(-0.5), feat) if self._norm == "both" else feat
        # the smaller width crosses the adjacency, as DGL orders the two products
        rst = adj @ (x @ self.weight) if self._in_feats > self._out_feats else (adj @ x) @ self.weight
        if self._norm != "none":
            dst = adj.sum(1).clamp(min=1)
            rst = rst * _rows(dst.pow(-0.5) if self._norm == "both" else 1.0 / dst, rst)
        if self.bias is not None:
            rst = rst + self.bias
        return self._activation(rst) if self._activation is not None else rst


class DenseSAGEConv(torch.nn.Module):
    """GraphSAGE's gcn aggregator on a dense adjacency: h = fc((adj x_src + x_dst) / (in-degree + 1)), then
    activation and norm; feat is x or (x_src, x_dst); feat_drop on the inputs."""

    def __init__(self, in_feats: int, out_feats: int, feat_drop: float = 0.0, bias: bool = True, norm=None,
                 activation=None):
        super().__init__()
        self._in_feats, self._out_feats, self._norm, self.activation = in_feats, out_feats, norm, activation
        self.feat_drop = torch.nn.Dropout(feat_drop)
        self.fc = torch.nn.Linear(in_feats, out_feats, bias=bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        torch.nn.init.xavier_uniform_(self.fc.weight, gain=torch.nn.init.calculate_gain("relu"))

    def forward(self, adj: torch.Tensor, feat) -> torch.Tensor:
        if isinstance(feat, (tuple, list)):
            feat_src, feat_dst = self.feat_drop(feat[0]), self.feat_drop(feat[1])
        else:
            feat_src = feat_dst = self.feat_drop(feat)
        adj = adj.to(feat_src)
        rst = self.fc((adj @ feat_src + feat_dst) / (adj.sum(1, keepdim=True) + 1))
        if self.activation is not None:
            rst = self.activation(rst)
        return self._norm(rst) if self._norm is not None else rst


class DenseChebConv(torch.nn.Module):
    """ChebConv on a dense adjacency: L = I - D^-1/2 adj D^-1/2 (D the row sums clamped to >= 1), L~ = 2 L /
    lambda_max - I, h = sum_k T_k(L~) x W_k + bias. lambda_max defaults to L's largest eigenvalue (real part;
    DGL 2.1's default calls torch.eig, which torch 2 removed, so there it fails)."""

    def __init__(self, in_feats: int, out_feats: int, k: int, bias: bool = True):
        super().__init__()
        self._in_feats, self._out_feats, self._k = in_feats, out_feats, k
        self.W = torch.nn.Parameter(torch.empty(k, in_feats, out_feats))
        optional_bias(self, out_feats, bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)
        for i in range(self._k):
            torch.nn.init.xavier_normal_(self.W[i], torch.nn.init.calculate_gain("relu"))

    def forward(self, adj: torch.Tensor, feat: torch.Tensor, lambda_max: Optional[float] = None) -> torch.Tensor:
        a = adj.to(feat)
        n = a.shape[0]
        d = a.sum(1).clamp(min=1).pow(-0.5)
        eye = torch.eye(n, dtype=a.dtype, device=a.device)
        laplacian = eye - d[:, None] * a * d[None, :]
        if lambda_max is None:
            lambda_max = torch.linalg.eigvals(laplacian.detach()).real.max()
        l_hat = 2 * laplacian / lambda_max - eye
        z = [eye]
        for i in range(1, self._k):
            z.append(l_hat if i == 1 else 2 * l_hat @ z[-1] - z[-2])
        rst = (torch.stack(z, 0) @ feat.unsqueeze(0) @ self.W).sum(0)
        return rst + self.bias if self.bias is not None else rst
