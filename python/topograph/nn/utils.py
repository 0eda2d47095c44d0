"""dgl.nn's containers and heads (DGL 2.1 names and behaviour): Sequential, which hands each module the graph
(or its own graph of a list, as a block-per-layer model needs) with the previous module's outputs, and
EdgePredictor, the link-prediction head over (source, destination) feature pairs."""
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


class EdgePredictor(torch.nn.Module):
    """Scores of node pairs h_src, h_dst [E, D]: 'dot' -> [E, 1], 'cos' (cosine similarity) -> [E, 1], 'ele'
    (elementwise product) -> [E, D], 'cat' -> [E, 2D]; then, when in_feats and out_feats are both given, a
    Linear to out_feats (its input 1 for dot / cos, 2 in_feats for cat), as DGL's."""

    def __init__(self, op: str, in_feats=None, out_feats=None, bias: bool = False):
        super().__init__()
        if op not in ("dot", "cos", "ele", "cat"):
            raise ValueError(f"EdgePredictor: op must be 'dot', 'cos', 'ele' or 'cat', got {op!r}")
        self.op = op
        self.linear = None
        if in_feats is not None and out_feats is not None:
            width = {"dot": 1, "cos": 1, "ele": in_feats, "cat": 2 * in_feats}[op]
            self.linear = torch.nn.Linear(width, out_feats, bias=bias)

    def reset_parameters(self) -> None:
        if self.linear is not None:
            self.linear.reset_parameters()

    def forward(self, h_src: torch.Tensor, h_dst: torch.Tensor) -> torch.Tensor:
        if h_src.shape != h_dst.shape:
            raise ValueError(f"EdgePredictor: h_src and h_dst must have one shape, got {tuple(h_src.shape)} and "
                             f"{tuple(h_dst.shape)}")
        if self.op == "dot":
            h = (h_src * h_dst).sum(-1, keepdim=True)
        elif self.op == "cos":
            h = torch.nn.functional.cosine_similarity(h_src, h_dst).unsqueeze(-1)
        elif self.op == "ele":
            h = h_src * h_dst
        else:
            h = torch.cat([h_src, h_dst], dim=-1)
        return self.linear(h) if self.linear is not None else h
