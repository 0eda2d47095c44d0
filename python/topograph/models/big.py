"""The BiG-Transformer (Shu et al.) as models/big_transformer/ computes it (models.md §3), over a bipartite
heterograph per batch with node types char (n per sentence), word (lexicon matches, spans of characters) and
sent (one per sentence):

    H^0 = char embedding + sinusoidal position, dropout
    layer:  o_j = sum_{c in span j} h_c                        (copy_u_sum over char -> word, relation 'in')
            s   = mean_i(H) W_s                                 (per sentence)
            A   = MultiAtt(H, U_i = [words containing i; s])    (one softmax over 'contains' and 'from_sent')
            H   = LN(H + drop(A));  H = LN(H + drop(FFN(H)))    (post-LN block)
    readout: per-char states H, and their mean per sentence

Words are given per sentence as inclusive character spans (a segmentation of the caller's, or lexicon_spans
of a word list). Ablations (paper Table VI): no-global drops the sentence node, no-local the words, radical
replaces the words by every adjacent character pair.
"""
from __future__ import annotations

import math
from typing import Iterable, List, NamedTuple, Optional, Sequence, Tuple

import torch

from .. import builders, ops
from .._construct import edge_type_subgraph, heterograph
from .._graph import DGLGraph
from ..nn import GraphMultiHeadAttention
from .sequence import (check_encoder_shape, check_token_ids, lengths_list, on_device, positions_in_sentence,
                       sentence_readout_graph)

VARIANTS = ("full", "no-global", "no-local", "radical")
Spans = Sequence[Sequence[Tuple[int, int]]]


def lexicon_spans(text: str, lexicon: Iterable[str], single_chars: bool = False,
                  max_words: Optional[int] = None) -> List[Tuple[int, int]]:
    """Every substring of `text` that is a word of `lexicon`, as inclusive (start, end) character spans by
    start then end (models/big_transformer/lexicon.hpp's matching): single characters only with single_chars,
    at most max_words spans (the first ones)."""
    words = lexicon if isinstance(lexicon, (set, frozenset)) else set(lexicon)
    longest = max((len(w) for w in words), default=0)
    spans = []
    for a in range(len(text)):
        for b in range(a + (0 if single_chars else 1), min(len(text), a + longest)):
            if text[a:b + 1] in words:
                if max_words is not None and len(spans) >= max_words:
                    return spans
                spans.append((a, b))
    return spans


class BigTopology(NamedTuple):
    graph: DGLGraph
    word_sum: Optional[DGLGraph]  # char -> word ('in'): o_j = sum of its characters (None under no-local)
    chars: DGLGraph               # the relations into char: contains (word -> char), from_sent (sent -> char)
    has_sentence: bool


