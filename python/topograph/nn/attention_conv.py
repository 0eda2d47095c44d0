"""dgl.nn's attention convolutions beyond GAT (DGL 2.1 names, parameters and equations): DotGatConv (scaled
dot-product attention over each destination's in-edges), AGNNConv (Thekumparampil et al.: attention by cosine
similarity times a learned beta), EGATConv (Kaminski et al.: attention from node and edge features, edge
features out) and HGTConv (Hu et al., the heterogeneous graph transformer: per-type projections, per-relation
attention and messages). DotGatConv and AGNNConv are Topograph's fused sparse attention (ops.sparse_attention:
scores, softmax and the weighted sum in one pass that keeps nothing per edge for the backward) unless the
attention itself is asked for. Graphs of one relation or blocks; features [N, in] or a (source, destination)
pair. Checked against DGL 2.1 with the same weights (tests/test_attention_conv.py)."""
from __future__ import annotations

import math
from typing import Optional

import torch

from .. import ops
from .conv import Features, _check_in_degrees, _pair, optional_bias
from .relgraph import TypedLinear


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


class EGATConv(torch.nn.Module):
    """f_ij = LeakyReLU(W_ni h_i + W_nj h_j + W_fij e_ij + bias) viewed [E, H, out_edge]; a = softmax over each
    destination's in-edges of (f_ij . attn) [E, H, 1] (times edge_weight [E] when given); h_j = sum_i a W_node h_i
    -> ([N_dst, H, out_node], f_ij), and a too with get_attention. Parameters fc_node_src, fc_ni, fc_nj, fc_fij,
    attn, bias (Xavier-normal with ReLU gain, the bias 0), as DGL's; every destination needs an in-edge."""

    def __init__(self, in_node_feats, in_edge_feats: int, out_node_feats: int, out_edge_feats: int, num_heads: int,
                 bias: bool = True):
        super().__init__()
        in_src, in_dst = in_node_feats if isinstance(in_node_feats, (tuple, list)) else (in_node_feats,) * 2
        self._num_heads, self._out_node_feats, self._out_edge_feats = num_heads, out_node_feats, out_edge_feats
        self.fc_node_src = torch.nn.Linear(in_src, out_node_feats * num_heads, bias=False)
        self.fc_ni = torch.nn.Linear(in_src, out_edge_feats * num_heads, bias=False)
        self.fc_nj = torch.nn.Linear(in_dst, out_edge_feats * num_heads, bias=False)
        self.fc_fij = torch.nn.Linear(in_edge_feats, out_edge_feats * num_heads, bias=False)
        self.attn = torch.nn.Parameter(torch.empty(1, num_heads, out_edge_feats))
        optional_bias(self, num_heads * out_edge_feats, bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        gain = torch.nn.init.calculate_gain("relu")
        for w in (self.fc_node_src.weight, self.fc_ni.weight, self.fc_fij.weight, self.fc_nj.weight, self.attn):
            torch.nn.init.xavier_normal_(w, gain=gain)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)

    def forward(self, graph, nfeats: Features, efeats: torch.Tensor, edge_weight: Optional[torch.Tensor] = None,
                get_attention: bool = False):
        _check_in_degrees(graph, False, "EGATConv")
        src, dst = _pair(graph, nfeats, "EGATConv")
        f_out = ops.u_add_v(graph, self.fc_ni(src), self.fc_nj(dst)) + self.fc_fij(efeats)  # [E, H * out_edge]
        if self.bias is not None:
            f_out = f_out + self.bias
        f_out = torch.nn.functional.leaky_relu(f_out).view(-1, self._num_heads, self._out_edge_feats)
        a = ops.edge_softmax(graph, (f_out * self.attn).sum(-1, keepdim=True))  # [E, H, 1]
        if edge_weight is not None:
            a = a * edge_weight.view(-1, 1, 1)
        h = ops.u_mul_e_sum(graph, self.fc_node_src(src).view(-1, self._num_heads, self._out_node_feats), a)
        return (h, f_out, a) if get_attention else (h, f_out)


