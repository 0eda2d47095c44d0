"""dgl.dataloading.as_edge_prediction_sampler: a node-wise sampler (MultiLayerNeighborSampler and the like)
turned into one over seed edges, for edge classification and link prediction. For a batch of edge ids it
yields, as DGL's EdgePredictionSampler, (input_nodes, pair_graph, blocks) or, with a negative sampler,
(input_nodes, pair_graph, neg_pair_graph, blocks):

  pair_graph      the batch's edges (in the order given) over the nodes they and the negative pairs touch,
                  compacted as DGL's compact_graphs numbers them (by first appearance: the positive edges'
                  sources, their destinations, then the negative pairs' sources and destinations); ndata
                  holds g's node features of those nodes and NID, edata g's edge features of the edges and EID
  neg_pair_graph  the negative pairs over the same nodes, ndata[NID] only
  blocks          the node-wise sampler's blocks for those nodes (pair_graph.ndata[NID], in that order), with
                  the edges `exclude` names left out of the neighbourhoods

For now graphs with one node type and one relation (DGL's common path); exclude None, 'self', 'reverse_id'
or a callable. A heterograph, seed edges as {etype: ids} or exclude='reverse_types' raise NotImplementedError."""
from __future__ import annotations

import inspect
from collections.abc import Mapping

import torch

from .._base import EID, NID, DGLError
from .._graph import DGLGraph, graph


def _homogeneous(g, what: str) -> None:
    if not isinstance(g, DGLGraph):
        raise TypeError(f"{what}: expected a topograph graph, got {type(g).__name__}")
    if len(g.ntypes) != 1 or len(g.canonical_etypes) != 1:
        raise NotImplementedError(f"{what}: graphs of one node type and one relation only for now; the graph has "
                                  f"{g.canonical_etypes}")


def _compacted(keys: torch.Tensor):
    """(the distinct ids of keys by first appearance, each entry's position among them)."""
    distinct, inverse = torch.unique(keys, return_inverse=True)
    first = torch.full((distinct.numel(),), keys.numel(), dtype=torch.int64)
    first = first.scatter_reduce(0, inverse, torch.arange(keys.numel()), "amin")
    order = torch.argsort(first)
    rank = torch.empty_like(order)
    rank[order] = torch.arange(order.numel())
    return distinct[order], rank[inverse]


