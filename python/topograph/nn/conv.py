"""dgl.nn's graph convolutions under their names and with their equations, parameters and defaults
(DGL 2.1), each a few of Topograph's ops: GraphConv (Kipf & Welling), SAGEConv (Hamilton et al.; mean, gcn,
pool and lstm aggregators), GATConv (Velickovic et al.), GINConv (Xu et al.) and GINEConv (Hu et al.). Each takes
a graph with one relation (a heterograph's g[etype], as HeteroGraphConv runs them: nn/hetero.py) or a block
(topograph.to_block, topograph.dataloading), and features [N, in] or a pair (source, destination) for
bipartite graphs; on a block the destinations' own features are the first num_dst_nodes source rows, as DGL's
expand_as_pair takes them. SGConv (Wu et al.) and APPNPConv (Gasteiger et al.) propagate k steps over one
graph's nodes (not a block). EdgeWeightNorm normalises scalar edge weights as GCN does (plain torch). Checked
against DGL 2.1 with the same weights (tests/test_against_dgl.py)."""
from __future__ import annotations

from typing import Optional, Tuple, Union

import torch

from .. import function as fn
from .. import ops
from .._base import DGLError, DGLKeyError
from ..utils import expand_as_pair

Features = Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]


def _pair(g, feat: Features, what: str) -> Tuple[torch.Tensor, torch.Tensor]:
    """(source features, destination features), as dgl.utils.expand_as_pair."""
    if isinstance(feat, (tuple, list)):
        if len(feat) != 2:
            raise ValueError(f"{what}: a feature pair must be (source, destination), got {len(feat)} tensors")
        return feat[0], feat[1]
    return expand_as_pair(feat, g)


def _check_in_degrees(g, allow_zero_in_degree: bool, what: str) -> None:
    if not allow_zero_in_degree and bool((g.in_degrees() == 0).any()):  # DGL's DGLError, which users catch
        raise DGLError(f"{what}: some destination has no in-edge, so its output would be 0 without a "
                         f"message; add self loops (topograph.add_self_loop) or pass allow_zero_in_degree=True")


def optional_bias(module: torch.nn.Module, size: int, enabled: bool) -> None:
    """module.bias: a zero Parameter [size], or None registered as DGL's modules register it (its state_dict
    then has no 'bias' key, as theirs)."""
    if enabled:
        module.bias = torch.nn.Parameter(torch.zeros(size))
    else:
        module.register_buffer("bias", None)


def linear_residual(module: torch.nn.Module, in_dst: int, out_feats: int, enabled: bool) -> None:
    """module.res_fc: Linear(in_dst, out_feats, no bias) when the widths differ, Identity when they agree, None
    (registered) without a residual, as DGL's NNConv / GMMConv lay it out."""
    if not enabled:
        module.register_buffer("res_fc", None)
    elif in_dst != out_feats:
        module.res_fc = torch.nn.Linear(in_dst, out_feats, bias=False)
    else:
        module.res_fc = torch.nn.Identity()


def _degree_norm(degrees: torch.Tensor, power: float, like: torch.Tensor) -> torch.Tensor:
    """degrees^power (degrees clamped to >= 1), shaped to scale rows of `like`."""
    norm = degrees.clamp(min=1).to(like.dtype).pow(power)
    return norm.view(-1, *[1] * (like.dim() - 1)).to(like.device)


def dgl_attribute_names(**names: str):
    """Class decorator: DGL 2.1's private attribute names (`_out_feats`, `_num_heads`, ...) read and write the
    layer's own attributes, since DGL users' inference loops size their buffers by them."""
    def decorate(cls):
        for dgl_name, ours in names.items():
            setattr(cls, dgl_name, property(lambda self, a=ours: getattr(self, a),
                                            lambda self, value, a=ours: setattr(self, a, value)))
        return cls
    return decorate


@dgl_attribute_names(_in_feats="in_feats", _out_feats="out_feats", _norm="norm",
                     _allow_zero_in_degree="allow_zero_in_degree")
