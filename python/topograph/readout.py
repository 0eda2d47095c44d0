"""dgl.readout: graph-level readouts of a batch (topograph.batch), one row per graph, from the node or edge
features named `feat`; an unbatched graph is a batch of one. As DGL 2.1's, with its names and signatures
(weight positional, the rest keyword-only):

    readout_nodes(graph, feat, weight=None, *, op='sum', ntype=None)    -> [B, *feat row shape]
    sum_nodes / mean_nodes / max_nodes(graph, feat, weight=None, *, ntype=None)
    softmax_nodes(graph, feat, *, ntype=None)                          -> [N, *] (softmax within each graph)
    broadcast_nodes(graph, graph_feat, *, ntype=None)                  -> [N, *] (row b to graph b's nodes)
    topk_nodes(graph, feat, k, *, descending=True, sortby=None, ntype=None) -> ([B, k, D], indices)
    and the same over edges (*_edges, etype=).

op is 'sum', 'mean', 'max' or 'min' (DGL has no min_nodes, only op='min'). With a weight, the feature is
multiplied by it first (`feat * weight`, so a mean is of the products, as DGL's). A graph without nodes
(edges) reads out 0 under every op. The reductions are plain torch ops (topograph/_segment.py): any dtype,
differentiable by torch's autograd, max / min passing the gradient to the first node holding the extreme,
as DGL's. Bad input raises: an unknown feature name KeyError, a weight whose shape would not align row by
row with the feature (DGL would broadcast a [N] weight against the feature's last dim) or an unknown op
ValueError, naming what is wrong.

Unlike DGL 2.1: a real +-inf in a graph's max / min or top-k is kept (DGL turns every infinity there into 0,
which is how it gives 0 for an empty graph; here only the empty graph, or top-k's padding, gives 0).
"""
from __future__ import annotations

import numbers
import warnings
from typing import Optional, Tuple

import torch

from ._base import DGLError
from ._graph import DGLGraph, EType
from ._segment import REDUCERS, repeat_rows, segment_reduce, segment_softmax

__all__ = ["readout_nodes", "readout_edges", "sum_nodes", "sum_edges", "mean_nodes", "mean_edges", "max_nodes",
           "max_edges", "softmax_nodes", "softmax_edges", "broadcast_nodes", "broadcast_edges", "topk_nodes",
           "topk_edges"]


def _check_graph(graph, what: str) -> None:
    if not isinstance(graph, DGLGraph):
        raise TypeError(f"{what}: expected a topograph graph, got {type(graph).__name__}")


def _node_frame(graph, ntype: Optional[str], what: str):
    """(the features of ntype's nodes, their count per graph of the batch [B])."""
    _check_graph(graph, what)
    if ntype is None and len(graph.ntypes) != 1:
        raise DGLError(f"{what}: the graph has node types {graph.ntypes}: name one (ntype=...)")
    return graph.nodes[ntype].data, graph.batch_num_nodes(ntype)


def _edge_frame(graph, etype: EType, what: str):
    """(the features of etype's edges, their count per graph of the batch [B])."""
    _check_graph(graph, what)
    if etype is None and len(graph.canonical_etypes) != 1:
        raise DGLError(f"{what}: the graph has relations {graph.canonical_etypes}: name one (etype=...)")
    return graph.edges[etype].data, graph.batch_num_edges(etype)


def _lookup(frame, name: str, what: str) -> torch.Tensor:
    try:
        return frame[name]
    except KeyError as error:
        raise KeyError(f"{what}: {error.args[0]}") from None


def _weighted(frame, feat: str, weight: Optional[str], what: str) -> torch.Tensor:
    """frame[feat] [N, *], times frame[weight] when given: the weight must have as many dims as the feature
    ([N, 1] for a scalar per node against [N, D]) so that torch's broadcasting keeps rows against rows."""
    x = _lookup(frame, feat, what)
    if weight is None:
        return x
    w = _lookup(frame, weight, what)
    if w.dim() != x.dim():
        raise ValueError(f"{what}: weight {weight!r} {tuple(w.shape)} must have as many dims as feature {feat!r} "
                         f"{tuple(x.shape)} (e.g. [N, 1] for one weight per row): broadcasting would align its "
                         f"rows with the feature's last dim")
    try:
        return x * w
    except RuntimeError as error:
        raise ValueError(f"{what}: weight {weight!r} {tuple(w.shape)} does not broadcast with feature {feat!r} "
                         f"{tuple(x.shape)}: {error}") from None


