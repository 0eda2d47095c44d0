"""dgl.nn.DeepWalk (Perozzi et al.) and MetaPath2Vec (Dong et al.), DGL 2.1's names, defaults and losses: node
and context embeddings trained by skip-gram with negative sampling on random walks (topograph.sampling.
random_walk). DeepWalk: sample(indices) draws the walks from those start nodes, forward(walks) is the loss,
node_embed holds the embeddings; fast_neg draws the negatives among the batch's own walk positions (DGL's
shortcut; a permutation from torch's generator where DGL shuffles a Python list), otherwise from the
out-degree^0.75 distribution. MetaPath2Vec: its class docstring."""
from __future__ import annotations

import torch

from .. import random as _random
from .._base import DGLError
from .._random_walks import random_walk


class DeepWalk(torch.nn.Module):
    def __init__(self, g, emb_dim: int = 128, walk_length: int = 40, window_size: int = 5, neg_weight: float = 1,
                 negative_size: int = 5, fast_neg: bool = True, sparse: bool = True):
        super().__init__()
        if walk_length < window_size + 1:
            raise DGLError(f"DeepWalk: walk_length must be >= window_size + 1, got {walk_length} and "
                           f"{window_size + 1}")
        self.g, self.emb_dim, self.window_size, self.walk_length = g, emb_dim, window_size, walk_length
        self.neg_weight, self.negative_size, self.fast_neg = neg_weight, negative_size, fast_neg
        n = g.num_nodes()
        self.node_embed = torch.nn.Embedding(n, emb_dim, sparse=sparse)
        self.context_embed = torch.nn.Embedding(n, emb_dim, sparse=sparse)
        self.reset_parameters()
        if not fast_neg:
            prob = g.out_degrees().float().pow(0.75)
            self.neg_prob = prob / prob.sum()
        # (context position, centre position) pairs within the window of each walk position, DGL's order
        def window(i):
            return list(range(max(0, i - window_size), i)) + list(range(i + 1, min(walk_length, i + 1 + window_size)))

        pairs = [(j, i) for i in range(walk_length) for j in window(i)]
        self.idx_list_src = torch.tensor([j for j, _ in pairs], dtype=torch.int64)
        self.idx_list_dst = torch.tensor([i for _, i in pairs], dtype=torch.int64)

    def reset_parameters(self) -> None:
        bound = 1.0 / self.emb_dim
        torch.nn.init.uniform_(self.node_embed.weight.data, -bound, bound)
        torch.nn.init.constant_(self.context_embed.weight.data, 0)

    def sample(self, indices) -> torch.Tensor:
        """Walks of walk_length nodes from each start node [len(indices), walk_length] (a DataLoader's
        collate_fn)."""
        return random_walk(self.g, torch.as_tensor(indices), length=self.walk_length - 1)[0]

    def forward(self, batch_walk: torch.Tensor) -> torch.Tensor:
        if bool((batch_walk < 0).any()):
            raise DGLError("DeepWalk: a walk stopped early (a node without out-edges, its later positions -1); "
                           "give every node an out-edge (e.g. topograph.add_self_loop)")
        batch, device = len(batch_walk), batch_walk.device
        nodes = self.node_embed(batch_walk).view(-1, self.emb_dim)
        contexts = self.context_embed(batch_walk).view(-1, self.emb_dim)
        offset = (torch.arange(batch) * self.walk_length).unsqueeze(1)
        src = (offset + self.idx_list_src.unsqueeze(0)).view(-1).to(device)
        dst = (offset + self.idx_list_dst.unsqueeze(0)).view(-1).to(device)
        neg_src = dst.repeat_interleave(self.negative_size)
        if self.fast_neg:
            pool = torch.arange(batch * self.walk_length).repeat(self.negative_size * self.window_size * 2)
            neg_context = contexts[pool[torch.randperm(pool.numel())[:neg_src.numel()]].to(device)]
        else:
            drawn = _random.choice(self.g.num_nodes(), neg_src.numel(), prob=self.neg_prob)
            neg_context = self.context_embed(drawn.to(device))
        positive = torch.clamp((nodes[src] * contexts[dst]).sum(1), min=-6, max=6)
        negative = torch.clamp((nodes[neg_src] * neg_context).sum(1), min=-6, max=6)
        loss = torch.nn.functional.logsigmoid(positive).neg().mean() + \
            torch.nn.functional.logsigmoid(-negative).neg().mean() * self.negative_size * self.neg_weight
        return loss.mean()


