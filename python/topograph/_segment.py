"""Reductions over consecutive segments of rows, as dgl.ops.segment_reduce / segment_softmax: the readouts'
(topograph.readout) per-graph reductions of a batch, where graph b owns batch_num_nodes()[b] consecutive
rows. Plain torch ops (index_add, scatter_reduce, gather), so any dtype and device torch has, and torch's
autograd; Topograph's kernels are float32 and work per edge, which a readout has none of."""
from __future__ import annotations

import torch

REDUCERS = ("sum", "mean", "max", "min")


def segment_ids(seglen, rows: int, device, what: str) -> torch.Tensor:
    """[rows] int64: the segment of each row (segment b owns seglen[b] consecutive rows)."""
    lengths = torch.as_tensor(seglen).to(device=device, dtype=torch.int64)
    if lengths.dim() != 1:
        raise ValueError(f"{what}: segment lengths must be 1-D, got shape {tuple(lengths.shape)}")
    if bool((lengths < 0).any()):
        raise ValueError(f"{what}: segment lengths must be >= 0, got {lengths.tolist()}")
    total = int(lengths.sum())
    if total != rows:  # DGL 2.1 returns garbage here without a word
        raise ValueError(f"{what}: the segment lengths add up to {total}, but the value has {rows} rows")
    return torch.repeat_interleave(torch.arange(lengths.numel(), device=device), lengths)


def _rows_like(index: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """index [N] expanded to value's shape [N, *], as scatter / gather take it."""
    return index.view(-1, *[1] * (value.dim() - 1)).expand_as(value)


def _pick_extreme(value: torch.Tensor, seg: torch.Tensor, num_segments: int, reducer: str) -> torch.Tensor:
    """Per segment and element, the max (min) of value, taken as the value of the first row that attains it
    (DGL's kernel keeps the first of equal values), so the gradient goes to that one row, as in DGL; torch's
    scatter_reduce would share it among ties (after ReLU, every zero of a graph). 0 for an empty segment,
    with no gradient. [N, *] -> [B, *]."""
    shape = (num_segments,) + tuple(value.shape[1:])
    rows = value.shape[0]
    if rows == 0:
        return value.new_zeros(shape) + value.sum()  # stays in the graph of value, 0 everywhere
    with torch.no_grad():
        index = _rows_like(seg, value)
        best = value.new_zeros(shape).scatter_reduce(0, index, value, "amax" if reducer == "max" else "amin",
                                                     include_self=False)  # empty segments keep the 0
        best_of_row = best.gather(0, index)
        hit = (value == best_of_row) | (value.isnan() & best_of_row.isnan())  # a NaN is its segment's extreme
        row_ids = _rows_like(torch.arange(rows, device=value.device), value)
        first = torch.full(shape, rows, dtype=torch.int64, device=value.device).scatter_reduce(
            0, index, torch.where(hit, row_ids, rows), "amin")  # rows: no row, an empty segment
        empty = first == rows
    picked = value.gather(0, first.clamp(max=rows - 1))
    return picked.masked_fill(empty, 0) if bool(empty.any()) else picked


def segment_reduce(seglen, value: torch.Tensor, reducer: str = "sum") -> torch.Tensor:
    """dgl.ops.segment_reduce: value [N, *] reduced over each segment of consecutive rows (segment b has
    seglen[b] rows, sum(seglen) == N) -> [len(seglen), *]. reducer 'sum', 'mean', 'max' or 'min'; an empty
    segment gives 0 under every reducer (DGL 2.1's). max / min pass the gradient to the first row holding
    the extreme, as DGL's. Unlike DGL 2.1, a real +-inf in a non-empty segment is kept (DGL turns every
    infinity of a max / min into 0), and seglen not adding up to N is a ValueError."""
    if reducer not in REDUCERS:
        raise ValueError(f"segment_reduce: reducer must be one of {list(REDUCERS)}, got {reducer!r}")
    if not isinstance(value, torch.Tensor) or value.dim() == 0:
        raise ValueError("segment_reduce: value must be a tensor [N, *]")
    seg = segment_ids(seglen, value.shape[0], value.device, "segment_reduce")
    num_segments = torch.as_tensor(seglen).numel()
    if reducer in ("max", "min"):
        return _pick_extreme(value, seg, num_segments, reducer)
    out = value.new_zeros((num_segments,) + tuple(value.shape[1:])).index_add(0, seg, value)
    if reducer == "mean":
        counts = torch.bincount(seg, minlength=num_segments).clamp(min=1)
        out = out / counts.to(out.device).view(-1, *[1] * (out.dim() - 1))
    return out


def segment_softmax(seglen, value: torch.Tensor) -> torch.Tensor:
    """dgl.ops.segment_softmax: softmax over each segment's rows, every element of the row shape apart:
    value [N, *] -> [N, *], exp(x - max) / sum exp(x - max) per segment."""
    if not isinstance(value, torch.Tensor) or value.dim() == 0:
        raise ValueError("segment_softmax: value must be a tensor [N, *]")
    seg = segment_ids(seglen, value.shape[0], value.device, "segment_softmax")
    num_segments = torch.as_tensor(seglen).numel()
    with torch.no_grad():  # the shift cancels in the softmax, so it needs no gradient
        shift = _pick_extreme(value, seg, num_segments, "max").index_select(0, seg)
    exp = (value - shift).exp()
    total = exp.new_zeros((num_segments,) + tuple(value.shape[1:])).index_add(0, seg, exp)
    return exp / total.index_select(0, seg)


def repeat_rows(graph_feat: torch.Tensor, seglen, what: str) -> torch.Tensor:
    """[B, *] -> [sum(seglen), *]: row b repeated seglen[b] times (dgl.broadcast_nodes / _edges)."""
    lengths = torch.as_tensor(seglen).to(device=graph_feat.device, dtype=torch.int64)
    if graph_feat.dim() == 0 or graph_feat.shape[0] != lengths.numel():
        shape = tuple(graph_feat.shape)
        raise ValueError(f"{what}: graph_feat must have one row per graph ({lengths.numel()}), got shape {shape}")
    return torch.repeat_interleave(graph_feat, lengths, dim=0)
