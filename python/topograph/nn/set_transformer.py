"""dgl.nn's Set Transformer readout (Lee et al.; DGL 2.1's SetTransformerEncoder / SetTransformerDecoder and
their blocks, same names, parameters and equations), with the attention as a graph: within each graph of a
batch every query attends to every memory row of the same graph, which is a bipartite graph (memory -> query,
an edge per pair of one member) that Topograph's fused sparse attention runs on (ops.sparse_attention: no
padding to the batch's largest graph, no [B, H, n, n] score tensor). A graph without nodes gives its queries
0 from the attention, as DGL's masked softmax does.

Where it differs from DGL 2.1 on purpose: DGL's MultiHeadAttention takes dropouth and dropouta but applies
neither outside the feed-forward's dropout; here dropouta drops attention weights (on the composed path, the
fused op keeping no weights) and dropouth the attention's output, as the names say. In eval mode, or with both
0, the outputs equal DGL's (tests/test_set_transformer.py), except after an empty graph in a batch: DGL 2.1 gets
the graphs that follow it wrong (their rows differ from the same graphs batched without it), this does not."""
from __future__ import annotations

import functools
import warnings
from typing import Sequence, Tuple

import torch

from .. import ops
from .._construct import heterograph
from .glob import _batch_rows


@functools.lru_cache(maxsize=16)
def _attention_graph(lengths_q: Tuple[int, ...], lengths_m: Tuple[int, ...], device: torch.device):
    """Each member b's lengths_q[b] queries (rows of the batch's query tensor, member by member) attend to its
    lengths_m[b] memory rows: edges memory -> query, every pair within a member. Cached by the lengths: every
    layer of a forward (and ISAB's two passes, and each step of a fixed-size batch) asks for the same few graphs,
    and building one costs a quarter of a one-layer encoder's step at 666 sets of 30."""
    lengths_q, lengths_m = _lengths(lengths_q), _lengths(lengths_m)
    pairs = lengths_q * lengths_m
    member = torch.repeat_interleave(torch.arange(pairs.numel()), pairs)
    within = torch.arange(int(pairs.sum())) - (torch.cumsum(pairs, 0) - pairs)[member]
    query = (torch.cumsum(lengths_q, 0) - lengths_q)[member] + within // lengths_m[member].clamp(min=1)
    memory = (torch.cumsum(lengths_m, 0) - lengths_m)[member] + within % lengths_m[member].clamp(min=1)
    return heterograph({("_memory", "_attends", "_query"): (memory, query)},
                       num_nodes_dict={"_memory": int(lengths_m.sum()), "_query": int(lengths_q.sum())}).to(device)


def _check_feat(feat: torch.Tensor, d_model: int, what: str) -> None:
    """feat [N, d_model] of floats, named, before the projections fail on it."""
    if not feat.dtype.is_floating_point:
        raise TypeError(f"{what}: feat must be floating point, got {feat.dtype}")
    if feat.dim() != 2 or feat.shape[1] != d_model:
        raise ValueError(f"{what}: feat must be [N, d_model] = [N, {d_model}], got {tuple(feat.shape)}")


def _lengths(x: Sequence[int]) -> torch.Tensor:
    return torch.as_tensor(x, dtype=torch.int64).cpu()


