"""The input stage the sequence models share (models/sequence_embedding.hpp) and per-sentence readouts.

SequenceEmbedding: token ids through an embedding table, or continuous features (masked summation) through a
Linear, plus a learned position embedding, then dropout. Sentences are packed: sentence b owns lengths[b]
consecutive rows.
"""
from __future__ import annotations

from typing import List, Optional

import torch

from .. import builders
from .._construct import heterograph
from ..ops import _int_list


def check_encoder_shape(model: str, hidden: int, heads: int, layers: int) -> None:
    """The checks every encoder's constructor makes: heads split hidden evenly, at least one layer."""
    if heads < 1 or hidden % heads:
        raise ValueError(f"{model}: heads ({heads}) must be >= 1 and divide hidden ({hidden})")
    if layers < 1:
        raise ValueError(f"{model}: layers must be >= 1, got {layers}")


def lengths_list(lengths, what: str) -> List[int]:
    """Sentence lengths (a list, numpy array or 1-D integer tensor) as ints, each >= 1: a TypeError for
    floats or bools (never truncated), a ValueError for another shape or an empty batch."""
    lens = _int_list(lengths, f"{what}: lengths")
    if not lens:
        raise ValueError(f"{what}: empty batch (no lengths)")
    for b, n in enumerate(lens):
        if n < 1:
            raise ValueError(f"{what}: sentence {b} has length {n} (must be >= 1)")
    return lens


def check_token_ids(tokens, count: int, what: str, name: str = "tokens") -> torch.Tensor:
    """The argument `name` as nn.Embedding reads it: packed integer ids [count] (int32 / int64; other integer
    dtypes cast to int64). A TypeError for a non-tensor or non-integer ids, a ValueError for another shape."""
    if not isinstance(tokens, torch.Tensor):
        raise TypeError(f"{what}: {name} must be a tensor of token ids, got {type(tokens).__name__}")
    if tokens.dtype.is_floating_point or tokens.dtype.is_complex or tokens.dtype == torch.bool:
        raise TypeError(f"{what}: {name} must be integer token ids [N], got {tokens.dtype}")
    if tokens.dim() != 1:
        raise ValueError(f"{what}: {name} must be token ids [N] packed sentence after sentence (no padding), got "
                         f"shape {tuple(tokens.shape)}; pack a padded batch [B, L] with {name}[mask] or "
                         f"torch.cat([row[:n] for row, n in zip({name}, lengths)])")
    if tokens.shape[0] != count:
        raise ValueError(f"{what}: {name} has {tokens.shape[0]} ids for sentences of {count} tokens (the sum of "
                         f"lengths)")
    return tokens if tokens.dtype in (torch.int32, torch.int64) else tokens.long()


def positions_in_sentence(lengths: List[int], device=None) -> torch.Tensor:
    """Each row's position within its sentence: int64 [sum(lengths)]."""
    lens = torch.tensor(lengths, dtype=torch.int64, device=device)
    starts = torch.cumsum(lens, 0) - lens
    return torch.arange(int(lens.sum()), device=device) - torch.repeat_interleave(starts, lens)


def on_device(g, device):
    """g moved to `device`; unchanged for None or the CPU, where the builders made it (no copy per batch)."""
    return g if device is None or torch.device(device).type == "cpu" else g.to(device)


def sentence_readout_graph(lengths: List[int], device=None):
    """Every row of sentence b -> node b of type 'sent' (builders.to_one): copy_u_mean / copy_u_max over it
    pool each sentence's rows into [B, ...]. On `device` (None: the CPU)."""
    g = heterograph({("row", "in_sentence", "sent"): builders.to_one(lengths)},
                    num_nodes_dict={"row": sum(lengths), "sent": len(lengths)})
    return on_device(g, device)


class SequenceEmbedding(torch.nn.Module):
    """tokens: ids [N] (vocab_size > 0) or features [N, input_dim] (input_dim > 0) -> [N, hidden]: the token
    embedding (or projection) plus a learned position embedding, then dropout. With ``lead`` [c, hidden]: c
    lead rows before each sentence's tokens ([CLS], Multi-Scale's), [N + c B, hidden], dropout on every row
    (as BERT's embeddings and the C++ model)."""

    def __init__(self, hidden: int, vocab_size: int = 0, input_dim: int = 0, max_length: int = 256,
                 dropout: float = 0.0):
        super().__init__()
        if (vocab_size > 0) == (input_dim > 0):
            raise ValueError(f"SequenceEmbedding: set exactly one of vocab_size ({vocab_size}) and input_dim "
                             f"({input_dim})")
        if hidden <= 0 or max_length < 1:
            raise ValueError(f"SequenceEmbedding: hidden ({hidden}) and max_length ({max_length}) must be >= 1")
        self.hidden, self.max_length = hidden, max_length
        self.token = torch.nn.Embedding(vocab_size, hidden) if vocab_size > 0 else None
        self.features = torch.nn.Linear(input_dim, hidden) if input_dim > 0 else None
        self.position = torch.nn.Embedding(max_length, hidden)
        self.dropout = torch.nn.Dropout(dropout)

    def forward(self, tokens: torch.Tensor, lengths, lead: Optional[torch.Tensor] = None) -> torch.Tensor:
        lens = lengths_list(lengths, "SequenceEmbedding")
        if max(lens) > self.max_length:
            raise ValueError(f"a sentence of length {max(lens)} exceeds the model's max_length {self.max_length}")
        if self.token is not None:
            rows = self.token(check_token_ids(tokens, sum(lens), "SequenceEmbedding"))
        else:
            if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 \
                    or tokens.shape[1] != self.features.in_features:
                raise ValueError(f"SequenceEmbedding: this model reads features [N, {self.features.in_features}], "
                                 f"got {tuple(getattr(tokens, 'shape', ())) or type(tokens).__name__}")
            if tokens.shape[0] != sum(lens):
                raise ValueError(f"SequenceEmbedding: {tokens.shape[0]} tokens for sentences of {sum(lens)} tokens")
            rows = self.features(tokens)
        rows = rows + self.position(positions_in_sentence(lens, rows.device))
        if lead is not None:
            rows = with_lead_rows(rows, lens, lead)
        return self.dropout(rows)


def lead_layout(lengths: List[int], leads: int, device=None):
    """(token rows, lead rows) of the layout with `leads` rows before each sentence's tokens: int64 indices into
    the [sum(lengths) + leads B] rows."""
    lens = torch.tensor(lengths, dtype=torch.int64, device=device)
    starts = torch.cumsum(lens + leads, 0) - (lens + leads)  # each sentence's first (lead) row
    token_rows = torch.repeat_interleave(starts + leads, lens) + positions_in_sentence(lengths, device)
    lead_rows = (starts.view(-1, 1) + torch.arange(leads, device=device)).view(-1)
    return token_rows, lead_rows


def with_lead_rows(rows: torch.Tensor, lengths: List[int], lead: torch.Tensor) -> torch.Tensor:
    """rows [N, d] with lead [c, d] before each sentence's rows -> [N + c B, d]."""
    token_rows, lead_rows = lead_layout(lengths, lead.shape[0], rows.device)
    out = rows.new_zeros(rows.shape[0] + lead_rows.numel(), rows.shape[1])
    out = out.index_copy(0, token_rows, rows)
    return out.index_copy(0, lead_rows, lead.repeat(len(lengths), 1))
