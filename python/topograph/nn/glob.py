"""dgl.nn's graph pooling (dgl.nn.pytorch.glob) under its names, with its equations and parameters (DGL 2.1):
SumPooling, AvgPooling, MaxPooling, SortPooling, GlobalAttentionPooling, WeightAndSum and Set2Set. Each reads
out a graph, or each graph of a batch (topograph.batch), from node features feat [N, *] (N: the batch's nodes, graph by
graph) into one row per graph [B, ...], through topograph.readout's per-graph reductions (plain torch ops:
any dtype, torch's autograd). A graph without nodes reads out 0. The graph must have one node type."""
from __future__ import annotations

import torch

from .. import _segment
from .._base import DGLError, DGLRuntimeError
from ..readout import _check_graph, _topk


def _batch_rows(graph, feat: torch.Tensor, what: str) -> torch.Tensor:
    """[B]: the nodes of each graph of the batch, once feat is checked to hold a row per node."""
    _check_graph(graph, what)
    if not isinstance(feat, torch.Tensor) or feat.dim() == 0:
        raise ValueError(f"{what}: feat must be a tensor [N, *], got {getattr(feat, 'shape', type(feat).__name__)}")
    if len(graph.ntypes) != 1:
        raise ValueError(f"{what}: the graph has node types {graph.ntypes}; pooling reads a graph of one node type")
    seglen = graph.batch_num_nodes()
    if feat.shape[0] != int(seglen.sum()):
        raise DGLError(f"{what}: feat has {feat.shape[0]} rows, the graph has {int(seglen.sum())} nodes")
    return seglen


class SumPooling(torch.nn.Module):
    """r_b = sum of feat over graph b's nodes: [N, *] -> [B, *] (dgl.nn.SumPooling)."""

    def forward(self, graph, feat: torch.Tensor) -> torch.Tensor:
        return _segment.segment_reduce(_batch_rows(graph, feat, "SumPooling"), feat, "sum")


class AvgPooling(torch.nn.Module):
    """r_b = mean of feat over graph b's nodes: [N, *] -> [B, *] (dgl.nn.AvgPooling)."""

    def forward(self, graph, feat: torch.Tensor) -> torch.Tensor:
        return _segment.segment_reduce(_batch_rows(graph, feat, "AvgPooling"), feat, "mean")


class MaxPooling(torch.nn.Module):
    """r_b = elementwise max of feat over graph b's nodes: [N, *] -> [B, *] (dgl.nn.MaxPooling); the gradient
    goes to the first node holding each max, as DGL's."""

    def forward(self, graph, feat: torch.Tensor) -> torch.Tensor:
        return _segment.segment_reduce(_batch_rows(graph, feat, "MaxPooling"), feat, "max")


class SortPooling(torch.nn.Module):
    """DGCNN's sort pooling (Zhang et al.), as dgl.nn.SortPooling: each node's features sorted ascending, then
    per graph the k nodes with the largest last (greatest) value, flattened: [N, D] -> [B, k * D]; a graph
    with fewer than k nodes gets rows of 0 after its own."""

    def __init__(self, k: int):
        super().__init__()
        self.k = k

    def forward(self, graph, feat: torch.Tensor) -> torch.Tensor:
        seglen = _batch_rows(graph, feat, "SortPooling")
        feat, _ = feat.sort(dim=-1)
        top, _ = _topk(feat, seglen, self.k, True, -1, "feat", "SortPooling")  # [B, k, D]
        return top.reshape(-1, self.k * feat.shape[-1])