class GraphConv(torch.nn.Module):
    """h_dst = bias + sum_{src -> dst} (c_src c_dst)^(-1/2)... with DGL's `norm`: 'both' (out-degree^-1/2 of
    the source, in-degree^-1/2 of the destination), 'right' (1 / in-degree), 'left' (1 / out-degree), 'none';
    edge_weight [E] multiplies the messages. weight [in, out] (xavier uniform), bias zeros, as DGL."""

    def __init__(self, in_feats: int, out_feats: int, norm: str = "both", weight: bool = True, bias: bool = True,
                 activation=None, allow_zero_in_degree: bool = False):
        super().__init__()
        if norm not in ("none", "both", "right", "left"):
            raise DGLError(f"GraphConv: norm must be 'none', 'both', 'right' or 'left', got {norm!r}")
        self.in_feats, self.out_feats, self.norm = in_feats, out_feats, norm
        self.allow_zero_in_degree, self.activation = allow_zero_in_degree, activation
        self.weight = torch.nn.Parameter(torch.empty(in_feats, out_feats)) if weight else None
        self.bias = torch.nn.Parameter(torch.zeros(out_feats)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            torch.nn.init.xavier_uniform_(self.weight)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        """As DGL's: HeteroGraphConv sets it on every module it holds (a relation may leave nodes without in-edges)."""
        self.allow_zero_in_degree = set_value

    def extra_repr(self) -> str:  # DGL's summary, which print(model) shows
        return f"in={self.in_feats}, out={self.out_feats}, normalization={self.norm}, activation={self.activation}"

    def forward(self, graph, feat: Features, weight: Optional[torch.Tensor] = None,
                edge_weight: Optional[torch.Tensor] = None) -> torch.Tensor:
        _check_in_degrees(graph, self.allow_zero_in_degree, "GraphConv")
        feat_src, _ = _pair(graph, feat, "GraphConv")
        if self.norm in ("left", "both"):
            feat_src = feat_src * _degree_norm(graph.out_degrees(), -0.5 if self.norm == "both" else -1.0, feat_src)
        if weight is not None and self.weight is not None:
            raise DGLError("GraphConv: the module has its own weight; pass weight= only to one built with "
                           "weight=False")
        weight = weight if weight is not None else self.weight
        aggregate = (lambda x: ops.copy_u_sum(graph, x)) if edge_weight is None else \
            (lambda x: ops.u_mul_e_sum(graph, x, edge_weight.view(-1, *[1] * (x.dim() - 1))))
        if weight is not None and self.in_feats > self.out_feats:  # multiply first: fewer columns to move
            rst = aggregate(feat_src @ weight)
        else:
            rst = aggregate(feat_src)
            if weight is not None:
                rst = rst @ weight
        if self.norm in ("right", "both"):
            rst = rst * _degree_norm(graph.in_degrees(), -0.5 if self.norm == "both" else -1.0, rst)
        if self.bias is not None:
            rst = rst + self.bias
        return self.activation(rst) if self.activation is not None else rst


@dgl_attribute_names(_in_src_feats="in_src", _in_dst_feats="in_dst", _out_feats="out_feats",
                     _aggre_type="aggregator_type")
class SAGEConv(torch.nn.Module):
    """h_dst = fc_self(h_dst) + fc_neigh(aggregate_{src -> dst} h_src), aggregator 'mean', 'pool' (max of
    ReLU(fc_pool h_src)), 'lstm' (the last hidden state of an LSTM over each destination's messages in edge-id
    order, as DGL's mailbox; 0 without in-edges) or 'gcn' (fc_neigh((sum_src h_src + h_dst) / (in-degree + 1))
    + bias, no fc_self); then activation and norm. Parameters and their initialisation as DGL 2.1's (Xavier-uniform weights with
    ReLU gain; the bias is fc_self's, torch's default init)."""

    def __init__(self, in_feats, out_feats: int, aggregator_type: str, feat_drop: float = 0.0, bias: bool = True,
                 norm=None, activation=None):
        super().__init__()
        if aggregator_type not in ("mean", "gcn", "pool", "lstm"):
            raise DGLError(f"SAGEConv: aggregator_type must be 'mean', 'gcn', 'pool' or 'lstm', got "
                             f"{aggregator_type!r}")
        in_src, in_dst = in_feats if isinstance(in_feats, (tuple, list)) else (in_feats, in_feats)
        self.in_src, self.in_dst, self.out_feats = in_src, in_dst, out_feats
        self.aggregator_type, self.norm, self.activation = aggregator_type, norm, activation
        self.feat_drop = torch.nn.Dropout(feat_drop)
        if aggregator_type == "pool":
            self.fc_pool = torch.nn.Linear(in_src, in_src)
        if aggregator_type == "lstm":
            self.lstm = torch.nn.LSTM(in_src, in_src, batch_first=True)
        self.fc_neigh = torch.nn.Linear(in_src, out_feats, bias=False)
        # as DGL 2.1: the bias is fc_self's, or (gcn, no fc_self) a parameter of its own
        if aggregator_type != "gcn":
            self.fc_self = torch.nn.Linear(in_dst, out_feats, bias=bias)
        self.bias = torch.nn.Parameter(torch.zeros(out_feats)) if bias and aggregator_type == "gcn" else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        gain = torch.nn.init.calculate_gain("relu")
        if self.aggregator_type == "pool":
            torch.nn.init.xavier_uniform_(self.fc_pool.weight, gain=gain)
        if self.aggregator_type == "lstm":
            self.lstm.reset_parameters()
        if self.aggregator_type != "gcn":
            torch.nn.init.xavier_uniform_(self.fc_self.weight, gain=gain)
        torch.nn.init.xavier_uniform_(self.fc_neigh.weight, gain=gain)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)

    def forward(self, graph, feat: Features, edge_weight: Optional[torch.Tensor] = None) -> torch.Tensor:
        """edge_weight [E] (or broadcastable against the messages' rows) multiplies each message before the
        aggregation, as DGL's fn.u_mul_e: 'mean' averages the weighted messages over the in-degree, 'gcn' divides
        their sum plus the node's own row by in-degree + 1, 'pool' takes their max."""
        # one dropout over a single tensor, whose rows are the destinations' own too (as DGL's: the same mask)
        if isinstance(feat, (tuple, list)):
            feat_src, feat_dst = (self.feat_drop(x) for x in _pair(graph, feat, "SAGEConv"))
        else:
            feat_src, feat_dst = _pair(graph, self.feat_drop(feat), "SAGEConv")
        edge_weight = _edge_weight(graph, edge_weight, "SAGEConv")
        op = "copy_lhs" if edge_weight is None else "mul"  # the message: h_src, or h_src * w_edge
        h_self = feat_dst
        # project before passing messages when that moves fewer columns (DGL's lin_before_mp)
        first = self.in_src > self.out_feats
        if self.aggregator_type == "mean":
            h = ops.gspmm(graph, op, "mean", self.fc_neigh(feat_src) if first else feat_src, edge_weight)
            h_neigh = h if first else self.fc_neigh(h)
        elif self.aggregator_type == "gcn":
            src = self.fc_neigh(feat_src) if first else feat_src
            dst = self.fc_neigh(feat_dst) if first else feat_dst
            total = ops.gspmm(graph, op, "sum", src, edge_weight) + dst
            h = total / (graph.in_degrees().to(total.dtype).to(total.device).view(-1, 1) + 1)
            h_neigh = h if first else self.fc_neigh(h)
        elif self.aggregator_type == "lstm":
            h_neigh = self.fc_neigh(self._lstm_aggregate(graph, feat_src, edge_weight))
        else:  # pool: max over weighted ReLU(fc_pool h_src); 0 without in-edges, as DGL's update_all
            h_neigh = self.fc_neigh(ops.gspmm_zero_empty(graph, op, "max", torch.relu(self.fc_pool(feat_src)),
                                                         edge_weight))
        rst = h_neigh if self.aggregator_type == "gcn" else self.fc_self(h_self) + h_neigh
        if self.bias is not None:  # gcn's own bias
            rst = rst + self.bias
        if self.activation is not None:
            rst = self.activation(rst)
        return self.norm(rst) if self.norm is not None else rst

    def _lstm_aggregate(self, graph, feat_src: torch.Tensor, edge_weight: Optional[torch.Tensor]) -> torch.Tensor:
        """DGL's _lstm_reducer: per destination, the LSTM's last hidden state over its (weighted) messages
        [num_dst, in_src]; destinations of one in-degree run as one batch; 0 without in-edges."""
        def reduce(nodes):
            m = nodes.mailbox["m"]  # [n, degree, in_src]
            zeros = m.new_zeros((1, m.shape[0], m.shape[2]))
            _, (last, _) = self.lstm(m, (zeros, zeros))
            return {"neigh": last.squeeze(0)}

        with graph.local_scope():
            graph.srcdata["h"] = feat_src
            if edge_weight is None:
                graph.update_all(fn.copy_u("h", "m"), reduce)
            else:
                graph.edata["_edge_weight"] = edge_weight
                graph.update_all(fn.u_mul_e("h", "_edge_weight", "m"), reduce)
            if "neigh" not in graph.dstdata:  # no edge at all: nothing was reduced
                return feat_src.new_zeros((graph.num_dst_nodes(), feat_src.shape[1]))
            return graph.dstdata["neigh"]