class HGTConv(torch.nn.Module):
    """The heterogeneous graph transformer layer on a graph of one relation whose nodes and edges carry type ids
    (ntype [N], etype [E]; dgl.to_homogeneous's NTYPE / ETYPE), as DGL's: k, q, v = per-node-type TypedLinears of
    x, [N, H, head]; per head h and edge s -> d of type r: score = (k_s W_att[h, r]) . q_d * pri[h][r] / sqrt(head),
    message = v_s W_msg[h, r]; softmax of the scores over d's in-edges weights the messages' sum; then
    linear_a (per node type), dropout, and a learned per-type gate sigmoid(skip) between it and x (through
    residual_w when the widths differ); LayerNorm with use_norm. Parameters as DGL's (its state_dicts load)."""

    def __init__(self, in_size: int, head_size: int, num_heads: int, num_ntypes: int, num_etypes: int,
                 dropout: float = 0.2, use_norm: bool = False):
        super().__init__()
        self.in_size, self.head_size, self.num_heads, self.use_norm = in_size, head_size, num_heads, use_norm
        self.sqrt_d = math.sqrt(head_size)
        width = head_size * num_heads
        self.linear_k = TypedLinear(in_size, width, num_ntypes)
        self.linear_q = TypedLinear(in_size, width, num_ntypes)
        self.linear_v = TypedLinear(in_size, width, num_ntypes)
        self.linear_a = TypedLinear(width, width, num_ntypes)
        self.relation_pri = torch.nn.ParameterList(torch.nn.Parameter(torch.ones(num_etypes)) for _ in range(num_heads))
        self.relation_att = torch.nn.ModuleList(TypedLinear(head_size, head_size, num_etypes) for _ in range(num_heads))
        self.relation_msg = torch.nn.ModuleList(TypedLinear(head_size, head_size, num_etypes) for _ in range(num_heads))
        self.skip = torch.nn.Parameter(torch.ones(num_ntypes))
        self.drop = torch.nn.Dropout(dropout)
        if use_norm:
            self.norm = torch.nn.LayerNorm(width)
        if in_size != width:
            self.residual_w = torch.nn.Parameter(torch.empty(in_size, width))
            torch.nn.init.xavier_uniform_(self.residual_w)

    def forward(self, g, x: torch.Tensor, ntype: torch.Tensor, etype: torch.Tensor, *,
                presorted: bool = False) -> torch.Tensor:
        n_dst = g.num_dst_nodes() if g.is_block else x.shape[0]
        x_dst, dst_type = x[:n_dst], ntype[:n_dst]
        shape = (-1, self.num_heads, self.head_size)
        k = self.linear_k(x, ntype, presorted).view(shape)
        q = self.linear_q(x_dst, dst_type, presorted).view(shape)
        v = self.linear_v(x, ntype, presorted).view(shape)
        k_e, v_e, q_e = ops.copy_u(g, k), ops.copy_u(g, v), ops.copy_v(g, q)  # [E, H, head] by edge
        scores, messages = [], []
        for h in range(self.num_heads):
            kw = self.relation_att[h](k_e[:, h], etype, presorted)
            scores.append((kw * q_e[:, h]).sum(-1) * self.relation_pri[h][etype] / self.sqrt_d)
            messages.append(self.relation_msg[h](v_e[:, h], etype, presorted))
        a = ops.edge_softmax(g, torch.stack(scores, 1))  # [E, H]
        m = torch.stack(messages, 1) * a.unsqueeze(-1)  # [E, H, head]
        out = ops.copy_e_sum(g, m).reshape(-1, self.num_heads * self.head_size)
        out = self.drop(self.linear_a(out, dst_type, presorted))
        alpha = torch.sigmoid(self.skip[dst_type]).unsqueeze(-1)
        residual = x_dst @ self.residual_w if hasattr(self, "residual_w") else x_dst
        out = out * alpha + residual * (1 - alpha)
        return self.norm(out) if self.use_norm else out


