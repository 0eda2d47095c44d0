"""topograph.nn.GraphMultiHeadAttention: nn/attention.hpp's layer as a torch.nn.Module.

out_d = W_O [head_1; ...; head_H],  head = sum_{s -> d} softmax_s(q_d . k_s / sqrt(d_h)) v_s,
q = W_Q x_dst, k = W_K x_src, v = W_V x_src (d_h = dim / heads). The projections are torch.nn.Linear
(torch's initialisation); the attention is Topograph's fused kernel (topograph.ops.sparse_attention), over
a graph with one relation or over several relations into one node type with one softmax across them.
"""
from __future__ import annotations

from typing import Dict, Optional, Union

import torch

from .. import ops


class GraphMultiHeadAttention(torch.nn.Module):
    def __init__(self, dim: int, heads: int, bias: bool = True):
        super().__init__()
        if heads <= 0 or dim % heads:
            raise ValueError(f"GraphMultiHeadAttention: dim {dim} must split into {heads} equal heads")
        self.dim, self.heads = dim, heads
        self.q, self.k, self.v, self.o = (torch.nn.Linear(dim, dim, bias=bias) for _ in range(4))

    def forward(self, g, dst_states: torch.Tensor,
                src_states: Optional[Union[torch.Tensor, Dict[str, torch.Tensor]]] = None) -> torch.Tensor:
        """dst_states [num_dst, dim]; src_states [num_src, dim], or {source type: [n, dim]} when g has several
        relations, or None for self-attention (sources are the destinations) -> [num_dst, dim]."""
        src = dst_states if src_states is None else src_states
        split = (-1, self.heads, self.dim // self.heads)  # [rows, dim] -> [rows, H, d_h]
        q = self.q(dst_states).view(split)
        if isinstance(src, dict):
            k = {t: self.k(x).view(split) for t, x in src.items()}
            v = {t: self.v(x).view(split) for t, x in src.items()}
        else:
            k, v = self.k(src).view(split), self.v(src).view(split)
        return self.o(ops.sparse_attention(g, q, k, v).reshape(-1, self.dim))