@dgl_attribute_names(_in_src_feats="in_src", _in_dst_feats="in_dst", _out_feats="out_feats", _num_heads="heads",
                     _allow_zero_in_degree="allow_zero_in_degree")
class GATConv(torch.nn.Module):
    """Graph attention: z = W h [N, H, out]; e_{s->d} = LeakyReLU(a_l . z_s + a_r . z_d); alpha = softmax
    over each destination's in-edges; h_d = sum_s alpha z_s (+ residual, + bias) -> [N_dst, H, out].
    Parameters and initialisation as DGL 2.1's (Xavier-normal, ReLU gain; a linear residual carries the bias);
    forward(graph, feat, edge_weight=None, get_attention=False), DGL's order; get_attention=True also returns
    alpha [E, H, 1]. Without either keyword the attention is one fused op
    (topograph.ops.gat_attention) that keeps nothing per edge for the backward; its attention dropout mask is
    drawn by Topograph from a seed taken from torch's generator."""

    def __init__(self, in_feats, out_feats: int, num_heads: int, feat_drop: float = 0.0, attn_drop: float = 0.0,
                 negative_slope: float = 0.2, residual: bool = False, activation=None,
                 allow_zero_in_degree: bool = False, bias: bool = True):
        super().__init__()
        in_src, in_dst = in_feats if isinstance(in_feats, (tuple, list)) else (in_feats, in_feats)
        self.in_src, self.in_dst = in_src, in_dst
        self.heads, self.out_feats, self.activation = num_heads, out_feats, activation
        self.allow_zero_in_degree, self.negative_slope = allow_zero_in_degree, negative_slope
        self.shared = not isinstance(in_feats, (tuple, list))
        if self.shared:
            self.fc = torch.nn.Linear(in_src, out_feats * num_heads, bias=False)
        else:
            self.fc_src = torch.nn.Linear(in_src, out_feats * num_heads, bias=False)
            self.fc_dst = torch.nn.Linear(in_dst, out_feats * num_heads, bias=False)
        self.attn_l = torch.nn.Parameter(torch.empty(1, num_heads, out_feats))
        self.attn_r = torch.nn.Parameter(torch.empty(1, num_heads, out_feats))
        self.feat_drop, self.attn_drop = torch.nn.Dropout(feat_drop), torch.nn.Dropout(attn_drop)
        self.leaky_relu = torch.nn.LeakyReLU(negative_slope)  # a submodule, as DGL's (print(model) lists it)
        # as DGL 2.1: a linear residual carries the bias; otherwise the bias is a parameter of its own
        self.res_fc = None
        if residual:
            self.res_fc = torch.nn.Identity() if in_dst == num_heads * out_feats else \
                torch.nn.Linear(in_dst, num_heads * out_feats, bias=bias)
        linear_residual = isinstance(self.res_fc, torch.nn.Linear)
        self.bias = torch.nn.Parameter(torch.zeros(num_heads * out_feats)) if bias and not linear_residual else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        gain = torch.nn.init.calculate_gain("relu")
        for fc in ([self.fc] if self.shared else [self.fc_src, self.fc_dst]):
            torch.nn.init.xavier_normal_(fc.weight, gain=gain)
        torch.nn.init.xavier_normal_(self.attn_l, gain=gain)
        torch.nn.init.xavier_normal_(self.attn_r, gain=gain)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)
        if isinstance(self.res_fc, torch.nn.Linear):
            torch.nn.init.xavier_normal_(self.res_fc.weight, gain=gain)
            if self.res_fc.bias is not None:
                torch.nn.init.zeros_(self.res_fc.bias)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        """As DGL's: HeteroGraphConv sets it on every module it holds (a relation may leave nodes without in-edges)."""
        self.allow_zero_in_degree = set_value

    def forward(self, graph, feat: Features, edge_weight: Optional[torch.Tensor] = None,
                get_attention: bool = False):
        """edge_weight [E], as DGL's: scales each edge's attention after the softmax and the dropout (the
        weights then need not sum to 1); the alpha returned with get_attention is the scaled one."""
        _check_in_degrees(graph, self.allow_zero_in_degree, "GATConv")
        edge_weight = _edge_weight(graph, edge_weight, "GATConv")
        shape = (-1, self.heads, self.out_feats)
        if isinstance(feat, (tuple, list)):  # bipartite: each side projected
            h_src, h_dst = (self.feat_drop(x) for x in _pair(graph, feat, "GATConv"))
            fc_src, fc_dst = (self.fc, self.fc) if self.shared else (self.fc_src, self.fc_dst)
            z_src, z_dst = fc_src(h_src).view(shape), fc_dst(h_dst).view(shape)
        else:  # one projection; a block's destinations are its first source rows
            h_src = self.feat_drop(feat)
            z_src = self.fc(h_src).view(shape)
            n_dst = graph.num_dst_nodes() if graph.is_block else h_src.shape[0]
            h_dst, z_dst = h_src[:n_dst], z_src[:n_dst]
        el = (z_src * self.attn_l).sum(-1, keepdim=True)  # [N_src, H, 1]
        er = (z_dst * self.attn_r).sum(-1, keepdim=True)  # [N_dst, H, 1]
        if get_attention or edge_weight is not None:  # alpha [E, H, 1] wanted: the composition, which makes it
            e = self.leaky_relu(ops.u_add_v(graph, el, er))
            alpha = self.attn_drop(ops.edge_softmax(graph, e))  # [E, H, 1]
            if edge_weight is not None:
                alpha = alpha * edge_weight.reshape(-1, 1, 1).to(alpha.dtype)
            rst = ops.u_mul_e_sum(graph, z_src, alpha)
        else:  # one fused op: nothing per edge kept for the backward (its mask from Topograph's generator)
            rst = ops.gat_attention(graph, el, er, z_src, self.negative_slope, self.attn_drop.p, self.training)
        if self.res_fc is not None:
            rst = rst + self.res_fc(h_dst).view(shape)
        if self.bias is not None:
            rst = rst + self.bias.view(1, self.heads, self.out_feats)
        if self.activation is not None:
            rst = self.activation(rst)
        return (rst, alpha) if get_attention else rst


