"""topograph.nn.GraphMultiHeadAttention: nn/attention.hpp's layer as a torch.nn.Module.

out_d = W_O [head_1; ...; head_H],  head = sum_{s -> d} softmax_s(q_d . k_s / sqrt(d_h)) v_s,
q = W_Q x_dst, k = W_K x_src, v = W_V x_src (d_h = dim / heads). The projections are torch.nn.Linear
(torch's initialisation); the attention is Topograph's fused kernel (topograph.ops.sparse_attention), over
a graph with one relation or over several relations into one node type with one softmax across them.

As in nn/attention.hpp, the same weights also run
- in head groups: ``layer([(heads_1, g_1), (heads_2, g_2), ...], x)``, the first heads_1 heads attending over
  g_1, the next over g_2, ... (Multi-Scale's scales, each a window graph), concatenated before W_O;
- without a graph: ``layer.forward_band(x, lengths, radius)``, self-attention within packed sequences on the
  fused dense kernel (topograph.ops.band_attention), each head within its own band: the window graphs of the
  head groups as bands, no graph built.
"""
from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple, Union

import torch

from .. import ops

SourceStates = Optional[Union[torch.Tensor, Dict[str, torch.Tensor]]]


class GraphMultiHeadAttention(torch.nn.Module):
    def __init__(self, dim: int, heads: int, bias: bool = True):
        super().__init__()
        if heads <= 0 or dim % heads:
            raise ValueError(f"GraphMultiHeadAttention: dim {dim} must split into {heads} equal heads")
        self.dim, self.heads = dim, heads
        self.q, self.k, self.v, self.o = (torch.nn.Linear(dim, dim, bias=bias) for _ in range(4))

    def forward(self, g, dst_states: torch.Tensor, src_states: SourceStates = None) -> torch.Tensor:
        """dst_states [num_dst, dim]; src_states [num_src, dim], or {source type: [n, dim]} when g has several
        relations, or None for self-attention (sources are the destinations) -> [num_dst, dim].

        g: a graph, or head groups [(heads, graph), ...] whose heads sum to the layer's (every graph with the
        same destination and source nodes)."""
        self._check_states(dst_states, "dst_states")
        if isinstance(src_states, dict):
            for t, x in src_states.items():
                self._check_states(x, f"src_states[{t!r}]")
        elif src_states is not None:
            self._check_states(src_states, "src_states")
        src = dst_states if src_states is None else src_states
        q = self._split(self.q(dst_states))
        if isinstance(src, dict):
            k = {t: self._split(self.k(x)) for t, x in src.items()}
            v = {t: self._split(self.v(x)) for t, x in src.items()}
        else:
            k, v = self._split(self.k(src)), self._split(self.v(src))
        if not isinstance(g, (list, tuple)):
            return self.o(ops.sparse_attention(g, q, k, v).reshape(-1, self.dim))
        groups = self._head_groups(g)
        parts, first = [], 0
        for heads, graph in groups:  # heads [first, first + heads) over this group's graph
            pick = slice(first, first + heads)
            kg = {t: x[:, pick] for t, x in k.items()} if isinstance(k, dict) else k[:, pick]
            vg = {t: x[:, pick] for t, x in v.items()} if isinstance(v, dict) else v[:, pick]
            parts.append(ops.sparse_attention(graph, q[:, pick], kg, vg, scale=self._scale()))
            first += heads
        return self.o(torch.cat(parts, dim=1).reshape(-1, self.dim))

    def forward_band(self, states: torch.Tensor, lengths, radius=None) -> torch.Tensor:
        """Self-attention within packed sequences: sequence b owns lengths[b] consecutive rows of states
        [rows, dim]; radius as topograph.ops.band_attention takes it (None: full; an int; [B]; [B, H] or
        [1, H]: one band per head). -> [rows, dim]."""
        self._check_states(states, "states")
        q, k, v = (self._split(p(states)) for p in (self.q, self.k, self.v))
        return self.o(ops.band_attention(q, k, v, lengths, radius, scale=self._scale()).reshape(-1, self.dim))

    def _check_states(self, x, name: str) -> None:
        """Rows [n, dim] of floats: anything else named here, rather than reshaped into other heads (a [n, H,
        d] tensor viewed as more rows) or failing inside the projection or kernel."""
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"GraphMultiHeadAttention: {name} must be a tensor, got {type(x).__name__}")
        if not x.dtype.is_floating_point:
            raise TypeError(f"GraphMultiHeadAttention: {name} must be floating point, got {x.dtype}")
        if x.dim() != 2 or x.shape[1] != self.dim:
            raise ValueError(f"GraphMultiHeadAttention: {name} must be [rows, {self.dim}] (rows, dim), got "
                             f"{tuple(x.shape)}")

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(-1, self.heads, self.dim // self.heads)  # [rows, dim] -> [rows, H, d_h]

    def _scale(self) -> float:
        return (self.dim // self.heads) ** -0.5  # 1 / sqrt(d_h) in every form, as the layer's own

    def _head_groups(self, groups: Sequence[Tuple[int, object]]):
        groups = [(int(h), graph) for h, graph in groups]
        if any(h < 0 for h, _ in groups) or sum(h for h, _ in groups) != self.heads:
            raise ValueError(f"GraphMultiHeadAttention: head groups of {[h for h, _ in groups]} heads; they must "
                             f"be >= 0 and sum to the layer's {self.heads}")
        return [(h, graph) for h, graph in groups if h > 0]
