"""Reductions over consecutive segments of rows, as dgl.ops.segment_reduce / segment_softmax: the readouts'
(topograph.readout) per-graph reductions of a batch, where graph b owns batch_num_nodes()[b] consecutive
rows. Plain torch ops (index_add, scatter_reduce, gather), so any dtype and device torch has, and torch's
autograd; Topograph's kernels are float32 and work per edge, which a readout has none of. group_reduce /
group_softmax take each row's group in any order: the graph ops' float64 path (_float64.py) reduces edges by
destination with them."""
from __future__ import annotations

import torch

from ._base import DGLError

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


def pointer_ids(indptr: torch.Tensor, nnz: int, what: str) -> torch.Tensor:
    """[nnz] int64: the line (row of a csr, column of a csc) of each of nnz entries under the index pointer
    indptr [lines + 1] (1-D integers): line r owns entries indptr[r] .. indptr[r + 1] - 1. DGLError unless indptr
    starts at 0, never decreases and ends at nnz (dgl.graph's csr / csc forms, dgl.sparse's from_csr / from_csc)."""
    if indptr.numel() == 0 or int(indptr[0]) != 0 or int(indptr[-1]) != nnz:
        shown = indptr.tolist() if indptr.numel() <= 10 else tuple(indptr.shape)
        raise DGLError(f"{what}: indptr must start at 0, never decrease and end at len(indices) ({nnz}), got {shown}")
    counts = indptr[1:] - indptr[:-1]
    if bool((counts < 0).any()):
        at = int(torch.nonzero(counts < 0)[0])
        raise DGLError(f"{what}: indptr must not decrease (at {at}): it must start at 0, never decrease and end at "
                       f"len(indices) ({nnz})")
    return segment_ids(counts, nnz, indptr.device, what)


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
    return group_reduce(value, seg, torch.as_tensor(seglen).numel(), reducer)


def group_reduce(value: torch.Tensor, group: torch.Tensor, num_groups: int, reducer: str) -> torch.Tensor:
    """value [N, *] reduced over the rows of each group -> [num_groups, *]; group [N] int64 in [0, num_groups), the
    rows of a group in any order (an edge's destination: gspmm's float64 path, _float64.py). An empty group gives 0;
    max / min pass the gradient to the first row (lowest index) holding the extreme."""
    if reducer in ("max", "min"):
        return _pick_extreme(value, group, num_groups, reducer)
    out = value.new_zeros((num_groups,) + tuple(value.shape[1:])).index_add(0, group, value)
    if reducer == "mean":
        counts = torch.bincount(group, minlength=num_groups).clamp(min=1)
        out = out / counts.to(out.device).view(-1, *[1] * (out.dim() - 1))
    return out


def segment_softmax(seglen, value: torch.Tensor) -> torch.Tensor:
    """dgl.ops.segment_softmax: softmax over each segment's rows, every element of the row shape apart:
    value [N, *] -> [N, *], exp(x - max) / sum exp(x - max) per segment."""
    if not isinstance(value, torch.Tensor) or value.dim() == 0:
        raise ValueError("segment_softmax: value must be a tensor [N, *]")
    seg = segment_ids(seglen, value.shape[0], value.device, "segment_softmax")
    return group_softmax(value, seg, torch.as_tensor(seglen).numel())


def group_softmax(value: torch.Tensor, group: torch.Tensor, num_groups: int) -> torch.Tensor:
    """Softmax over the rows of each group, every element of the row shape apart: value [N, *] -> [N, *]; group
    [N] int64 in [0, num_groups), a group's rows in any order (edge_softmax's float64 path, _float64.py)."""
    with torch.no_grad():  # the shift cancels in the softmax, so it needs no gradient
        shift = _pick_extreme(value, group, num_groups, "max").index_select(0, group)
    exp = (value - shift).exp()
    total = exp.new_zeros((num_groups,) + tuple(value.shape[1:])).index_add(0, group, exp)
    return exp / total.index_select(0, group)


