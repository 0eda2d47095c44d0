"""The Multi-Scale Transformer (Guo et al., AAAI 2020) as models/multiscale_transformer/ computes it
(models.md §2):

    X = [CLS; E] per sentence (E: embedding + learned positions; [CLS] a learned row, an ordinary position in
        the windows; the embedding dropout covers it too)
    layer l:  H^{l+1} = LayerNorm(H^l + ReLU(MSMSA(H^l))),  no feed-forward
    MSMSA:    the heads split into groups by scale (head_distribution, the α rule), each group attending over
              the window of its scale, concatenated, one W_O
    readout:  tokens H^L without [CLS]; sentence feature H^L_[CLS] + max_i H^L_i, or with summary="mean"
              mean_i H^L_i + max_i H^L_i ([CLS] still a position in the windows; the C++ sentence_summary option)

Two paths compute the same layer with the same parameters (``band``):
    band  (default) each head's window as a band of the fused dense kernel (topograph.ops.band_attention, one
          radius per (sentence, head)), no graph built;
    graph GraphMultiHeadAttention head groups over one window graph per scale (topograph.builders.window), the
          per-edge sparse kernels: the reference the band path is tested against.
"""
from __future__ import annotations

import math
from typing import List, Sequence, Tuple, Union

import torch

from .. import builders, ops
from .._construct import graph
from ..nn import GraphMultiHeadAttention
from .sequence import (SequenceEmbedding, check_encoder_shape, lead_layout, lengths_list, on_device,
                       sentence_readout_graph)

Scale = Tuple[int, int]  # (width, divisor): a constant odd width when divisor == 0, else ceil(N / divisor) made odd


def parse_scales(spec: Union[str, Sequence[Union[int, str]]]) -> List[Scale]:
    """"1,3,N/16,N/8,N/4" (or a list of ints and "N/k" strings) -> scales, smallest first as given."""
    items = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else [str(s).strip() for s in spec]
    scales: List[Scale] = []
    for item in items:
        try:
            scale = (1, int(item[2:])) if item.startswith("N/") else (int(item), 0)
        except ValueError:
            raise ValueError(f"scales {spec!r}: {item!r} is neither an odd width nor N/k") from None
        if (scale[1] == 0 and (scale[0] < 1 or scale[0] % 2 == 0)) or (item.startswith("N/") and scale[1] <= 0):
            raise ValueError(f"scales {spec!r}: {item!r} must be an odd width >= 1 or N/k with k > 0")
        if scale in scales:
            raise ValueError(f"scales {spec!r}: scale {item} named twice")
        scales.append(scale)
    if not scales:
        raise ValueError("MultiScaleTransformer: no scales")
    return scales


def scale_width(scale: Scale, n: int) -> int:
    """The window width of `scale` for a sentence of n tokens (models/multiscale_transformer/scales.cpp)."""
    width, divisor = scale
    if divisor == 0:
        return width
    w = max(1, -(-n // divisor))
    return w if w % 2 == 1 else w + 1


def head_distribution(alpha: float, layers: int, num_scales: int, heads: int) -> List[List[int]]:
    """[layers][num_scales] heads per scale: z_k = α (L - l)(K - 1 - k) for layer l = 1..L, n = softmax(z)
    heads, rounded by largest remainder (ties to the smaller scale) so each layer's counts sum to `heads`."""
    if layers < 1 or num_scales < 1 or heads < 1:
        raise ValueError(f"head_distribution: layers ({layers}), scales ({num_scales}) and heads ({heads}) must "
                         f"be >= 1")
    out = []
    for l in range(1, layers + 1):
        z = [alpha * (layers - l) * (num_scales - 1 - k) for k in range(num_scales)]
        e = [math.exp(v - max(z)) for v in z]
        shares = [v / sum(e) * heads for v in e]
        counts = [math.floor(s) for s in shares]
        order = sorted(range(num_scales), key=lambda k: -(shares[k] - counts[k]))  # stable: smaller scale first
        for i in range(heads - sum(counts)):
            counts[order[i % num_scales]] += 1
        out.append(counts)
    return out


class MultiScaleLayer(torch.nn.Module):
    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.attention = GraphMultiHeadAttention(hidden, heads)
        self.norm = torch.nn.LayerNorm(hidden)


class MultiScaleTransformer(torch.nn.Module):
    """forward(tokens, lengths) -> (H^L at the tokens [N, hidden], H^L_[CLS] + max_i H^L_i [B, hidden]);
    summary="mean": mean_i H^L_i + max_i H^L_i in place of the [CLS] state."""

    def __init__(self, hidden: int = 300, heads: int = 10, layers: int = 2, *,
                 scales: Union[str, Sequence] = "1,3,N/16,N/8,N/4", alpha: float = 0.5, vocab_size: int = 0,
                 input_dim: int = 0, max_length: int = 256, dropout: float = 0.0, band: bool = True,
                 summary: str = "cls"):
        super().__init__()
        check_encoder_shape("MultiScaleTransformer", hidden, heads, layers)
        if summary not in ("cls", "mean"):
            raise ValueError(f"MultiScaleTransformer: summary {summary!r} is not 'cls' or 'mean'")
        self.hidden, self.heads, self.band, self.summary = hidden, heads, band, summary
        self.scales = parse_scales(scales)
        self.head_counts = head_distribution(alpha, layers, len(self.scales), heads)
        self.embedding = SequenceEmbedding(hidden, vocab_size, input_dim, max_length, dropout)
        self.cls = torch.nn.Parameter(torch.randn(1, hidden) * 0.02)
        self.layers = torch.nn.ModuleList(MultiScaleLayer(hidden, heads) for _ in range(layers))

    def band_radii(self, layer: int, lengths: List[int]) -> torch.Tensor:
        """Layer `layer`'s radius per (sentence, head) [B, H]: head h of scale k's group sees the positions
        within (width_k(n) - 1) / 2 of it, n the sentence's token count (the window graph's edges)."""
        per_head = [[(scale_width(s, n) - 1) // 2 for s, c in zip(self.scales, self.head_counts[layer])
                     for _ in range(c)] for n in lengths]
        return torch.tensor(per_head, dtype=torch.int64)

    def window_graphs(self, lengths: List[int], device=None):
        """Per scale, the window graph over the [CLS]-extended positions (sentence b has lengths[b] + 1), on
        `device` (None: the CPU)."""
        positions = [n + 1 for n in lengths]
        graphs = [graph(builders.window(positions, [scale_width(s, n) for n in lengths]), num_nodes=sum(positions))
                  for s in self.scales]
        return [on_device(g, device) for g in graphs]

    def forward(self, tokens: torch.Tensor, lengths) -> Tuple[torch.Tensor, torch.Tensor]:
        lens = lengths_list(lengths, "MultiScaleTransformer")
        h = self.embedding(tokens, lens, lead=self.cls)  # [N + B, hidden]: [CLS] then tokens, per sentence
        positions = [n + 1 for n in lens]
        windows = None if self.band else self.window_graphs(lens, h.device)
        for l, layer in enumerate(self.layers):
            if self.band:
                update = layer.attention.forward_band(h, positions, self.band_radii(l, lens))
            else:
                update = layer.attention([(c, w) for c, w in zip(self.head_counts[l], windows)], h)
            h = layer.norm(h + torch.relu(update))
        token_rows, cls_rows = lead_layout(lens, 1, h.device)
        tokens_out = h[token_rows]
        readout = sentence_readout_graph(lens, h.device)
        summary = ops.copy_u_mean(readout, tokens_out) if self.summary == "mean" else h[cls_rows]
        return tokens_out, summary + ops.copy_u_max(readout, tokens_out)