def big_topology(lengths, words: Optional[Spans] = None, variant: str = "full", device=None) -> BigTopology:
    """One batched topology for sentences of `lengths` characters with `words[b]` = [(start, end), ...]
    (0 <= start <= end < lengths[b]; required by full and no-global, ignored otherwise), on `device` (None:
    the CPU)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown BiG-Transformer variant {variant!r}: expected one of {list(VARIANTS)}")
    lens = lengths_list(lengths, "big_topology")
    has_words, has_sentence = variant != "no-local", variant != "no-global"
    if variant == "radical":
        words = [[(i, i + 1) for i in range(n - 1)] for n in lens]
    elif has_words:
        if words is None or len(words) != len(lens):
            raise ValueError(f"big_topology: variant {variant!r} needs one word span list per sentence "
                             f"({len(lens)}), got {None if words is None else len(words)}")
    relations, counts, attended = {}, {"char": sum(lens)}, []
    if has_words:
        (in_src, in_dst), contains = builders.spans(lens, words)  # checks every span
        relations[("char", "in", "word")] = (in_src, in_dst)
        relations[("word", "contains", "char")] = contains
        counts["word"] = sum(len(w) for w in words)
        attended.append("contains")
    if has_sentence:
        relations[("sent", "from_sent", "char")] = builders.from_one(lens)
        counts["sent"] = len(lens)
        attended.append("from_sent")
    g = heterograph(relations, num_nodes_dict=counts)
    g = on_device(g, device)
    return BigTopology(g, g["in"] if has_words else None, edge_type_subgraph(g, attended), has_sentence)


def sinusoidal_positions(max_length: int, dim: int) -> torch.Tensor:
    """PE[p, 2i] = sin(p / 10000^(2i / dim)), PE[p, 2i + 1] = cos(...): [max_length, dim]."""
    p = torch.arange(max_length, dtype=torch.float64).view(-1, 1)
    i = torch.arange(0, dim, 2, dtype=torch.float64)
    angle = p / torch.pow(10000.0, i / dim)  # [max_length, ceil(dim / 2)]
    table = torch.zeros(max_length, dim, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, :dim // 2])
    return table.float()


class PostLnBlock(torch.nn.Module):
    """h = LN(h + drop(attended)), h = LN(h + drop(W2 ReLU(W1 h))) (models/blocks/post_ln_block.hpp)."""

    def __init__(self, hidden: int, heads: int, ffn: int, dropout: float):
        super().__init__()
        self.attention = GraphMultiHeadAttention(hidden, heads)
        self.attention_norm, self.ffn_norm = torch.nn.LayerNorm(hidden), torch.nn.LayerNorm(hidden)
        self.ffn_in, self.ffn_out = torch.nn.Linear(hidden, ffn), torch.nn.Linear(ffn, hidden)
        self.dropout = torch.nn.Dropout(dropout)

    def finish(self, h: torch.Tensor, attended: torch.Tensor) -> torch.Tensor:
        h = self.attention_norm(h + self.dropout(attended))
        return self.ffn_norm(h + self.dropout(self.ffn_out(torch.relu(self.ffn_in(h)))))


class BigLayer(torch.nn.Module):
    def __init__(self, hidden: int, heads: int, ffn: int, dropout: float):
        super().__init__()
        self.block = PostLnBlock(hidden, heads, ffn, dropout)
        self.sentence = torch.nn.Linear(hidden, hidden)  # W_s


class BigTransformer(torch.nn.Module):
    """forward(char_ids [N], lengths, words) -> (H [N, hidden], mean_i H_i [B, hidden]); words[b] are sentence
    b's word spans [(start, end), ...] (lexicon_spans), unused by no-local and radical."""

    def __init__(self, vocab_size: int, hidden: int = 100, heads: int = 4, layers: int = 2, *, ffn: int = 0,
                 max_length: int = 256, dropout: float = 0.0, variant: str = "full"):
        super().__init__()
        if vocab_size < 1:
            raise ValueError(f"BigTransformer reads characters as token ids: vocab_size must be >= 1, got {vocab_size}")
        check_encoder_shape("BigTransformer", hidden, heads, layers)
        if variant not in VARIANTS:
            raise ValueError(f"unknown BiG-Transformer variant {variant!r}: expected one of {list(VARIANTS)}")
        self.hidden, self.max_length, self.variant = hidden, max_length, variant
        self.char = torch.nn.Embedding(vocab_size, hidden)
        self.register_buffer("positions", sinusoidal_positions(max_length, hidden), persistent=False)
        self.dropout = torch.nn.Dropout(dropout)
        self.layers = torch.nn.ModuleList(BigLayer(hidden, heads, ffn or 4 * hidden, dropout) for _ in range(layers))

    def forward(self, char_ids: torch.Tensor, lengths, words: Optional[Spans] = None):
        lens = lengths_list(lengths, "BigTransformer")
        char_ids = check_token_ids(char_ids, sum(lens), "BigTransformer", "char_ids")
        if max(lens) > self.max_length:
            raise ValueError(f"a sentence of length {max(lens)} exceeds the model's max_length {self.max_length}")
        topology = big_topology(lens, words, self.variant, char_ids.device)
        readout = sentence_readout_graph(lens, char_ids.device)
        h = self.dropout(self.char(char_ids) + self.positions[positions_in_sentence(lens, char_ids.device)])
        for layer in self.layers:
            sources = {}
            if topology.word_sum is not None:  # o_j = sum of its characters' current states: [words, hidden]
                sources["word"] = ops.copy_u_sum(topology.word_sum, h)
            if topology.has_sentence:  # s = mean(H) W_s: [sentences, hidden]
                sources["sent"] = layer.sentence(ops.copy_u_mean(readout, h))
            h = layer.block.finish(h, layer.block.attention(topology.chars, h, sources))
        return h, ops.copy_u_mean(readout, h)
