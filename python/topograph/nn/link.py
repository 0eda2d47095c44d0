"""dgl.nn's link-prediction heads (DGL 2.1 names, parameters and equations): EdgePredictor over (source,
destination) feature pairs, and the knowledge-graph scores TransE (Bordes et al.) and TransR (Lin et al.)."""
from __future__ import annotations

import torch


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


class TransE(torch.nn.Module):
    """score = -|| h_head + r - h_tail ||_p with r = rel_emb(rels): h_head, h_tail [E, feats], rels [E] -> [E]."""

    def __init__(self, num_rels: int, feats: int, p: int = 1):
        super().__init__()
        self.rel_emb = torch.nn.Embedding(num_rels, feats)
        self.p = p

    def reset_parameters(self) -> None:
        self.rel_emb.reset_parameters()

    def forward(self, h_head: torch.Tensor, h_tail: torch.Tensor, rels: torch.Tensor) -> torch.Tensor:
        return -torch.norm(h_head + self.rel_emb(rels) - h_tail, p=self.p, dim=-1)


class TransR(torch.nn.Module):
    """TransE in a relation's own space: heads and tails [E, nfeats] projected by the relation's matrix
    [nfeats, rfeats] (rel_project), then -|| M h_head + r - M h_tail ||_p -> [E]."""

    def __init__(self, num_rels: int, rfeats: int, nfeats: int, p: int = 1):
        super().__init__()
        self.rel_emb = torch.nn.Embedding(num_rels, rfeats)
        self.rel_project = torch.nn.Embedding(num_rels, nfeats * rfeats)
        self.rfeats, self.nfeats, self.p = rfeats, nfeats, p

    def reset_parameters(self) -> None:
        self.rel_emb.reset_parameters()
        self.rel_project.reset_parameters()

    def forward(self, h_head: torch.Tensor, h_tail: torch.Tensor, rels: torch.Tensor) -> torch.Tensor:
        project = self.rel_project(rels).view(-1, self.nfeats, self.rfeats)
        head = torch.bmm(h_head.unsqueeze(1), project).squeeze(1)
        tail = torch.bmm(h_tail.unsqueeze(1), project).squeeze(1)
        return -torch.norm(head + self.rel_emb(rels) - tail, p=self.p, dim=-1)
