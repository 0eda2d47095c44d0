"""More of dgl.nn's convolutions (DGL 2.1), same names, parameters (by name, so a DGL state_dict loads),
initialisation and equations, each a few of Topograph's ops: TAGConv (Du et al.), ChebConv (Defferrard et
al.), EdgeConv (Wang et al., DGCNN), GatedGraphConv (Li et al.), NNConv (Gilmer et al., edge-conditioned),
GCN2Conv (Chen et al., GCNII) and GMMConv (Monti et al., MoNet).
Checked against DGL 2.1 with the same weights (tests/test_conv_extra.py)."""
from __future__ import annotations

import math
import warnings
from typing import Optional

import torch

from .. import ops
from .._base import DGLError
from ..readout import broadcast_nodes
from .conv import EdgeWeightNorm, Features, _check_in_degrees, _pair, linear_residual, optional_bias


def _one_relation(graph, what: str) -> None:
    if graph.is_block or not graph.is_homogeneous:
        raise DGLError(f"{what}: takes a graph of one node type and one relation (as DGL's), got node types "
                       f"{graph.ntypes} and relations {graph.canonical_etypes}")


def _in_degree_norm(graph, feat: torch.Tensor) -> torch.Tensor:
    """in-degree^-1/2 (clamped to >= 1) shaped [N, 1, ...] to scale feat's rows, as DGL's TAGConv / ChebConv."""
    norm = torch.pow(graph.in_degrees().to(feat).clamp(min=1), -0.5)
    return norm.view(-1, *[1] * (feat.dim() - 1)).to(feat.device)


