"""dgl.nn's convolutions built around edge features (DGL 2.1's names, parameters and equations): GatedGCNConv
(Bresson & Laurent, residual gated graph convnets), EGNNConv (Satorras et al., E(n)-equivariant: coordinates
updated along their differences) and CFConv (Schütt et al., SchNet's continuous filter) with ShiftedSoftplus.
Each is a few of the kernels' ops (u_add_v, u_sub_v, u_mul_e_sum, copy_e reductions) over a graph of one
relation. Checked against DGL 2.1 with the same weights (tests/test_edge_feature_conv.py)."""
from __future__ import annotations

import math

import torch

from .. import ops


class GatedGCNConv(torch.nn.Module):
    """e' = D h_src + E h_dst + C e; sigma = sigmoid(e'); h' = A h + (sum sigma * B h_src) / (sum sigma + 1e-6)
    per destination; then BatchNorm, activation, residual (when every width agrees) and dropout on both;
    forward(graph, feat, edge_feat) -> (h', e')."""

    def __init__(self, input_feats: int, edge_feats: int, output_feats: int, dropout: float = 0,
                 batch_norm: bool = True, residual: bool = True, activation=torch.nn.functional.relu):
        super().__init__()
        self.dropout, self.batch_norm, self.activation = torch.nn.Dropout(dropout), batch_norm, activation
        self.residual = residual and input_feats == output_feats and edge_feats == output_feats
        self.A, self.B, self.D, self.E = (torch.nn.Linear(input_feats, output_feats) for _ in range(4))
        self.C = torch.nn.Linear(edge_feats, output_feats)
        self.bn_node, self.bn_edge = torch.nn.BatchNorm1d(output_feats), torch.nn.BatchNorm1d(output_feats)

    def forward(self, graph, feat: torch.Tensor, edge_feat: torch.Tensor):
        e = ops.u_add_v(graph, self.D(feat), self.E(feat)) + self.C(edge_feat)
        sigma = torch.sigmoid(e)
        h = self.A(feat) + ops.u_mul_e_sum(graph, self.B(feat), sigma) / (ops.copy_e_sum(graph, sigma) + 1e-6)
        if self.batch_norm:
            h, e = self.bn_node(h), self.bn_edge(e)
        if self.activation:
            h, e = self.activation(h), self.activation(e)
        if self.residual:
            h, e = feat + h, edge_feat + e
        return self.dropout(h), self.dropout(e)


class EGNNConv(torch.nn.Module):
    """Messages m = edge_mlp([h_src, h_dst, |x_src - x_dst|^2(, a)]); h' = node_mlp([h, sum m]); x' = x + mean
    over in-edges of coord_mlp(m) (x_src - x_dst) / |x_src - x_dst|; forward(graph, node_feat, coord_feat,
    edge_feat=None) -> (h', x')."""

    def __init__(self, in_size: int, hidden_size: int, out_size: int, edge_feat_size: int = 0):
        super().__init__()
        self.in_size, self.hidden_size, self.out_size = in_size, hidden_size, out_size
        self.edge_feat_size = edge_feat_size
        act = torch.nn.SiLU()
        self.edge_mlp = torch.nn.Sequential(torch.nn.Linear(in_size * 2 + edge_feat_size + 1, hidden_size), act,
                                            torch.nn.Linear(hidden_size, hidden_size), act)
        self.node_mlp = torch.nn.Sequential(torch.nn.Linear(in_size + hidden_size, hidden_size), act,
                                            torch.nn.Linear(hidden_size, out_size))
        self.coord_mlp = torch.nn.Sequential(torch.nn.Linear(hidden_size, hidden_size), act,
                                             torch.nn.Linear(hidden_size, 1, bias=False))

    def forward(self, graph, node_feat: torch.Tensor, coord_feat: torch.Tensor, edge_feat=None):
        diff = ops.u_sub_v(graph, coord_feat, coord_feat)  # [E, 3]: x_src - x_dst
        radial = diff.square().sum(dim=1, keepdim=True)
        diff = diff / (radial.sqrt() + 1e-30)
        parts = [ops.copy_u(graph, node_feat), ops.copy_v(graph, node_feat), radial]
        if self.edge_feat_size > 0:
            if edge_feat is None:
                raise ValueError("EGNNConv: edge_feat_size > 0 needs edge_feat")
            parts.append(edge_feat)
        msg_h = self.edge_mlp(torch.cat(parts, dim=-1))
        msg_x = self.coord_mlp(msg_h) * diff
        h = self.node_mlp(torch.cat([node_feat, ops.gspmm_zero_empty(graph, "copy_rhs", "sum", None, msg_h)], -1))
        return h, coord_feat + ops.gspmm_zero_empty(graph, "copy_rhs", "mean", None, msg_x)


class ShiftedSoftplus(torch.nn.Module):
    """softplus(x) - log(shift), SchNet's activation (0 at x = 0 for shift 2)."""

    def __init__(self, beta: float = 1, shift: float = 2, threshold: float = 20):
        super().__init__()
        self.shift = shift
        self.softplus = torch.nn.Softplus(beta=beta, threshold=threshold)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.softplus(inputs) - math.log(float(self.shift))


class CFConv(torch.nn.Module):
    """h' = project_out(sum over in-edges of project_node(h_src) * project_edge(e)): SchNet's interaction with
    filters from the edge features (e.g. expanded distances); node_feats may be a (source, destination) pair."""

    def __init__(self, node_in_feats: int, edge_in_feats: int, hidden_feats: int, out_feats: int):
        super().__init__()
        self.project_edge = torch.nn.Sequential(torch.nn.Linear(edge_in_feats, hidden_feats), ShiftedSoftplus(),
                                                torch.nn.Linear(hidden_feats, hidden_feats), ShiftedSoftplus())
        self.project_node = torch.nn.Linear(node_in_feats, hidden_feats)
        self.project_out = torch.nn.Sequential(torch.nn.Linear(hidden_feats, out_feats), ShiftedSoftplus())

    def forward(self, g, node_feats, edge_feats: torch.Tensor) -> torch.Tensor:
        src = node_feats[0] if isinstance(node_feats, (tuple, list)) else node_feats
        return self.project_out(ops.u_mul_e_sum(g, self.project_node(src), self.project_edge(edge_feats)))