def repeat_rows(graph_feat: torch.Tensor, seglen, what: str) -> torch.Tensor:
    """[B, *] -> [sum(seglen), *]: row b repeated seglen[b] times (dgl.broadcast_nodes / _edges)."""
    lengths = torch.as_tensor(seglen).to(device=graph_feat.device, dtype=torch.int64)
    if graph_feat.dim() == 0 or graph_feat.shape[0] != lengths.numel():
        shape = tuple(graph_feat.shape)
        raise DGLError(f"{what}: graph_feat must have one row per graph ({lengths.numel()}), got shape {shape}")
    return torch.repeat_interleave(graph_feat, lengths, dim=0)


def rows_by_group(x: torch.Tensor, group: torch.Tensor, num_groups: int, out_size: int, apply) -> torch.Tensor:
    """apply(g, rows of x in group g, in their order) -> [n_g, out_size] for each non-empty group, put back in x's
    row order: [N, out_size]. One call per group (a product per relation or type) instead of a gather of per-row
    weights; group [N] int64 in [0, num_groups)."""
    order = torch.argsort(group, stable=True)
    counts = torch.bincount(group, minlength=num_groups).tolist()
    parts = [apply(g, rows) for g, rows in enumerate(torch.split(x.index_select(0, order), counts)) if rows.shape[0]]
    if not parts:
        return x.new_zeros(0, out_size)
    grouped = torch.cat(parts)
    return torch.zeros_like(grouped).index_copy(0, order, grouped)


def _check_mm(a: torch.Tensor, b: torch.Tensor, what: str) -> None:
    if a.dim() != 2 or b.dim() != 3 or a.shape[1] != b.shape[1]:
        raise ValueError(f"{what}: a must be [N, D1] and b [R, D1, D2], got {tuple(a.shape)} and {tuple(b.shape)}")


def gather_mm(a: torch.Tensor, b: torch.Tensor, *, idx_b) -> torch.Tensor:
    """dgl.ops.gather_mm: out[i] = a[i] @ b[idx_b[i]]; a [N, D1], b [R, D1, D2], idx_b [N] -> [N, D2] (an
    R-GCN's per-relation product), one matmul per index used."""
    _check_mm(a, b, "gather_mm")
    idx = torch.as_tensor(idx_b).to(device=a.device)
    if idx.dim() != 1 or idx.numel() != a.shape[0] or idx.dtype.is_floating_point or idx.dtype == torch.bool:
        raise ValueError(f"gather_mm: idx_b must hold one integer per row of a ({a.shape[0]}), got "
                         f"{idx.dtype} {tuple(idx.shape)}")
    idx = idx.to(torch.int64)
    bad = ((idx < 0) | (idx >= b.shape[0])).nonzero().flatten()
    if bad.numel():
        raise IndexError(f"gather_mm: idx_b[{int(bad[0])}] = {int(idx[bad[0]])} is not in [0, {b.shape[0]})")
    return rows_by_group(a, idx, b.shape[0], b.shape[2], lambda r, rows: rows @ b[r])


def segment_mm(a: torch.Tensor, b: torch.Tensor, seglen_a) -> torch.Tensor:
    """dgl.ops.segment_mm: a's rows cut into R consecutive segments of seglen_a rows, segment r times b[r]; a [N,
    D1], b [R, D1, D2] -> [N, D2]. The lengths must add up to N (DGL 2.1 silently drops the rows past them)."""
    _check_mm(a, b, "segment_mm")
    lengths = torch.as_tensor(seglen_a)
    segment_ids(lengths, a.shape[0], a.device, "segment_mm")  # the lengths checked: 1-D, >= 0, adding up to N
    if lengths.numel() != b.shape[0]:
        raise ValueError(f"segment_mm: {lengths.numel()} segment lengths for {b.shape[0]} matrices in b")
    parts = [rows @ b[r] for r, rows in enumerate(torch.split(a, lengths.tolist()))]
    return torch.cat(parts) if parts else a.new_zeros(0, b.shape[2])
