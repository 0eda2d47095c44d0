"""The Star-Transformer (Guo et al., NAACL 2019) as models/star_transformer/ computes it (models.md §1):

    E = token embedding (or feature projection) + learned position embedding, dropout
    H^0 = E,  s^0 = mean_i E_i (per sentence)
    layer t: H^t = LayerNorm(ReLU(MultiAtt(h_i, [h_{i-1}, h_i, h_{i+1}, e_i, s^{t-1}])))   satellites
             s^t = LayerNorm(ReLU(MultiAtt(s^{t-1}, [s^{t-1}; H^t])))                       relay
    readout: tokens H^T, sentence feature s^T + max_i H^T_i

The topology (star_topology) is one heterograph per batch from topograph.builders; each phase is one
GraphMultiHeadAttention over several relations with one softmax across them; weights per layer and phase.
``residual=True`` puts x + ReLU(MultiAtt(...)) inside the LayerNorm (the authors' advice for deep stacks,
topo-train's masked-sum recipe).
"""
from __future__ import annotations

from typing import List, NamedTuple, Tuple

import torch

from .. import builders, ops
from .._construct import edge_type_subgraph, heterograph
from .._graph import DGLGraph
from ..nn import GraphMultiHeadAttention
from .sequence import SequenceEmbedding, check_encoder_shape, lengths_list, on_device

VARIANTS = ("full", "no-radical", "no-ring")  # paper Table 6: -radical drops relay -> satellite, -ring the ring


class StarTopology(NamedTuple):
    graph: DGLGraph      # node types sat, emb (token embeddings, keys / values only), relay (one per sentence)
    satellite: DGLGraph  # the relations into sat: self, token, ring, from_relay (as the variant keeps them)
    relay: DGLGraph      # the relations into relay: to_relay, relay_self
    to_relay: DGLGraph   # sat -> relay alone: the mean / max readouts over each sentence


def star_topology(lengths, variant: str = "full", device=None) -> StarTopology:
    """One batched topology for sentences of `lengths` tokens (each >= 1), as models/star_transformer/
    topology.cpp builds it: the closed ring keeps each distinct neighbour once for n = 1, 2. Built on the CPU,
    then moved to `device` (the features' device; None: stays on the CPU)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown Star-Transformer variant {variant!r}: expected one of {list(VARIANTS)}")
    lens = lengths_list(lengths, "star_topology")
    relations = {("sat", "self", "sat"): builders.self_loops(lens),
                 ("emb", "token", "sat"): builders.self_loops(lens),
                 ("sat", "to_relay", "relay"): builders.to_one(lens),
                 ("relay", "relay_self", "relay"): builders.self_loops([1] * len(lens))}
    context = ["self", "token"]
    if variant != "no-ring":
        relations[("sat", "ring", "sat")] = builders.ring(lens, closed=True)
        context.append("ring")
    if variant != "no-radical":
        relations[("relay", "from_relay", "sat")] = builders.from_one(lens)
        context.append("from_relay")
    n = sum(lens)
    g = heterograph(relations, num_nodes_dict={"sat": n, "emb": n, "relay": len(lens)})
    g = on_device(g, device)
    return StarTopology(g, edge_type_subgraph(g, context), edge_type_subgraph(g, ["to_relay", "relay_self"]),
                        g["to_relay"])


class StarLayer(torch.nn.Module):
    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.satellite_attention = GraphMultiHeadAttention(hidden, heads)
        self.satellite_norm = torch.nn.LayerNorm(hidden)
        self.relay_attention = GraphMultiHeadAttention(hidden, heads)
        self.relay_norm = torch.nn.LayerNorm(hidden)


class StarTransformer(torch.nn.Module):
    """forward(tokens, lengths) -> (H^T [N, hidden], s^T + max_i H^T_i [B, hidden]); tokens are ids [N]
    (vocab_size) or features [N, input_dim] (input_dim), packed sentence by sentence."""

    def __init__(self, hidden: int = 100, heads: int = 10, layers: int = 2, *, vocab_size: int = 0,
                 input_dim: int = 0, max_length: int = 256, dropout: float = 0.0, variant: str = "full",
                 residual: bool = False):
        super().__init__()
        check_encoder_shape("StarTransformer", hidden, heads, layers)
        if variant not in VARIANTS:
            raise ValueError(f"unknown Star-Transformer variant {variant!r}: expected one of {list(VARIANTS)}")
        self.hidden, self.variant, self.residual = hidden, variant, residual
        self.embedding = SequenceEmbedding(hidden, vocab_size, input_dim, max_length, dropout)
        self.layers = torch.nn.ModuleList(StarLayer(hidden, heads) for _ in range(layers))

    def forward(self, tokens: torch.Tensor, lengths) -> Tuple[torch.Tensor, torch.Tensor]:
        lens = lengths_list(lengths, "StarTransformer")
        e = self.embedding(tokens, lens)
        return self.encode(e, star_topology(lens, self.variant, e.device))

    def encode(self, e: torch.Tensor, topology: StarTopology) -> Tuple[torch.Tensor, torch.Tensor]:
        """The layers on embedded tokens e [N, hidden] over a topology the caller built (star_topology)."""
        h, s = e, ops.copy_u_mean(topology.to_relay, e)  # s^0 = mean(E): [B, hidden]
        for layer in self.layers:
            h = self._epilogue(layer.satellite_norm, h,
                               layer.satellite_attention(topology.satellite, h, {"sat": h, "emb": e, "relay": s}))
            s = self._epilogue(layer.relay_norm, s, layer.relay_attention(topology.relay, s, {"sat": h, "relay": s}))
        return h, s + ops.copy_u_max(topology.to_relay, h)

    def _epilogue(self, norm: torch.nn.LayerNorm, x: torch.Tensor, update: torch.Tensor) -> torch.Tensor:
        return norm(x + torch.relu(update)) if self.residual else norm(torch.relu(update))