class MultiHeadAttention(torch.nn.Module):
    """Queries x [sum lengths_x, d_model] attend to memory mem [sum lengths_mem, d_model] within each member;
    x = LayerNorm(x + proj_o(attention)); x = LayerNorm(x + ffn(x)). Projections without bias, Xavier-uniform
    on every matrix, as DGL's."""

    def __init__(self, d_model: int, num_heads: int, d_head: int, d_ff: int, dropouth: float = 0.0,
                 dropouta: float = 0.0):
        super().__init__()
        self.d_model, self.num_heads, self.d_head, self.d_ff = d_model, num_heads, d_head, d_ff
        self.proj_q = torch.nn.Linear(d_model, num_heads * d_head, bias=False)
        self.proj_k = torch.nn.Linear(d_model, num_heads * d_head, bias=False)
        self.proj_v = torch.nn.Linear(d_model, num_heads * d_head, bias=False)
        self.proj_o = torch.nn.Linear(num_heads * d_head, d_model, bias=False)
        self.ffn = torch.nn.Sequential(torch.nn.Linear(d_model, d_ff), torch.nn.ReLU(), torch.nn.Dropout(dropouth),
                                       torch.nn.Linear(d_ff, d_model))
        self.droph, self.dropa = torch.nn.Dropout(dropouth), torch.nn.Dropout(dropouta)
        self.norm_in, self.norm_inter = torch.nn.LayerNorm(d_model), torch.nn.LayerNorm(d_model)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                torch.nn.init.xavier_uniform_(p)

    def forward(self, x: torch.Tensor, mem: torch.Tensor, lengths_x, lengths_mem) -> torch.Tensor:
        lengths_x, lengths_mem = _lengths(lengths_x), _lengths(lengths_mem)
        if lengths_x.numel() != lengths_mem.numel():
            raise ValueError(f"MultiHeadAttention: {lengths_x.numel()} query lengths against {lengths_mem.numel()} "
                             f"memory lengths")
        if x.shape[0] != int(lengths_x.sum()) or mem.shape[0] != int(lengths_mem.sum()):
            raise ValueError(f"MultiHeadAttention: x has {x.shape[0]} rows and mem {mem.shape[0]}, the lengths sum "
                             f"to {int(lengths_x.sum())} and {int(lengths_mem.sum())}")
        g = _attention_graph(tuple(lengths_x.tolist()), tuple(lengths_mem.tolist()), x.device)
        shape = (-1, self.num_heads, self.d_head)
        q, k, v = self.proj_q(x).view(shape), self.proj_k(mem).view(shape), self.proj_v(mem).view(shape)
        if self.training and self.dropa.p > 0:  # the weights themselves dropped: the composed path
            a = self.dropa(ops.edge_softmax(g, ops.u_dot_v(g, k, q) * self.d_head ** -0.5))
            out = ops.u_mul_e_sum(g, v, a)
        else:
            out = ops.sparse_attention(g, q, k, v, self.d_head ** -0.5)  # [sum lengths_x, H, d_head]
        x = self.norm_in(x + self.droph(self.proj_o(out.reshape(x.shape[0], self.num_heads * self.d_head))))
        return self.norm_inter(x + self.ffn(x))


class SetAttentionBlock(torch.nn.Module):
    """SAB: each member's rows attend to themselves."""

    def __init__(self, d_model: int, num_heads: int, d_head: int, d_ff: int, dropouth: float = 0.0,
                 dropouta: float = 0.0):
        super().__init__()
        self.mha = MultiHeadAttention(d_model, num_heads, d_head, d_ff, dropouth=dropouth, dropouta=dropouta)

    def forward(self, feat: torch.Tensor, lengths) -> torch.Tensor:
        return self.mha(feat, feat, lengths, lengths)


class InducedSetAttentionBlock(torch.nn.Module):
    """ISAB: m learned inducing points attend to each member's rows, then the rows attend to those m."""

    def __init__(self, m: int, d_model: int, num_heads: int, d_head: int, d_ff: int, dropouth: float = 0.0,
                 dropouta: float = 0.0):
        super().__init__()
        if m == 1:
            warnings.warn("InducedSetAttentionBlock: with m = 1 the first attention's query and key projections get "
                          "no gradient (a softmax over one key)", stacklevel=2)
        self.m, self.d_model = m, d_model
        self.inducing_points = torch.nn.Parameter(torch.empty(m, d_model))
        self.mha = torch.nn.ModuleList(MultiHeadAttention(d_model, num_heads, d_head, d_ff, dropouth=dropouth,
                                                          dropouta=dropouta) for _ in range(2))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        torch.nn.init.xavier_uniform_(self.inducing_points)

    def forward(self, feat: torch.Tensor, lengths) -> torch.Tensor:
        members = len(lengths)
        memory = self.mha[0](self.inducing_points.repeat(members, 1), feat, [self.m] * members, lengths)
        return self.mha[1](feat, memory, lengths, [self.m] * members)