class EdgePredictionSampler:
    """DGL's EdgePredictionSampler (made by as_edge_prediction_sampler); ``sample(g, seed_edges)``."""

    _samples_edges = True  # DataLoader: the indices are edge ids

    def __init__(self, sampler, exclude=None, reverse_eids=None, reverse_etypes=None, negative_sampler=None,
                 prefetch_labels=None):
        params = inspect.signature(sampler.sample).parameters
        if len(params) < 3:  # (g, indices, exclude_eids)
            raise TypeError("as_edge_prediction_sampler: the sampler's sample() takes no exclude_eids (a third "
                            "argument, the edge ids to leave out of the neighbourhoods)")
        if exclude == "reverse_types" or reverse_etypes is not None:
            raise NotImplementedError("as_edge_prediction_sampler: exclude='reverse_types' / reverse_etypes (for "
                                      "heterographs) is not supported yet")
        if not (exclude is None or exclude in ("self", "reverse_id") or callable(exclude)):
            raise ValueError(f"as_edge_prediction_sampler: exclude must be None, 'self', 'reverse_id', "
                             f"'reverse_types' or a callable, got {exclude!r}")
        if exclude == "reverse_id":
            if reverse_eids is None or isinstance(reverse_eids, Mapping):
                raise (NotImplementedError if isinstance(reverse_eids, Mapping) else ValueError)(
                    "as_edge_prediction_sampler: exclude='reverse_id' needs reverse_eids, a tensor mapping each "
                    "edge id to its reverse edge's id ({etype: tensor} is not supported yet)")
            reverse_eids = torch.as_tensor(reverse_eids)
        self.sampler, self.exclude, self.reverse_eids = sampler, exclude, reverse_eids
        self.reverse_etypes, self.negative_sampler = reverse_etypes, negative_sampler
        self.prefetch_labels = list(prefetch_labels or [])  # features are gathered eagerly: every edge feature is there

    def _exclude_eids(self, g, eids: torch.Tensor, seed_edges):
        if self.exclude is None:
            return None
        if self.exclude == "self":
            return eids
        if self.exclude == "reverse_id":
            reverse = self.reverse_eids
            if reverse.dim() != 1 or reverse.numel() != g.num_edges():
                raise DGLError(f"as_edge_prediction_sampler: reverse_eids must hold one id per edge "
                               f"({g.num_edges()}), got shape {tuple(reverse.shape)}")
            mapped = reverse.to(torch.int64)[eids]
            bad = (mapped < 0) | (mapped >= g.num_edges())
            if bool(bad.any()):
                raise DGLError(f"as_edge_prediction_sampler: reverse_eids maps edge {int(eids[bad][0])} to "
                               f"{int(mapped[bad][0])}, no edge id")
            return torch.cat([eids, mapped])
        return self.exclude(seed_edges)  # a callable, as DGL's

    def sample(self, g: DGLGraph, seed_edges):
        _homogeneous(g, "as_edge_prediction_sampler")
        if isinstance(seed_edges, Mapping):
            raise NotImplementedError("as_edge_prediction_sampler: seed edges as {etype: ids} (heterographs) are "
                                      "not supported yet")
        missing = [name for name in self.prefetch_labels if name not in g.edata]
        if missing:
            raise DGLError(f"as_edge_prediction_sampler: prefetch_labels names {missing[0]!r}, no edge feature of "
                           f"the graph (it has {sorted(g.edata)})")
        eids = g._checked_ids(seed_edges, g.num_edges(), "as_edge_prediction_sampler: edge").cpu()
        u, v = (x.cpu().to(torch.int64) for x in g.find_edges(eids))
        ends = [u, v]
        if self.negative_sampler is not None:
            neg = self.negative_sampler(g, eids.to(g.device))
            if isinstance(neg, Mapping):
                neg = neg[g.canonical_etypes[0]]
            ends += [x.cpu().to(torch.int64) for x in neg]
            if ends[2].numel() != ends[3].numel():
                raise DGLError(f"as_edge_prediction_sampler: the negative sampler gave {ends[2].numel()} sources "
                               f"but {ends[3].numel()} destinations")
        nodes, local = _compacted(torch.cat(ends))
        local = torch.split(local, [x.numel() for x in ends])
        from .. import _message_passing as mp  # it builds on ops, which builds on _graph

        pair = graph((local[0], local[1]), num_nodes=nodes.numel(), idtype=g.idtype, device=g.device)
        node_frame, edge_frame = mp.node_frame(g, g.ntypes[0]), mp.edge_frame(g, 0)
        for name, value in node_frame._data.items():
            pair.ndata[name] = value.index_select(0, nodes.to(value.device))
        for name, value in edge_frame._data.items():
            pair.edata[name] = value.index_select(0, eids.to(value.device))
        pair.ndata[NID] = nodes.to(device=pair.device, dtype=g.idtype)
        pair.edata[EID] = eids.to(device=pair.device, dtype=g.idtype)
        exclude_eids = self._exclude_eids(g, eids, seed_edges)
        input_nodes, _, blocks = self.sampler.sample(g, nodes.to(g.device), exclude_eids)
        if self.negative_sampler is None:
            return input_nodes, pair, blocks
        neg_pair = graph((local[2], local[3]), num_nodes=nodes.numel(), idtype=g.idtype, device=g.device)
        neg_pair.ndata[NID] = pair.ndata[NID]
        return input_nodes, pair, neg_pair, blocks

    sample_blocks = sample


def as_edge_prediction_sampler(sampler, exclude=None, reverse_eids=None, reverse_etypes=None, negative_sampler=None,
                               prefetch_labels=None) -> EdgePredictionSampler:
    """dgl.dataloading.as_edge_prediction_sampler: `sampler` (whose sample(g, seed_nodes, exclude_eids) builds
    the blocks) over seed edges; see this module's doc. exclude: None (no edge left out), 'self' (the batch's
    edges), 'reverse_id' (and reverse_eids[e] for each: a tensor of one id per edge) or a callable taking the
    seed edges and returning the ids to leave out. negative_sampler: a callable (g, eids) -> (sources,
    destinations), e.g. negative_sampler.Uniform(k) / GlobalUniform(k). prefetch_labels: DGL's lazy-feature
    names for pair_graph's edges; here every edge feature is gathered, so they are only checked to exist."""
    return EdgePredictionSampler(sampler, exclude, reverse_eids, reverse_etypes, negative_sampler, prefetch_labels)