class TAGConv(torch.nn.Module):
    """Topology adaptive graph convolution, as dgl.nn.TAGConv: h = lin([x, A x, ..., A^k x]) with A =
    D^-1/2 adj D^-1/2 (D the in-degrees, clamped to >= 1, on both sides), or, with edge_weight [E], the weights
    normalised by EdgeWeightNorm('both'); then activation. lin: Linear(in * (k + 1), out, bias), its weight
    Xavier-normal with ReLU gain (its bias torch's default), as DGL's."""

    def __init__(self, in_feats: int, out_feats: int, k: int = 2, bias: bool = True, activation=None):
        super().__init__()
        self._in_feats, self._out_feats, self._k, self._activation = in_feats, out_feats, k, activation
        self.lin = torch.nn.Linear(in_feats * (k + 1), out_feats, bias=bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        torch.nn.init.xavier_normal_(self.lin.weight, gain=torch.nn.init.calculate_gain("relu"))

    def forward(self, graph, feat: torch.Tensor, edge_weight: Optional[torch.Tensor] = None) -> torch.Tensor:
        _one_relation(graph, "TAGConv")
        if edge_weight is not None:
            weight = EdgeWeightNorm("both")(graph, edge_weight)
            propagate = lambda x: ops.u_mul_e_sum(graph, x, weight.view(-1, *[1] * (x.dim() - 1)))  # noqa: E731
        else:
            norm = _in_degree_norm(graph, feat)
            propagate = lambda x: ops.copy_u_sum(graph, x * norm) * norm  # noqa: E731
        stack = [feat]
        for _ in range(self._k):
            stack.append(propagate(stack[-1]))
        rst = self.lin(torch.cat(stack, dim=-1))
        return self._activation(rst) if self._activation is not None else rst


class ChebConv(torch.nn.Module):
    """Chebyshev spectral graph convolution, as dgl.nn.ChebConv: X_0 = x, X_1 = L~ x, X_i = 2 L~ X_{i-1} -
    X_{i-2} with L~ = 2 L / lambda_max - I and L = I - D^-1/2 adj D^-1/2 (D the in-degrees, clamped to >= 1);
    h = activation(linear([X_0, ..., X_{k-1}])). lambda_max: one per graph of the batch (a list or a [B] /
    [B, 1] tensor), 2 for each with a warning when None, as DGL's. linear: Linear(k * in, out, bias), torch's
    default initialisation (DGL's has no reset of its own)."""

    def __init__(self, in_feats: int, out_feats: int, k: int, activation=torch.nn.functional.relu,
                 bias: bool = True):
        super().__init__()
        self._k, self._in_feats, self._out_feats, self.activation = k, in_feats, out_feats, activation
        self.linear = torch.nn.Linear(k * in_feats, out_feats, bias)

    def forward(self, graph, feat: torch.Tensor, lambda_max=None) -> torch.Tensor:
        _one_relation(graph, "ChebConv")
        norm = torch.pow(graph.in_degrees().to(feat).clamp(min=1), -0.5).unsqueeze(-1)  # [N, 1]

        def laplacian_free(x):  # D^-1/2 adj D^-1/2 x
            return ops.copy_u_sum(graph, x * norm) * norm

        if lambda_max is None:
            warnings.warn("ChebConv: lambda_max is not provided, using default value of 2 (as DGL's)",
                          UserWarning, stacklevel=2)
            lambda_max = [2] * graph.batch_size
        if isinstance(lambda_max, (list, tuple)):
            lambda_max = torch.tensor([float(x) for x in lambda_max]).to(feat)
        if lambda_max.dim() == 1:
            lambda_max = lambda_max.unsqueeze(-1)  # [B, 1]
        re_norm = 2.0 / broadcast_nodes(graph, lambda_max)  # [N, 1]
        x_0, xs = feat, [feat]
        if self._k > 1:
            x_1 = -re_norm * laplacian_free(x_0) + x_0 * (re_norm - 1)
            xs.append(x_1)
        for _ in range(2, self._k):
            x_i = -2 * re_norm * laplacian_free(x_1) + x_1 * 2 * (re_norm - 1) - x_0
            xs.append(x_i)
            x_1, x_0 = x_i, x_1
        h = self.linear(torch.cat(xs, dim=1))
        return self.activation(h) if self.activation else h


class EdgeConv(torch.nn.Module):
    """EdgeConv (DGCNN), as dgl.nn.EdgeConv: h_d = max_{s -> d} (theta(x_d - x_s) + phi(x_d)), batch_norm
    (BatchNorm1d over the edges' values) before the max; a graph or a block, features [N, in] or a pair. A
    destination without in-edges is a DGLError unless allow_zero_in_degree (then it gets 0, as DGL's
    update_all). theta, phi: Linear(in, out), torch's default initialisation, as DGL's."""

    def __init__(self, in_feat: int, out_feat: int, batch_norm: bool = False, allow_zero_in_degree: bool = False):
        super().__init__()
        self.batch_norm, self._allow_zero_in_degree = batch_norm, allow_zero_in_degree
        self.theta = torch.nn.Linear(in_feat, out_feat)
        self.phi = torch.nn.Linear(in_feat, out_feat)
        if batch_norm:
            self.bn = torch.nn.BatchNorm1d(out_feat)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        self._allow_zero_in_degree = set_value

    def forward(self, g, feat: Features) -> torch.Tensor:
        if not self._allow_zero_in_degree and bool((g.in_degrees() == 0).any()):
            raise DGLError("EdgeConv: some destination has no in-edge, so its output would be invalid; add self "
                           "loops (topograph.add_self_loop) or pass allow_zero_in_degree=True")
        h_src, h_dst = _pair(g, feat, "EdgeConv")
        theta = self.theta(ops.v_sub_u(g, h_dst, h_src))  # [E, out]
        e = ops.e_add_v(g, theta, self.phi(h_dst))
        if self.batch_norm:
            e = self.bn(e)
        return ops.gspmm_zero_empty(g, "copy_rhs", "max", None, e)


class GatedGraphConv(torch.nn.Module):
    """Gated graph convolution, as dgl.nn.GatedGraphConv: x padded with zeros to out_feats, then n_steps times
    a_d = sum_{s -> d} linears[type of the edge](h_s) and h = gru(a, h). etypes [E] (ints in [0, n_etypes)) is
    needed with n_etypes > 1; with one type and no etypes every edge uses linears[0]. Parameters as DGL's:
    linears (Xavier-normal weights, ReLU gain, zero biases) and gru (torch's GRUCell init)."""

    def __init__(self, in_feats: int, out_feats: int, n_steps: int, n_etypes: int, bias: bool = True):
        super().__init__()
        if in_feats > out_feats:
            raise DGLError(f"GatedGraphConv: out_feats ({out_feats}) must be no less than in_feats ({in_feats})")
        self._in_feats, self._out_feats, self._n_steps, self._n_etypes = in_feats, out_feats, n_steps, n_etypes
        self.linears = torch.nn.ModuleList([torch.nn.Linear(out_feats, out_feats) for _ in range(n_etypes)])
        self.gru = torch.nn.GRUCell(out_feats, out_feats, bias=bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        gain = torch.nn.init.calculate_gain("relu")
        self.gru.reset_parameters()
        for linear in self.linears:
            torch.nn.init.xavier_normal_(linear.weight, gain=gain)
            torch.nn.init.zeros_(linear.bias)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        self._allow_zero_in_degree = set_value

    def forward(self, graph, feat: torch.Tensor, etypes: Optional[torch.Tensor] = None) -> torch.Tensor:
        _one_relation(graph, "GatedGraphConv")
        typed = not (self._n_etypes == 1 and etypes is None)
        if typed:
            if etypes is None:
                raise DGLError(f"GatedGraphConv: etypes [E] is needed with n_etypes = {self._n_etypes}")
            etypes = torch.as_tensor(etypes).to(feat.device)
            if etypes.shape != (graph.num_edges(),):
                raise DGLError(f"GatedGraphConv: etypes must be one type per edge [{graph.num_edges()}], got "
                               f"shape {tuple(etypes.shape)}")
            if self._n_etypes != 1 and etypes.numel() and (int(etypes.min()) < 0 or
                                                           int(etypes.max()) >= self._n_etypes):
                raise DGLError(f"GatedGraphConv: edge type indices out of range [0, {self._n_etypes}): got "
                               f"{int(etypes.min())}..{int(etypes.max())}")
            src = graph.all_edges()[0].to(device=feat.device, dtype=torch.int64)
            groups = [(etypes == i).nonzero().flatten() for i in range(self._n_etypes)]
        feat = torch.cat([feat, feat.new_zeros((feat.shape[0], self._out_feats - feat.shape[1]))], -1)
        for _ in range(self._n_steps):
            if not typed:
                a = ops.copy_u_sum(graph, self.linears[0](feat))
            else:  # each edge's message by its type's linear (edges of no type: 0, as DGL's)
                messages = feat.new_zeros((graph.num_edges(), self._out_feats))
                for linear, eids in zip(self.linears, groups):
                    if eids.numel():
                        m = linear(feat[src[eids]])  # under autocast in its lower dtype: the messages' then
                        messages = messages.to(m.dtype).index_put((eids,), m)
                a = ops.copy_e_sum(graph, messages)
            feat = self.gru(a, feat)
        return feat


class NNConv(torch.nn.Module):
    """Edge-conditioned convolution, as dgl.nn.NNConv: h_d = aggregate_{s -> d} (x_s W_e) (+ res_fc(x_d))
    (+ bias), W_e = edge_func(efeat).view(-1, in, out) per edge; aggregator_type 'sum', 'mean' or 'max' (0
    for a destination without in-edges, as DGL's update_all). residual: Linear(in_dst, out, bias=False)
    (Xavier-normal, ReLU gain) or the identity when in_dst == out; bias zeros; unset ones are None buffers,
    as DGL's, so the state_dicts have the same keys. A graph or a block; features [N, in] or a pair."""

    def __init__(self, in_feats, out_feats: int, edge_func, aggregator_type: str = "mean", residual: bool = False,
                 bias: bool = True):
        super().__init__()
        in_src, in_dst = in_feats if isinstance(in_feats, (tuple, list)) else (in_feats, in_feats)
        self._in_src_feats, self._in_dst_feats, self._out_feats = in_src, in_dst, out_feats
        self.edge_func = edge_func
        if aggregator_type not in ("sum", "mean", "max"):
            raise KeyError(f"NNConv: aggregator type {aggregator_type!r} not recognized ('sum', 'mean' or 'max')")
        self._aggre_type = aggregator_type
        linear_residual(self, in_dst, out_feats, residual)
        optional_bias(self, out_feats, bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)
        if isinstance(self.res_fc, torch.nn.Linear):
            torch.nn.init.xavier_normal_(self.res_fc.weight, gain=torch.nn.init.calculate_gain("relu"))

    def forward(self, graph, feat: Features, efeat: torch.Tensor) -> torch.Tensor:
        feat_src, feat_dst = _pair(graph, feat, "NNConv")
        weight = self.edge_func(efeat).view(-1, self._in_src_feats, self._out_feats)  # [E, in, out]
        if weight.shape[0] != graph.num_edges():
            raise DGLError(f"NNConv: edge_func(efeat) gives {weight.shape[0]} weight matrices for "
                           f"{graph.num_edges()} edges")
        neigh = ops.gspmm_zero_empty(graph, "mul", self._aggre_type, feat_src.unsqueeze(-1), weight)  # [N, in, out]
        rst = neigh.sum(dim=1)
        if self.res_fc is not None:
            rst = rst + self.res_fc(feat_dst)
        if self.bias is not None:
            rst = rst + self.bias
        return rst


class GCN2Conv(torch.nn.Module):
    """GCNII (Chen et al.), as dgl.nn.GCN2Conv: P x = D^-1/2 A D^-1/2 x (D the in-degrees, clamped to >= 1), or,
    with edge_weight [E], the weights normalised by EdgeWeightNorm('both'); s = (1 - alpha) P x + alpha x_0;
    h = (1 - beta) s + beta s W1 (or, project_initial_features=False, (1 - beta) s + beta ((1 - alpha) P x W1 +
    alpha x_0 W2)) + bias, beta = log(lambda_ / layer + 1); then activation. W1, W2 [in, in] standard-normal,
    the bias zeros, as DGL's."""

    def __init__(self, in_feats: int, layer: int, alpha: float = 0.1, lambda_: float = 1,
                 project_initial_features: bool = True, allow_zero_in_degree: bool = False, bias: bool = True,
                 activation=None):
        super().__init__()
        self._in_feats, self._project_initial_features = in_feats, project_initial_features
        self.alpha, self.beta = alpha, math.log(lambda_ / layer + 1)
        self._bias, self._activation, self._allow_zero_in_degree = bias, activation, allow_zero_in_degree
        self.weight1 = torch.nn.Parameter(torch.empty(in_feats, in_feats))
        if project_initial_features:
            self.register_parameter("weight2", None)
        else:
            self.weight2 = torch.nn.Parameter(torch.empty(in_feats, in_feats))
        optional_bias(self, in_feats, bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        torch.nn.init.normal_(self.weight1)
        if self.weight2 is not None:
            torch.nn.init.normal_(self.weight2)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        self._allow_zero_in_degree = set_value

    def extra_repr(self) -> str:  # DGL 2.1's summary, which print(model) shows
        return f"in={self._in_feats}, alpha={self.alpha}, beta={self.beta}"

    def forward(self, graph, feat: torch.Tensor, feat_0: torch.Tensor,
                edge_weight: Optional[torch.Tensor] = None) -> torch.Tensor:
        _one_relation(graph, "GCN2Conv")
        _check_in_degrees(graph, self._allow_zero_in_degree, "GCN2Conv")
        if edge_weight is None:
            norm = _in_degree_norm(graph, feat)
            feat = ops.copy_u_sum(graph, feat * norm) * norm
        else:
            weight = EdgeWeightNorm("both")(graph, edge_weight)
            feat = ops.u_mul_e_sum(graph, feat, weight.view(-1, *[1] * (feat.dim() - 1)))
        feat = feat * (1 - self.alpha)
        feat_0 = feat_0[: feat.shape[0]] * self.alpha
        feat_sum = feat + feat_0
        if self._project_initial_features:
            projected = feat_sum @ self.weight1
        else:
            projected = feat @ self.weight1 + feat_0 @ self.weight2
        rst = (1 - self.beta) * feat_sum + self.beta * projected
        if self.bias is not None:
            rst = rst + self.bias
        return self._activation(rst) if self._activation is not None else rst


class GMMConv(torch.nn.Module):
    """Gaussian mixture model convolution (Monti et al., MoNet), as dgl.nn.GMMConv: per edge, K Gaussian
    weights w_k = exp(-1/2 sum_d ((pseudo_d - mu_kd) inv_sigma_kd)^2) of its pseudo-coordinates pseudo [E, dim];
    h_d = sum_k reduce_{s -> d} w_k (fc h_s)_k (+ residual, + bias) -> [N_dst, out]. aggregator_type 'sum',
    'mean' or 'max' (0 for a destination without in-edges). Parameters mu, inv_sigma, fc, res_fc, bias with
    DGL's initialisation."""

    def __init__(self, in_feats, out_feats: int, dim: int, n_kernels: int, aggregator_type: str = "sum",
                 residual: bool = False, bias: bool = True, allow_zero_in_degree: bool = False):
        super().__init__()
        if aggregator_type not in ("sum", "mean", "max"):
            raise KeyError(f"GMMConv: aggregator_type must be 'sum', 'mean' or 'max', got {aggregator_type!r}")
        in_src, in_dst = in_feats if isinstance(in_feats, (tuple, list)) else (in_feats, in_feats)
        self._out_feats, self._dim, self._n_kernels = out_feats, dim, n_kernels
        self._aggregator_type, self._allow_zero_in_degree = aggregator_type, allow_zero_in_degree
        self.mu = torch.nn.Parameter(torch.empty(n_kernels, dim))
        self.inv_sigma = torch.nn.Parameter(torch.empty(n_kernels, dim))
        self.fc = torch.nn.Linear(in_src, n_kernels * out_feats, bias=False)
        linear_residual(self, in_dst, out_feats, residual)
        optional_bias(self, out_feats, bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        gain = torch.nn.init.calculate_gain("relu")
        torch.nn.init.xavier_normal_(self.fc.weight, gain=gain)
        if isinstance(self.res_fc, torch.nn.Linear):
            torch.nn.init.xavier_normal_(self.res_fc.weight, gain=gain)
        torch.nn.init.normal_(self.mu, 0, 0.1)
        torch.nn.init.constant_(self.inv_sigma, 1)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        self._allow_zero_in_degree = set_value

    def forward(self, graph, feat: Features, pseudo: torch.Tensor) -> torch.Tensor:
        _check_in_degrees(graph, self._allow_zero_in_degree, "GMMConv")
        feat_src, feat_dst = _pair(graph, feat, "GMMConv")
        h = self.fc(feat_src).view(-1, self._n_kernels, self._out_feats)  # [N_src, K, out]
        diff = pseudo.view(-1, 1, self._dim) - self.mu.view(1, self._n_kernels, self._dim)
        inv_sigma = self.inv_sigma.view(1, self._n_kernels, self._dim)
        w = torch.exp((-0.5 * diff ** 2 * inv_sigma ** 2).sum(-1, keepdim=True))  # [E, K, 1]
        rst = ops.gspmm_zero_empty(graph, "mul", self._aggregator_type, h, w).sum(1)
        if self.res_fc is not None:
            rst = rst + self.res_fc(feat_dst)
        if self.bias is not None:
            rst = rst + self.bias
        return rst
