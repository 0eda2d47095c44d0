"""dgl.nn's containers and helpers (DGL 2.1 names and behaviour): Sequential, which hands each module the graph
(or its own graph of a list, as a block-per-layer model needs) with the previous module's outputs;
JumpingKnowledge, which combines per-layer features; LabelPropagation, no parameters, k propagation steps of
the labels."""
from __future__ import annotations

import torch

from .._graph import DGLGraph


class Sequential(torch.nn.Sequential):
    """forward(graph, *feats): each module is called as module(graph, *feats) with the previous one's output
    (a tuple is spread over the arguments); with a list of graphs, the i-th module gets the i-th graph."""

    def forward(self, graph, *feats):
        if isinstance(graph, list):
            pairs = zip(graph, self)
        elif isinstance(graph, DGLGraph):
            pairs = ((graph, module) for module in self)
        else:
            raise TypeError(f"Sequential: the first argument must be a graph or a list of graphs, got "
                            f"{type(graph).__name__}")
        for g, module in pairs:
            feats = module(g, *(feats if isinstance(feats, tuple) else (feats,)))
        return feats


class JumpingKnowledge(torch.nn.Module):
    """Jumping knowledge aggregation of a list of per-layer node features [N, D] (Xu et al.): 'cat' -> [N, L D],
    'max' (elementwise) -> [N, D], 'lstm' (a bidirectional LSTM over the layers scores each; softmax weights;
    in_feats and num_layers required) -> [N, D]. Parameters lstm.*, att.* as DGL's."""

    def __init__(self, mode: str = "cat", in_feats=None, num_layers=None):
        super().__init__()
        if mode not in ("cat", "max", "lstm"):
            raise ValueError(f"JumpingKnowledge: mode must be 'cat', 'max' or 'lstm', got {mode!r}")
        self.mode = mode
        if mode == "lstm":
            if in_feats is None or num_layers is None:
                raise ValueError("JumpingKnowledge: mode 'lstm' needs in_feats and num_layers")
            hidden = num_layers * in_feats // 2
            self.lstm = torch.nn.LSTM(in_feats, hidden, bidirectional=True, batch_first=True)
            self.att = torch.nn.Linear(2 * hidden, 1)

    def reset_parameters(self) -> None:
        if self.mode == "lstm":
            self.lstm.reset_parameters()
            self.att.reset_parameters()

    def forward(self, feat_list) -> torch.Tensor:
        if self.mode == "cat":
            return torch.cat(feat_list, dim=-1)
        if self.mode == "max":
            return torch.stack(feat_list, dim=-1).amax(dim=-1)
        stacked = torch.stack(feat_list, dim=1)  # [N, L, D]
        alpha = torch.softmax(self.att(self.lstm(stacked)[0]).squeeze(-1), dim=-1)  # [N, L]
        return (stacked * alpha.unsqueeze(-1)).sum(dim=1)


class LabelPropagation(torch.nn.Module):
    """Label propagation (Zhou et al.), as dgl.nn.LabelPropagation: y <- (1 - alpha) y0 + alpha A~ y, k times,
    A~ = D_in^-1/2 A D_out^-1/2 ('sym') or D_in^-1 A ('row') (degrees clamped to >= 1); y0 the one-hot labels
    (or given soft labels [N, C]) of the `mask` nodes, zero elsewhere; clamp to [0, 1], L1-normalise rows and
    reset the masked rows to their labels after each step as asked. forward(g, labels, mask=None) -> [N, C]."""

    def __init__(self, k: int, alpha: float, norm_type: str = "sym", clamp: bool = True, normalize: bool = False,
                 reset: bool = False):
        super().__init__()
        if norm_type not in ("sym", "row"):
            raise ValueError(f"LabelPropagation: norm_type must be 'sym' or 'row', got {norm_type!r}")
        self.k, self.alpha, self.norm_type = k, alpha, norm_type
        self.clamp, self.normalize, self.reset = clamp, normalize, reset

    @torch.no_grad()
    def forward(self, g, labels: torch.Tensor, mask=None) -> torch.Tensor:
        from .. import ops

        if labels.dim() > 1 and labels.shape[1] > 1:
            labels = labels.to(torch.float32)
        else:
            labels = torch.nn.functional.one_hot(labels.view(-1)).to(torch.float32)
        y = labels
        if mask is not None:
            y = torch.zeros_like(labels)
            y[mask] = labels[mask]
        init = (1 - self.alpha) * y
        in_norm = g.in_degrees().float().clamp(min=1).pow(-0.5 if self.norm_type == "sym" else -1.0).unsqueeze(1)
        out_norm = g.out_degrees().float().clamp(min=1).pow(-0.5).unsqueeze(1)
        for _ in range(self.k):
            y = init + self.alpha * ops.copy_u_sum(g, y * out_norm if self.norm_type == "sym" else y) * in_norm
            if self.clamp:
                y = y.clamp(0.0, 1.0)
            if self.normalize:
                y = torch.nn.functional.normalize(y, p=1)
            if self.reset:
                y[mask] = labels[mask]
        return y


class WeightBasis(torch.nn.Module):
    """Basis decomposition of num_outputs weights of `shape` (Schlichtkrull et al.): forward() -> w_comp @ the
    num_bases bases, [num_outputs, *shape]; Xavier-uniform (ReLU gain) initialisation, as DGL's."""

    def __init__(self, shape, num_bases: int, num_outputs: int):
        super().__init__()
        self.shape, self.num_bases, self.num_outputs = tuple(shape), num_bases, num_outputs
        if num_outputs <= num_bases:
            import warnings

            warnings.warn("WeightBasis: the number of weight outputs should be larger than the number of bases",
                          stacklevel=2)
        gain = torch.nn.init.calculate_gain("relu")
        self.weight = torch.nn.Parameter(torch.empty(num_bases, *self.shape))
        torch.nn.init.xavier_uniform_(self.weight, gain=gain)
        self.w_comp = torch.nn.Parameter(torch.empty(num_outputs, num_bases))
        torch.nn.init.xavier_uniform_(self.w_comp, gain=gain)

    def forward(self) -> torch.Tensor:
        return (self.w_comp @ self.weight.view(self.num_bases, -1)).view(self.num_outputs, *self.shape)