class EdgeGATConv(torch.nn.Module):
    """GAT with edge features (DGL's EdgeGATConv): z = fc(h) [N, H, out], f = fc_edge(e) [E, H, out];
    a = softmax over d's in-edges of LeakyReLU(attn_l . z_s + attn_r . z_d + attn_edge . f); h_d = sum a (z_s + f)
    (+ residual, + bias, activation) -> [N_dst, H, out]; get_attention also returns a [E, H, 1]. Parameters and
    Xavier-normal (ReLU gain) initialisation as DGL's; the residual is a Linear always, as there."""

    def __init__(self, in_feats, edge_feats: int, out_feats: int, num_heads: int, feat_drop: float = 0.0,
                 attn_drop: float = 0.0, negative_slope: float = 0.2, residual: bool = True, activation=None,
                 allow_zero_in_degree: bool = False, bias: bool = True):
        super().__init__()
        in_src, in_dst = in_feats if isinstance(in_feats, (tuple, list)) else (in_feats, in_feats)
        self._num_heads, self._out_feats, self._allow_zero_in_degree = num_heads, out_feats, allow_zero_in_degree
        width = out_feats * num_heads
        if isinstance(in_feats, (tuple, list)):
            self.fc_src = torch.nn.Linear(in_src, width, bias=False)
            self.fc_dst = torch.nn.Linear(in_dst, width, bias=False)
        else:
            self.fc = torch.nn.Linear(in_src, width, bias=False)
        self.attn_l = torch.nn.Parameter(torch.empty(1, num_heads, out_feats))
        self.attn_r = torch.nn.Parameter(torch.empty(1, num_heads, out_feats))
        self.feat_drop, self.attn_drop = torch.nn.Dropout(feat_drop), torch.nn.Dropout(attn_drop)
        self.leaky_relu = torch.nn.LeakyReLU(negative_slope)
        optional_bias(self, width, bias)
        if residual:
            self.res_fc = torch.nn.Linear(in_dst, width, bias=False)
        else:
            self.register_buffer("res_fc", None)
        self._edge_feats = edge_feats
        self.fc_edge = torch.nn.Linear(edge_feats, width, bias=False)
        self.attn_edge = torch.nn.Parameter(torch.empty(1, num_heads, out_feats))
        self.reset_parameters()
        self.activation = activation

    def reset_parameters(self) -> None:
        gain = torch.nn.init.calculate_gain("relu")
        projections = [self.fc.weight] if hasattr(self, "fc") else [self.fc_src.weight, self.fc_dst.weight]
        for w in projections + [self.attn_l, self.attn_r, self.fc_edge.weight, self.attn_edge]:
            torch.nn.init.xavier_normal_(w, gain=gain)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)
        if isinstance(self.res_fc, torch.nn.Linear):
            torch.nn.init.xavier_normal_(self.res_fc.weight, gain=gain)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        self._allow_zero_in_degree = set_value

    def forward(self, graph, feat: Features, edge_feat: torch.Tensor, get_attention: bool = False):
        _check_in_degrees(graph, self._allow_zero_in_degree, "EdgeGATConv")
        shape = (-1, self._num_heads, self._out_feats)
        if isinstance(feat, (tuple, list)):
            h_src, h_dst = (self.feat_drop(x) for x in _pair(graph, feat, "EdgeGATConv"))
            fc_src, fc_dst = (self.fc_src, self.fc_dst) if hasattr(self, "fc_src") else (self.fc, self.fc)
            z_src, z_dst = fc_src(h_src).view(shape), fc_dst(h_dst).view(shape)
        else:
            h_src = self.feat_drop(feat)
            z_src = self.fc(h_src).view(shape)
            n_dst = graph.num_dst_nodes() if graph.is_block else h_src.shape[0]
            h_dst, z_dst = h_src[:n_dst], z_src[:n_dst]
        f = self.fc_edge(edge_feat).view(shape)  # [E, H, out]
        score = ops.u_add_v(graph, (z_src * self.attn_l).sum(-1, keepdim=True),
                            (z_dst * self.attn_r).sum(-1, keepdim=True)) + (f * self.attn_edge).sum(-1, keepdim=True)
        a = self.attn_drop(ops.edge_softmax(graph, self.leaky_relu(score)))  # [E, H, 1]
        rst = ops.u_mul_e_sum(graph, z_src, a) + ops.copy_e_sum(graph, f * a)
        if self.res_fc is not None:
            rst = rst + self.res_fc(h_dst).view(shape)
        if self.bias is not None:
            rst = rst + self.bias.view(1, self._num_heads, self._out_feats)
        if self.activation:
            rst = self.activation(rst)
        return (rst, a) if get_attention else rst
