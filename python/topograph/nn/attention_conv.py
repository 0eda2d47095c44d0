"""dgl.nn's dot-product attention convolutions (DGL 2.1 names, parameters and equations): DotGatConv (scaled
dot-product attention over each destination's in-edges) and AGNNConv (Thekumparampil et al.: attention by
cosine similarity times a learned beta). Both are Topograph's fused sparse attention (ops.sparse_attention:
scores, softmax and the weighted sum in one pass that keeps nothing per edge for the backward) unless the
attention itself is asked for. Graphs of one relation or blocks; features [N, in] or a (source, destination)
pair. Checked against DGL 2.1 with the same weights (tests/test_attention_conv.py)."""
from __future__ import annotations

import torch

from .. import ops
from .conv import Features, _check_in_degrees, _pair


class DotGatConv(torch.nn.Module):
    """z = W h viewed [N, H, out]; a_{s->d} = softmax over d's in-edges of (z_d . z_s) / sqrt(out);
    h_d = sum_s a z_s -> [N_dst, H, out]. One Linear (fc, no bias) shared by both sides, or fc_src / fc_dst
    when in_feats is a pair, torch's default initialisation, as DGL's. get_attention=True also returns a
    [E, H, 1]."""

    def __init__(self, in_feats, out_feats: int, num_heads: int, allow_zero_in_degree: bool = False):
        super().__init__()
        self._out_feats, self._num_heads = out_feats, num_heads
        self._allow_zero_in_degree = allow_zero_in_degree
        if isinstance(in_feats, (tuple, list)):
            self.fc_src = torch.nn.Linear(in_feats[0], out_feats * num_heads, bias=False)
            self.fc_dst = torch.nn.Linear(in_feats[1], out_feats * num_heads, bias=False)
        else:
            self.fc = torch.nn.Linear(in_feats, out_feats * num_heads, bias=False)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        self._allow_zero_in_degree = set_value

    def forward(self, graph, feat: Features, get_attention: bool = False):
        _check_in_degrees(graph, self._allow_zero_in_degree, "DotGatConv")
        shape = (-1, self._num_heads, self._out_feats)
        if isinstance(feat, (tuple, list)):
            h_src, h_dst = _pair(graph, feat, "DotGatConv")
            fc_src, fc_dst = (self.fc_src, self.fc_dst) if hasattr(self, "fc_src") else (self.fc, self.fc)
            z_src, z_dst = fc_src(h_src).view(shape), fc_dst(h_dst).view(shape)
        else:
            z_src = self.fc(feat).view(shape)
            z_dst = z_src[: graph.num_dst_nodes()] if graph.is_block else z_src
        scale = self._out_feats ** -0.5
        if get_attention:
            a = ops.edge_softmax(graph, ops.u_dot_v(graph, z_src, z_dst) * scale)  # [E, H, 1]
            return ops.u_mul_e_sum(graph, z_src, a), a
        return ops.sparse_attention(graph, z_dst, z_src, z_src, scale)


class AGNNConv(torch.nn.Module):
    """h_d = sum_s softmax over d's in-edges of (beta cos(h_s, h_d)) h_s, features of any row shape [N, *]
    (the cosine over the last dim). beta: a learned Parameter([init_beta]), or a buffer when learn_beta is
    False, as DGL's."""

    def __init__(self, init_beta: float = 1.0, learn_beta: bool = True, allow_zero_in_degree: bool = False):
        super().__init__()
        self._allow_zero_in_degree = allow_zero_in_degree
        if learn_beta:
            self.beta = torch.nn.Parameter(torch.tensor([float(init_beta)]))
        else:
            self.register_buffer("beta", torch.tensor([float(init_beta)]))

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        self._allow_zero_in_degree = set_value

    def forward(self, graph, feat: Features) -> torch.Tensor:
        _check_in_degrees(graph, self._allow_zero_in_degree, "AGNNConv")
        feat_src, feat_dst = _pair(graph, feat, "AGNNConv")
        unit_src = torch.nn.functional.normalize(feat_src, p=2, dim=-1)
        unit_dst = torch.nn.functional.normalize(feat_dst, p=2, dim=-1)
        if feat_src.dim() == 2:  # the fused attention: q = beta * unit_dst, k = unit_src, v = feat_src, one head
            out = ops.sparse_attention(graph, (self.beta * unit_dst).unsqueeze(1), unit_src.unsqueeze(1),
                                       feat_src.unsqueeze(1), 1.0)
            return out.squeeze(1)
        p = ops.edge_softmax(graph, self.beta * ops.u_dot_v(graph, unit_src, unit_dst))
        return ops.u_mul_e_sum(graph, feat_src, p)