def _check_op(op: str, what: str) -> None:
    if op not in REDUCERS:
        raise DGLError(f"{what}: op must be one of {list(REDUCERS)}, got {op!r}")


def readout_nodes(graph, feat: str, weight: Optional[str] = None, *, op: str = "sum",
                  ntype: Optional[str] = None) -> torch.Tensor:
    """r_b = op over the nodes v of graph b of (feat[v] * weight[v]) -> [B, *feat row shape] (dgl.readout_nodes).
    op: 'sum', 'mean', 'max', 'min'; 0 for a graph without nodes."""
    _check_op(op, "readout_nodes")
    frame, seglen = _node_frame(graph, ntype, "readout_nodes")
    return segment_reduce(seglen, _weighted(frame, feat, weight, "readout_nodes"), op)


def readout_edges(graph, feat: str, weight: Optional[str] = None, *, op: str = "sum",
                  etype: EType = None) -> torch.Tensor:
    """r_b = op over the edges e of graph b of (feat[e] * weight[e]) -> [B, *feat row shape] (dgl.readout_edges).
    op: 'sum', 'mean', 'max', 'min'; 0 for a graph without edges."""
    _check_op(op, "readout_edges")
    frame, seglen = _edge_frame(graph, etype, "readout_edges")
    return segment_reduce(seglen, _weighted(frame, feat, weight, "readout_edges"), op)


def sum_nodes(graph, feat: str, weight: Optional[str] = None, *, ntype: Optional[str] = None) -> torch.Tensor:
    """readout_nodes(graph, feat, weight, op='sum', ntype=ntype)."""
    return readout_nodes(graph, feat, weight, op="sum", ntype=ntype)


def sum_edges(graph, feat: str, weight: Optional[str] = None, *, etype: EType = None) -> torch.Tensor:
    """readout_edges(graph, feat, weight, op='sum', etype=etype)."""
    return readout_edges(graph, feat, weight, op="sum", etype=etype)


def mean_nodes(graph, feat: str, weight: Optional[str] = None, *, ntype: Optional[str] = None) -> torch.Tensor:
    """readout_nodes(graph, feat, weight, op='mean', ntype=ntype): the mean of feat * weight (not a weighted
    mean: DGL divides by the node count)."""
    return readout_nodes(graph, feat, weight, op="mean", ntype=ntype)


def mean_edges(graph, feat: str, weight: Optional[str] = None, *, etype: EType = None) -> torch.Tensor:
    """readout_edges(graph, feat, weight, op='mean', etype=etype)."""
    return readout_edges(graph, feat, weight, op="mean", etype=etype)


def max_nodes(graph, feat: str, weight: Optional[str] = None, *, ntype: Optional[str] = None) -> torch.Tensor:
    """readout_nodes(graph, feat, weight, op='max', ntype=ntype)."""
    return readout_nodes(graph, feat, weight, op="max", ntype=ntype)


def max_edges(graph, feat: str, weight: Optional[str] = None, *, etype: EType = None) -> torch.Tensor:
    """readout_edges(graph, feat, weight, op='max', etype=etype)."""
    return readout_edges(graph, feat, weight, op="max", etype=etype)


def softmax_nodes(graph, feat: str, *, ntype: Optional[str] = None) -> torch.Tensor:
    """z_v = exp(x_v) / sum_{u in v's graph} exp(x_u), every element of the row shape apart -> [N, *]."""
    frame, seglen = _node_frame(graph, ntype, "softmax_nodes")
    return segment_softmax(seglen, _lookup(frame, feat, "softmax_nodes"))


def softmax_edges(graph, feat: str, *, etype: EType = None) -> torch.Tensor:
    """z_e = exp(x_e) / sum_{f in e's graph} exp(x_f), every element of the row shape apart -> [E, *]."""
    frame, seglen = _edge_frame(graph, etype, "softmax_edges")
    return segment_softmax(seglen, _lookup(frame, feat, "softmax_edges"))


def _broadcast(graph_feat, seglen, what: str) -> torch.Tensor:
    if not isinstance(graph_feat, torch.Tensor):
        raise TypeError(f"{what}: graph_feat must be a tensor [B, *], got {type(graph_feat).__name__}")
    if seglen.numel() == 1 and (graph_feat.dim() == 0 or graph_feat.shape[0] != 1):
        # DGL 2.1 takes [*] for a single graph, with this deprecation warning
        warnings.warn(f"{what}: for a single graph, give graph_feat as [1, *]; [*] is deprecated (as in DGL)",
                      UserWarning, stacklevel=3)
        graph_feat = graph_feat.unsqueeze(0)
    return repeat_rows(graph_feat, seglen, what)