class PMALayer(torch.nn.Module):
    """PMA: k learned seed vectors attend to ffn(rows) of each member -> [members * k, d_model]."""

    def __init__(self, k: int, d_model: int, num_heads: int, d_head: int, d_ff: int, dropouth: float = 0.0,
                 dropouta: float = 0.0):
        super().__init__()
        if k == 1:
            warnings.warn("PMALayer: with k = 1 the attention's query and key projections get no gradient",
                          stacklevel=2)
        self.k, self.d_model = k, d_model
        self.seed_vectors = torch.nn.Parameter(torch.empty(k, d_model))
        self.mha = MultiHeadAttention(d_model, num_heads, d_head, d_ff, dropouth=dropouth, dropouta=dropouta)
        self.ffn = torch.nn.Sequential(torch.nn.Linear(d_model, d_ff), torch.nn.ReLU(), torch.nn.Dropout(dropouth),
                                       torch.nn.Linear(d_ff, d_model))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        torch.nn.init.xavier_uniform_(self.seed_vectors)

    def forward(self, feat: torch.Tensor, lengths) -> torch.Tensor:
        members = len(lengths)
        return self.mha(self.seed_vectors.repeat(members, 1), self.ffn(feat), [self.k] * members, lengths)


class SetTransformerEncoder(torch.nn.Module):
    """n_layers SAB blocks (block_type 'sab') or ISAB blocks with m inducing points ('isab') over each graph's
    nodes: [N, d_model] -> [N, d_model]."""

    def __init__(self, d_model: int, n_heads: int, d_head: int, d_ff: int, n_layers: int = 1, block_type: str = "sab",
                 m=None, dropouth: float = 0.0, dropouta: float = 0.0):
        super().__init__()
        if block_type not in ("sab", "isab"):
            raise KeyError(f"SetTransformerEncoder: block_type must be 'sab' or 'isab', got {block_type!r}")
        if block_type == "isab" and m is None:
            raise KeyError("SetTransformerEncoder: block_type 'isab' needs m, the number of inducing points")
        self.n_layers, self.block_type, self.m, self.d_model = n_layers, block_type, m, d_model
        self.layers = torch.nn.ModuleList(
            SetAttentionBlock(d_model, n_heads, d_head, d_ff, dropouth=dropouth, dropouta=dropouta)
            if block_type == "sab" else
            InducedSetAttentionBlock(m, d_model, n_heads, d_head, d_ff, dropouth=dropouth, dropouta=dropouta)
            for _ in range(n_layers))

    def forward(self, graph, feat: torch.Tensor) -> torch.Tensor:
        lengths = _batch_rows(graph, feat, "SetTransformerEncoder")
        _check_feat(feat, self.d_model, "SetTransformerEncoder")
        for layer in self.layers:
            feat = layer(feat, lengths)
        return feat


class SetTransformerDecoder(torch.nn.Module):
    """PMA with k seeds, then n_layers SAB blocks over each graph's k rows: [N, d_model] -> [B, k * d_model]."""

    def __init__(self, d_model: int, num_heads: int, d_head: int, d_ff: int, n_layers: int, k: int,
                 dropouth: float = 0.0, dropouta: float = 0.0):
        super().__init__()
        self.n_layers, self.k, self.d_model = n_layers, k, d_model
        self.pma = PMALayer(k, d_model, num_heads, d_head, d_ff, dropouth=dropouth, dropouta=dropouta)
        self.layers = torch.nn.ModuleList(
            SetAttentionBlock(d_model, num_heads, d_head, d_ff, dropouth=dropouth, dropouta=dropouta)
            for _ in range(n_layers))

    def forward(self, graph, feat: torch.Tensor) -> torch.Tensor:
        lengths = _batch_rows(graph, feat, "SetTransformerDecoder")
        _check_feat(feat, self.d_model, "SetTransformerDecoder")
        members = lengths.numel()
        feat = self.pma(feat, lengths)
        for layer in self.layers:
            feat = layer(feat, [self.k] * members)
        return feat.view(members, self.k * self.d_model)