class GlobalAttentionPooling(torch.nn.Module):
    """Gated graph sequence networks' readout (Li et al.), as dgl.nn.GlobalAttentionPooling:
    r_b = sum over graph b's nodes v of softmax_b(gate_nn(x_v)) * feat_nn(x_v) (feat_nn None: x_v), the
    softmax over each graph's nodes; gate_nn must give [N, 1]. forward(graph, feat, get_attention=False)
    -> [B, *] (and the gates after the softmax [N, 1] with get_attention)."""

    def __init__(self, gate_nn: torch.nn.Module, feat_nn: torch.nn.Module = None):
        super().__init__()
        self.gate_nn, self.feat_nn = gate_nn, feat_nn

    def forward(self, graph, feat: torch.Tensor, get_attention: bool = False):
        seglen = _batch_rows(graph, feat, "GlobalAttentionPooling")
        gate = self.gate_nn(feat)
        if gate.dim() < 2 or gate.shape[0] != feat.shape[0] or gate.shape[-1] != 1:
            raise ValueError(f"GlobalAttentionPooling: gate_nn must give one score per node [N, 1], got "
                             f"{tuple(gate.shape)}")
        feat = self.feat_nn(feat) if self.feat_nn is not None else feat
        gate = _segment.segment_softmax(seglen, gate)  # [N, 1]
        readout = _segment.segment_reduce(seglen, feat * gate, "sum")
        return (readout, gate) if get_attention else readout


class WeightAndSum(torch.nn.Module):
    """DGL's WeightAndSum (dgl.nn.WeightAndSum; DGL-LifeSci's molecule readout): r_b = sum over graph b's nodes
    of sigmoid(Linear(x_v)) * x_v, [N, in_feats] -> [B, in_feats]; atom_weighting = Sequential(Linear(in_feats,
    1), Sigmoid()), so a DGL state_dict loads."""

    def __init__(self, in_feats: int):
        super().__init__()
        self.in_feats = in_feats
        self.atom_weighting = torch.nn.Sequential(torch.nn.Linear(in_feats, 1), torch.nn.Sigmoid())

    def forward(self, g, feats: torch.Tensor) -> torch.Tensor:  # DGL 2.1 names the graph g here (not graph)
        seglen = _batch_rows(g, feats, "WeightAndSum")
        return _segment.segment_reduce(seglen, feats * self.atom_weighting(feats), "sum")


class Set2Set(torch.nn.Module):
    """Set2Set (Vinyals et al.), as dgl.nn.Set2Set, per graph: q_t = LSTM(q*_{t-1}), a_v = softmax over the
    graph's nodes of x_v . q_t, r_t = sum_v a_v x_v, q*_t = [q_t, r_t], for n_iters steps from q*_0 = 0:
    [N, input_dim] -> [B, 2 * input_dim]. lstm: torch.nn.LSTM(2 * input_dim, input_dim, n_layers)."""

    def __init__(self, input_dim: int, n_iters: int, n_layers: int):
        super().__init__()
        self.input_dim, self.output_dim = input_dim, 2 * input_dim
        self.n_iters, self.n_layers = n_iters, n_layers
        self.lstm = torch.nn.LSTM(self.output_dim, self.input_dim, n_layers)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.lstm.reset_parameters()

    def forward(self, graph, feat: torch.Tensor) -> torch.Tensor:
        seglen = _batch_rows(graph, feat, "Set2Set")
        if feat.dim() != 2 or feat.shape[1] != self.input_dim:
            # DGL 2.1's mismatch surfaces as torch's RuntimeError inside the LSTM step
            raise DGLRuntimeError(f"Set2Set: feat must be [N, {self.input_dim}], got {tuple(feat.shape)}")
        batch = seglen.numel()
        state = (feat.new_zeros((self.n_layers, batch, self.input_dim)),
                 feat.new_zeros((self.n_layers, batch, self.input_dim)))
        q_star = feat.new_zeros(batch, self.output_dim)
        for _ in range(self.n_iters):
            q, state = self.lstm(q_star.unsqueeze(0), state)
            q = q.view(batch, self.input_dim)  # [B, D]
            score = (feat * _segment.repeat_rows(q, seglen, "Set2Set")).sum(dim=-1, keepdim=True)  # [N, 1]
            alpha = _segment.segment_softmax(seglen, score)
            readout = _segment.segment_reduce(seglen, feat * alpha, "sum")  # [B, D]
            q_star = torch.cat([q, readout], dim=-1)
        return q_star

    def extra_repr(self) -> str:
        return f"n_iters={self.n_iters}"