def broadcast_nodes(graph, graph_feat: torch.Tensor, *, ntype: Optional[str] = None) -> torch.Tensor:
    """graph_feat [B, *] -> [N, *]: row b copied to each node of graph b (dgl.broadcast_nodes)."""
    _check_graph(graph, "broadcast_nodes")
    return _broadcast(graph_feat, graph.batch_num_nodes(ntype), "broadcast_nodes")


def broadcast_edges(graph, graph_feat: torch.Tensor, *, etype: EType = None) -> torch.Tensor:
    """graph_feat [B, *] -> [E, *]: row b copied to each edge of graph b (dgl.broadcast_edges)."""
    _check_graph(graph, "broadcast_edges")
    return _broadcast(graph_feat, graph.batch_num_edges(etype), "broadcast_edges")


def _topk(x: torch.Tensor, seglen: torch.Tensor, k: int, descending: bool, sortby: Optional[int], name: str,
          what: str) -> Tuple[torch.Tensor, torch.Tensor]:
    if x.dim() != 2:
        raise ValueError(f"{what}: feature {name!r} must be [N, D], got shape {tuple(x.shape)}")
    if not isinstance(k, numbers.Integral) or k < 0:
        raise ValueError(f"{what}: k must be an int >= 0, got {k!r}")
    rows, width = x.shape
    if sortby is not None and not (isinstance(sortby, numbers.Integral) and -width <= sortby < width):
        raise DGLError(f"{what}: sortby must be a column of feature {name!r} (in [-{width}, {width})), "
                       f"got {sortby!r}")
    lengths = seglen.to(device=x.device, dtype=torch.int64)
    batch = lengths.numel()
    slots = max(int(lengths.max()) if batch else 0, int(k))  # each graph padded to `slots` rows, as DGL
    # padding ranks last: -inf (+inf) for a float feature, the dtype's least (greatest) value otherwise
    if x.is_floating_point():
        pad = float("-inf") if descending else float("inf")
    else:
        pad = torch.iinfo(x.dtype).min if descending else torch.iinfo(x.dtype).max
    seg = torch.repeat_interleave(torch.arange(batch, device=x.device), lengths)  # [N]
    first = torch.cumsum(lengths, 0) - lengths  # [B]: each graph's first row
    slot = seg * slots + torch.arange(rows, device=x.device) - first[seg]  # [N]: row -> (graph, position)
    padded = x.new_full((batch * slots, width), pad).index_copy(0, slot, x).view(batch, slots, width)
    if sortby is not None:
        order = padded[:, :, sortby].topk(int(k), dim=1, largest=descending).indices  # [B, k]
        out = padded.gather(1, order.unsqueeze(-1).expand(batch, int(k), width))  # [B, k, D]
        real = (order < lengths.view(-1, 1)).unsqueeze(-1)  # [B, k, 1]
    else:  # every column ranked apart
        out, order = padded.topk(int(k), dim=1, largest=descending)  # [B, k, D] each
        real = order < lengths.view(-1, 1, 1)
    return out.masked_fill(~real, 0), order


def topk_nodes(graph, feat: str, k: int, *, descending: bool = True, sortby: Optional[int] = None,
               ntype: Optional[str] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    """Per graph, the k nodes with the largest (descending=False: smallest) value of column `sortby` of feat
    [N, D]: (their features [B, k, D], their positions within their graph [B, k]); sortby=None ranks every
    column apart (torch.topk(feat, k, dim=0) per graph): ([B, k, D], [B, k, D]). A graph with fewer than k
    nodes gets rows of 0 after its own (their positions are not meaningful), as DGL's."""
    frame, seglen = _node_frame(graph, ntype, "topk_nodes")
    return _topk(_lookup(frame, feat, "topk_nodes"), seglen, k, descending, sortby, feat, "topk_nodes")


def topk_edges(graph, feat: str, k: int, *, descending: bool = True, sortby: Optional[int] = None,
               etype: EType = None) -> Tuple[torch.Tensor, torch.Tensor]:
    """topk_nodes over the edges of each graph (feat [E, D])."""
    frame, seglen = _edge_frame(graph, etype, "topk_edges")
    return _topk(_lookup(frame, feat, "topk_edges"), seglen, k, descending, sortby, feat, "topk_edges")