class EdgeWeightNorm(torch.nn.Module):
    """Scalar edge weights e [E] normalised as GCN's (dgl.nn.EdgeWeightNorm): norm='both' gives
    e_{s->d} / sqrt((sum of s's out-edge weights + eps) (sum of d's in-edge weights + eps)) (weights must be
    > 0), 'right' e_{s->d} / (sum of d's in-edge weights + eps), 'none' e. On a block, sources and
    destinations are counted apart. Plain torch ops (any float dtype); the weights, for GraphConv(norm='none',
    ...)'s edge_weight, or as SGConv and APPNPConv normalise theirs."""

    def __init__(self, norm: str = "both", eps: float = 0.0):
        super().__init__()
        if norm not in ("both", "right", "none"):
            raise DGLError(f"EdgeWeightNorm: norm must be 'both', 'right' or 'none', got {norm!r}")
        self._norm, self._eps = norm, eps

    def forward(self, graph, edge_weight: torch.Tensor) -> torch.Tensor:
        if edge_weight.dim() != 1 or edge_weight.shape[0] != graph.num_edges():
            raise DGLError(f"EdgeWeightNorm: edge_weight must be one scalar per edge [{graph.num_edges()}], got "
                           f"{tuple(edge_weight.shape)}")
        if self._norm == "none":
            return edge_weight
        if self._norm == "both" and bool((edge_weight <= 0).any()):
            raise DGLError("EdgeWeightNorm: norm='both' takes the square root of weight sums: every edge "
                           "weight must be > 0")
        src, dst = (ids.to(device=edge_weight.device, dtype=torch.int64) for ids in graph.all_edges())
        in_sum = edge_weight.new_zeros(graph.num_dst_nodes()).index_add(0, dst, edge_weight) + self._eps
        if self._norm == "right":
            return edge_weight / in_sum[dst]
        out_sum = edge_weight.new_zeros(graph.num_src_nodes()).index_add(0, src, edge_weight) + self._eps
        return edge_weight * out_sum[src].pow(-0.5) * in_sum[dst].pow(-0.5)


