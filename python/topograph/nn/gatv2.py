"""dgl.nn.GATv2Conv (Brody et al., "How attentive are graph attention networks?") over Topograph's ops: the
attention applies its LeakyReLU before the attention vector, so every edge's score needs the [E, H, out] sum
W_s h_s + W_d h_d (a gsddmm), then edge_softmax and a u_mul_e_sum, as DGL composes it."""
from __future__ import annotations

import torch

from .. import ops
from .conv import Features, _check_in_degrees, _pair


class GATv2Conv(torch.nn.Module):
    """e_{s->d} = a . LeakyReLU(W_src h_s + W_dst h_d) per head; alpha = softmax of e over d's in-edges;
    h_d = sum_s alpha_{s->d} W_src h_s (+ residual) -> [N_dst, H, out], then activation.

    As DGL 2.1's: fc_src and fc_dst are Linear(in, H * out, bias) (with share_weights and one input size, fc_dst
    is fc_src), attn [1, H, out]; Xavier-normal weights (ReLU gain) and zero biases; residual: Identity when the
    destination size is H * out, else a Linear(bias). Dropout on the inputs (feat_drop) and on alpha (attn_drop).
    allow_zero_in_degree=False refuses a destination without in-edges (its output would be 0).
    get_attention=True also returns alpha [E, H, 1]."""

    def __init__(self, in_feats, out_feats: int, num_heads: int, feat_drop: float = 0.0, attn_drop: float = 0.0,
                 negative_slope: float = 0.2, residual: bool = False, activation=None,
                 allow_zero_in_degree: bool = False, bias: bool = True, share_weights: bool = False):
        super().__init__()
        in_src, in_dst = in_feats if isinstance(in_feats, (tuple, list)) else (in_feats, in_feats)
        self._num_heads, self._out_feats = num_heads, out_feats
        self._allow_zero_in_degree, self.share_weights, self.bias = allow_zero_in_degree, share_weights, bias
        self.fc_src = torch.nn.Linear(in_src, out_feats * num_heads, bias=bias)
        if share_weights and not isinstance(in_feats, (tuple, list)):
            self.fc_dst = self.fc_src
        else:
            self.fc_dst = torch.nn.Linear(in_dst, out_feats * num_heads, bias=bias)
        self.attn = torch.nn.Parameter(torch.empty(1, num_heads, out_feats))
        self.feat_drop, self.attn_drop = torch.nn.Dropout(feat_drop), torch.nn.Dropout(attn_drop)
        self.leaky_relu = torch.nn.LeakyReLU(negative_slope)
        self.res_fc = None
        if residual:
            self.res_fc = torch.nn.Identity() if in_dst == out_feats * num_heads else \
                torch.nn.Linear(in_dst, num_heads * out_feats, bias=bias)
        self.activation = activation
        self.reset_parameters()

    def reset_parameters(self) -> None:
        gain = torch.nn.init.calculate_gain("relu")
        # as DGL's: with share_weights, fc_dst keeps torch's initialisation even when it is a module of its own
        for fc in [self.fc_src] + ([] if self.share_weights else [self.fc_dst]):
            torch.nn.init.xavier_normal_(fc.weight, gain=gain)
            if fc.bias is not None:
                torch.nn.init.zeros_(fc.bias)
        torch.nn.init.xavier_normal_(self.attn, gain=gain)
        if isinstance(self.res_fc, torch.nn.Linear):
            torch.nn.init.xavier_normal_(self.res_fc.weight, gain=gain)
            if self.res_fc.bias is not None:
                torch.nn.init.zeros_(self.res_fc.bias)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        self._allow_zero_in_degree = set_value

    def forward(self, graph, feat: Features, get_attention: bool = False):
        _check_in_degrees(graph, self._allow_zero_in_degree, "GATv2Conv")
        shape = (-1, self._num_heads, self._out_feats)
        if isinstance(feat, (tuple, list)):
            h_src, h_dst = (self.feat_drop(x) for x in _pair(graph, feat, "GATv2Conv"))
            z_src, z_dst = self.fc_src(h_src).view(shape), self.fc_dst(h_dst).view(shape)
        else:  # one input; a block's destinations are its first source rows
            h_src = h_dst = self.feat_drop(feat)
            z_src = self.fc_src(h_src).view(shape)
            z_dst = z_src if self.share_weights else self.fc_dst(h_dst).view(shape)
            if graph.is_block:
                z_dst, h_dst = z_dst[: graph.num_dst_nodes()], h_dst[: graph.num_dst_nodes()]
        e = self.leaky_relu(ops.u_add_v(graph, z_src, z_dst))  # [E, H, out]
        alpha = self.attn_drop(ops.edge_softmax(graph, (e * self.attn).sum(-1, keepdim=True)))  # [E, H, 1]
        rst = ops.u_mul_e_sum(graph, z_src, alpha)  # [N_dst, H, out]
        if self.res_fc is not None:
            rst = rst + self.res_fc(h_dst).view(h_dst.shape[0], -1, self._out_feats)
        if self.activation is not None:
            rst = self.activation(rst)
        return (rst, alpha) if get_attention else rst