class MetaPath2Vec(torch.nn.Module):
    """dgl.nn.MetaPath2Vec (Dong et al.): skip-gram with negative sampling over metapath-guided walks of a
    heterograph. Every node has one row of node_embed / context_embed, numbered type after type (g.ntypes
    order, as to_homogeneous numbers them; local_to_global_nid[ntype] lists a type's rows, as DGL's).
    sample(indices) walks the metapath from those nodes of its first type and returns (centres, contexts,
    negatives [pairs, negative_size]): each walk position against the others within window_size of it (the
    position itself excluded; DGL 2.1 compares the wrong index there and so keeps some self pairs and drops
    others), negatives drawn by the walk-visit frequency ^ 0.75 of one walk from every node of the first type,
    as DGL computes it. forward(pos_u, pos_v, neg_v) is the loss."""

    def __init__(self, g, metapath, window_size: int, emb_dim: int = 128, negative_size: int = 5,
                 sparse: bool = True):
        super().__init__()
        if len(metapath) + 1 < window_size:
            raise DGLError(f"MetaPath2Vec: len(metapath) must be >= window_size - 1, got {len(metapath)} and "
                           f"{window_size}")
        self.hg, self.emb_dim, self.metapath = g, emb_dim, list(metapath)
        self.window_size, self.negative_size = window_size, negative_size
        first = g.to_canonical_etype(metapath[0])[0]
        self.node_metapath = [first] + [g.to_canonical_etype(e)[2] for e in metapath]
        offsets, total = {}, 0
        for t in g.ntypes:
            offsets[t], total = total, total + g.num_nodes(t)
        self._offsets = torch.tensor([offsets[t] for t in self.node_metapath])
        # DGL's attribute: {ntype: [the global id (node_embed's row) of each node of that type]}, which its
        # docs index node_embed with (torch.LongTensor(model.local_to_global_nid['user']))
        self.local_to_global_nid = {t: list(range(offsets[t], offsets[t] + g.num_nodes(t))) for t in g.ntypes}
        walks = self._global_walks(torch.arange(g.num_nodes(first)))
        frequency = torch.bincount(walks[walks >= 0], minlength=total).float()
        prob = frequency.pow(0.75)
        self.neg_prob = prob / prob.sum()
        self.node_embed = torch.nn.Embedding(total, emb_dim, sparse=sparse)
        self.context_embed = torch.nn.Embedding(total, emb_dim, sparse=sparse)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / self.emb_dim
        torch.nn.init.uniform_(self.node_embed.weight.data, -bound, bound)
        torch.nn.init.constant_(self.context_embed.weight.data, 0)

    def _global_walks(self, starts: torch.Tensor) -> torch.Tensor:
        """Metapath walks from `starts`, in the global numbering; -1 after a walk stops."""
        traces, _ = random_walk(self.hg, starts, metapath=self.metapath)
        return torch.where(traces >= 0, traces + self._offsets, torch.full_like(traces, -1))

    def sample(self, indices):
        walks = self._global_walks(torch.as_tensor(indices))
        length = walks.shape[1]
        i, j = torch.meshgrid(torch.arange(length), torch.arange(length), indexing="ij")
        near = (i != j) & (j >= i - self.window_size) & (j < i + self.window_size)
        centre, context = walks[:, i[near]].reshape(-1), walks[:, j[near]].reshape(-1)
        keep = (centre >= 0) & (context >= 0)
        u, v = centre[keep], context[keep]
        neg = _random.choice(self.neg_prob.numel(), u.numel() * self.negative_size, prob=self.neg_prob)
        return u, v, neg.view(u.numel(), self.negative_size)

    def forward(self, pos_u: torch.Tensor, pos_v: torch.Tensor, neg_v: torch.Tensor) -> torch.Tensor:
        emb_u = self.node_embed(pos_u)
        score = -torch.nn.functional.logsigmoid(torch.clamp((emb_u * self.context_embed(pos_v)).sum(1), -10, 10))
        neg = torch.bmm(self.context_embed(neg_v), emb_u.unsqueeze(2)).squeeze(2)
        neg_score = -torch.nn.functional.logsigmoid(-torch.clamp(neg, -10, 10)).sum(1)
        return (score + neg_score).mean()