def _edge_weight(graph, edge_weight: Optional[torch.Tensor], what: str) -> Optional[torch.Tensor]:
    if edge_weight is not None and (edge_weight.dim() == 0 or edge_weight.shape[0] != graph.num_edges()):
        raise DGLError(f"{what}: edge_weight must have one row per edge ({graph.num_edges()}), got "
                         f"{tuple(edge_weight.shape)}")
    return edge_weight


def _same_nodes(graph, what: str) -> None:
    """SGConv / APPNPConv propagate k times over the same nodes: not over a block's two sides."""
    if graph.is_block:
        raise ValueError(f"{what}: propagates k times over the same nodes, so it takes a graph, not a block")


class GINConv(torch.nn.Module):
    """Graph isomorphism (Xu et al.): h_d = apply_func((1 + eps) h_d + aggregate_{s -> d} (e_{s->d}) h_s), then
    activation, as dgl.nn.GINConv; aggregator 'sum', 'mean' or 'max' (0 for a destination without in-edges,
    as DGL's update_all), edge_weight e [E] (or broadcastable against the rows) multiplying the messages.
    eps: init_eps, a parameter when learn_eps, else a buffer (named 'eps' either way, as DGL's)."""

    def __init__(self, apply_func=None, aggregator_type: str = "sum", init_eps: float = 0, learn_eps: bool = False,
                 activation=None):
        super().__init__()
        if aggregator_type not in ("sum", "max", "mean"):
            raise DGLKeyError(f"GINConv: aggregator_type must be 'sum', 'max' or 'mean', got {aggregator_type!r}")
        self.apply_func, self._aggregator_type, self.activation = apply_func, aggregator_type, activation
        if learn_eps:
            self.eps = torch.nn.Parameter(torch.tensor([float(init_eps)]))
        else:
            self.register_buffer("eps", torch.tensor([float(init_eps)]))

    def forward(self, graph, feat: Features, edge_weight: Optional[torch.Tensor] = None) -> torch.Tensor:
        feat_src, feat_dst = _pair(graph, feat, "GINConv")
        edge_weight = _edge_weight(graph, edge_weight, "GINConv")
        op = "copy_lhs" if edge_weight is None else "mul"
        # gspmm_zero_empty: a destination without in-edges gets 0 under max too, as DGL's update_all gives it
        neigh = ops.gspmm_zero_empty(graph, op, self._aggregator_type, feat_src, edge_weight)
        rst = (1 + self.eps) * feat_dst + neigh
        if self.apply_func is not None:
            rst = self.apply_func(rst)
        return self.activation(rst) if self.activation is not None else rst


class GINEConv(torch.nn.Module):
    """GIN with edge features (Hu et al.), as dgl.nn.GINEConv: h_d = apply_func((1 + eps) h_d + sum_{s -> d}
    ReLU(h_s + e_{s->d})), edge features e [E, D] with the node features' row shape (a destination without in-edges
    gets (1 + eps) h_d). eps: init_eps, a parameter when learn_eps, else a buffer (named 'eps' either way)."""

    def __init__(self, apply_func=None, init_eps: float = 0, learn_eps: bool = False):
        super().__init__()
        self.apply_func = apply_func
        if learn_eps:
            self.eps = torch.nn.Parameter(torch.tensor([float(init_eps)]))
        else:
            self.register_buffer("eps", torch.tensor([float(init_eps)]))

    def forward(self, graph, node_feat: Features, edge_feat: torch.Tensor) -> torch.Tensor:
        feat_src, feat_dst = _pair(graph, node_feat, "GINEConv")
        if edge_feat.dim() == 0 or edge_feat.shape[0] != graph.num_edges():
            raise ValueError(f"GINEConv: edge_feat must have one row per edge ({graph.num_edges()}), got "
                             f"{tuple(edge_feat.shape)}")
        messages = torch.relu(ops.gsddmm(graph, "add", feat_src, edge_feat, "u", "e"))  # [E, D]
        rst = (1 + self.eps) * feat_dst + ops.copy_e_sum(graph, messages)
        return self.apply_func(rst) if self.apply_func is not None else rst


class SGConv(torch.nn.Module):
    """Simplified graph convolution (Wu et al.): h = fc(norm((D^-1/2 A D^-1/2)^k x)), as dgl.nn.SGConv: D the
    in-degrees (both sides; clamped to >= 1), A the adjacency with its multi-edges (add self loops for A + I);
    with edge_weight [E], A's entries are the weights normalised by EdgeWeightNorm('both'). fc: Linear(in, out,
    bias) with Xavier-uniform weight and zero bias; norm a callable on the propagated features; cached keeps
    them after the first call (transductive use: the graph and features must not change)."""

    def __init__(self, in_feats: int, out_feats: int, k: int = 1, cached: bool = False, bias: bool = True,
                 norm=None, allow_zero_in_degree: bool = False):
        super().__init__()
        self.fc = torch.nn.Linear(in_feats, out_feats, bias=bias)
        self._cached, self._cached_h, self._k = cached, None, k
        self.norm, self._allow_zero_in_degree = norm, allow_zero_in_degree
        self.reset_parameters()

    def reset_parameters(self) -> None:
        torch.nn.init.xavier_uniform_(self.fc.weight)
        if self.fc.bias is not None:
            torch.nn.init.zeros_(self.fc.bias)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        self._allow_zero_in_degree = set_value

    def forward(self, graph, feat: torch.Tensor, edge_weight: Optional[torch.Tensor] = None) -> torch.Tensor:
        _same_nodes(graph, "SGConv")
        _check_in_degrees(graph, self._allow_zero_in_degree, "SGConv")
        if self._cached_h is not None:
            return self.fc(self._cached_h)
        if _edge_weight(graph, edge_weight, "SGConv") is not None:
            weight = EdgeWeightNorm("both")(graph, edge_weight)
            for _ in range(self._k):
                feat = ops.u_mul_e_sum(graph, feat, weight.view(-1, *[1] * (feat.dim() - 1)))
        else:
            norm = _degree_norm(graph.in_degrees(), -0.5, feat)  # [N, 1, ...]
            for _ in range(self._k):
                feat = ops.copy_u_sum(graph, feat * norm) * norm
        if self.norm is not None:
            feat = self.norm(feat)
        if self._cached:
            self._cached_h = feat
        return self.fc(feat)


class APPNPConv(torch.nn.Module):
    """Personalised-PageRank propagation (Gasteiger et al.), as dgl.nn.APPNPConv: h^0 = x, then k times
    h^{l+1} = (1 - alpha) D_in^-1/2 A D_out^-1/2 h^l + alpha x (degrees clamped to >= 1; with edge_weight [E],
    A's entries are the weights normalised by EdgeWeightNorm('both') and no degree scaling). edge_drop: dropout
    on the edges' weights, a new mask each step (training only). No parameters; x [N, *] -> [N, *]."""

    def __init__(self, k: int, alpha: float, edge_drop: float = 0.0):
        super().__init__()
        self._k, self._alpha = k, alpha
        self.edge_drop = torch.nn.Dropout(edge_drop)

    def forward(self, graph, feat: torch.Tensor, edge_weight: Optional[torch.Tensor] = None) -> torch.Tensor:
        _same_nodes(graph, "APPNPConv")
        if _edge_weight(graph, edge_weight, "APPNPConv") is not None:
            weight = EdgeWeightNorm("both")(graph, edge_weight)
            src_norm = dst_norm = None
        else:
            weight = None
            src_norm = _degree_norm(graph.out_degrees(), -0.5, feat)  # [N, 1, ...]
            dst_norm = _degree_norm(graph.in_degrees(), -0.5, feat)
        dropping = self.training and self.edge_drop.p > 0
        feat_0 = feat
        for _ in range(self._k):
            if weight is None and not dropping:  # every edge weight 1: the plain sum
                feat = ops.copy_u_sum(graph, feat * src_norm) * dst_norm
                feat = (1 - self._alpha) * feat + self._alpha * feat_0
                continue
            w = weight if weight is not None else feat.new_ones(graph.num_edges())
            w = self.edge_drop(w).view(-1, *[1] * (feat.dim() - 1))  # [E, 1, ...]
            h = feat * src_norm if src_norm is not None else feat
            feat = ops.u_mul_e_sum(graph, h, w)
            if dst_norm is not None:
                feat = feat * dst_norm
            feat = (1 - self._alpha) * feat + self._alpha * feat_0
        return feat
