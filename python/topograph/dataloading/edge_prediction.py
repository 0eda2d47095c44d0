"""dgl.dataloading.as_edge_prediction_sampler: a node-wise sampler (MultiLayerNeighborSampler and the like)
turned into one over seed edges, for edge classification and link prediction. For a batch of edge ids (a
tensor on a graph of one relation, {etype: ids} on any graph) it yields, as DGL's EdgePredictionSampler,
(input_nodes, pair_graph, blocks) or, with a negative sampler, (input_nodes, pair_graph, neg_pair_graph, blocks):

  pair_graph      g's node types and relations, each relation with its seed edges (in the order given) over
                  the nodes they and the negative pairs touch, compacted per node type as DGL's compact_graphs
                  numbers them (by first appearance: relation after relation in canonical order, each its
                  positive edges' sources then destinations, then the same for the negative pairs); ndata holds
                  g's node features of those nodes and NID, edata g's edge features of the edges and EID
  neg_pair_graph  the negative pairs over the same nodes (a relation the sampler gives none has no edge),
                  ndata[NID] only
  blocks          the node-wise sampler's blocks for those nodes (pair_graph.ndata[NID]: a tensor on a graph of
                  one node type, else {ntype: ids}), with the edges `exclude` names left out of the
                  neighbourhoods

exclude: None, 'self' (the seed edges), 'reverse_id' (and reverse_eids[e] of each, in the same relation),
'reverse_types' (and, for a seed e of relation r, edge e of relation reverse_etypes[r]), a callable (e.g.
SpotTarget) or fixed edge ids: exclusion.py's rule, also dgl.dataloading.find_exclude_eids."""
from __future__ import annotations

import inspect
from collections.abc import Mapping
import torch

from .._base import EID, NID, DGLError
from .._construct import heterograph
from .._graph import DGLGraph
from .exclusion import Exclusion, Seeds, as_given, seed_edge_sets
from .neighbor_sampler import check_feature_names

def _compacted(keys: torch.Tensor):
    """(the distinct ids of keys by first appearance, each entry's position among them)."""
    distinct, inverse = torch.unique(keys, return_inverse=True)
    first = torch.full((distinct.numel(),), keys.numel(), dtype=torch.int64)
    first = first.scatter_reduce(0, inverse, torch.arange(keys.numel()), "amin")
    order = torch.argsort(first)
    rank = torch.empty_like(order)
    rank[order] = torch.arange(order.numel())
    return distinct[order], rank[inverse]


def _compacted_pairs(graphs, relations, ntypes):
    """DGL's compact_graphs numbering of the pair graphs' nodes: per node type, the distinct ids by first
    appearance over graph, relation (canonical order), sources then destinations. graphs: [{relation index:
    (sources, destinations)}] in g's ids. Returns ({ntype: g's ids [n]}, per graph {relation: (local sources,
    local destinations)})."""
    ends = {t: [] for t in ntypes}  # per node type, the id tensors in order of appearance
    for pairs in graphs:
        for r, (s, _, d) in enumerate(relations):
            ends[s].append(pairs[r][0])
            ends[d].append(pairs[r][1])
    nodes, local = {}, {}
    for t in ntypes:
        nodes[t], positions = _compacted(torch.cat(ends[t] or [torch.zeros(0, dtype=torch.int64)]))  # [] untouched
        local[t] = iter(torch.split(positions, [x.numel() for x in ends[t]]))
    local_pairs = [{r: (next(local[s]), next(local[d])) for r, (s, _, d) in enumerate(relations)} for _ in graphs]
    return nodes, local_pairs


def _gather_features(g: DGLGraph, pair: DGLGraph, nodes: dict, edges: Seeds) -> None:
    """pair's features, as DGL's pair graph: g's node features of nodes[t] and NID per node type, g's edge
    features of edges[r] and EID per relation."""
    from .. import _message_passing as mp  # it builds on ops, which builds on _graph

    for t, ids in nodes.items():
        target = pair.nodes[t].data
        for name, value in mp.node_frame(g, t)._data.items():
            target[name] = value.index_select(0, ids.to(value.device))
        target[NID] = ids.to(device=pair.device, dtype=g.idtype)
    for r, c in enumerate(g.canonical_etypes):
        target = pair.edges[c].data
        for name, value in mp.edge_frame(g, r)._data.items():
            target[name] = value.index_select(0, edges[r].to(value.device))
        target[EID] = edges[r].to(device=pair.device, dtype=g.idtype)


class EdgePredictionSampler:
    """DGL's EdgePredictionSampler (made by as_edge_prediction_sampler); ``sample(g, seed_edges)``."""

    _samples_edges = True  # DataLoader: the indices are edge ids

    def __init__(self, sampler, exclude=None, reverse_eids=None, reverse_etypes=None, negative_sampler=None,
                 prefetch_labels=None):
        params = inspect.signature(sampler.sample).parameters
        if len(params) < 3:  # (g, indices, exclude_eids)
            raise TypeError("as_edge_prediction_sampler: the sampler's sample() takes no exclude_eids (a third "
                            "argument, the edge ids to leave out of the neighbourhoods)")
        self.exclusion = Exclusion(exclude, reverse_eids, reverse_etypes, "as_edge_prediction_sampler")
        self.sampler, self.negative_sampler = sampler, negative_sampler
        # DGL's lazy-feature names (a list, or {etype: names}); features are gathered eagerly: every one is there
        self.prefetch_labels = prefetch_labels or []

    def _check_prefetch_labels(self, g: DGLGraph) -> None:
        check_feature_names(g, self.prefetch_labels, "edge", "as_edge_prediction_sampler: prefetch_labels")

    def _negative_pairs(self, g: DGLGraph, seed_edges) -> dict:
        """The negative sampler's pairs as {relation index: (sources, destinations)} (int64, CPU)."""
        relations = g.canonical_etypes
        pairs = self.negative_sampler(g, seed_edges)
        if not isinstance(pairs, Mapping):
            if len(relations) != 1:
                raise DGLError(f"as_edge_prediction_sampler: the graph has relations {relations}: the negative "
                               f"sampler must return {{etype: (sources, destinations)}}")
            pairs = {relations[0]: pairs}
        out = {}
        for etype, (src, dst) in pairs.items():
            r = g._relation(etype)
            if src.numel() != dst.numel():
                raise DGLError(f"as_edge_prediction_sampler: the negative sampler gave {src.numel()} sources but "
                               f"{dst.numel()} destinations for {relations[r]}")
            s, _, d = relations[r]
            out[r] = tuple(g._checked_ids(x, g.num_nodes(t), f"as_edge_prediction_sampler: negative {relations[r]} "
                                          f"{side}").cpu()
                           for x, t, side in ((src, s, "source"), (dst, d, "destination")))
        return out

    def sample(self, g: DGLGraph, seed_edges):
        if not isinstance(g, DGLGraph):
            raise TypeError(f"as_edge_prediction_sampler: expected a topograph graph, got {type(g).__name__}")
        if g.is_block:
            raise ValueError("as_edge_prediction_sampler: not defined for a block")
        self._check_prefetch_labels(g)
        typed = isinstance(seed_edges, Mapping)
        seeds = seed_edge_sets(g, seed_edges, "as_edge_prediction_sampler")
        relations, ntypes = g.canonical_etypes, g.ntypes
        # as DGL's: exclude's callable sees canonical etypes, and so does the negative sampler
        given = as_given(g, seed_edges)
        checked = {relations[r]: ids.to(g.device) for r, ids in seeds.items()} if typed else seeds[0].to(g.device)
        empty = torch.zeros(0, dtype=torch.int64)
        graphs = [{r: tuple(x.cpu().to(torch.int64) for x in g.find_edges(seeds.get(r, empty), etype=c))
                   for r, c in enumerate(relations)}]  # the positive pairs, then the negative ones
        if self.negative_sampler is not None:
            negative = self._negative_pairs(g, checked)
            graphs.append({r: negative.get(r, (empty, empty)) for r in range(len(relations))})
        nodes, local_pairs = _compacted_pairs(graphs, relations, ntypes)
        counts = {t: ids.numel() for t, ids in nodes.items()}
        pair = heterograph({c: local_pairs[0][r] for r, c in enumerate(relations)}, counts, idtype=g.idtype,
                           device=g.device)
        _gather_features(g, pair, nodes, {r: seeds.get(r, empty) for r in range(len(relations))})
        exclude_eids = self.exclusion.eids(g, seeds, given, typed)
        seed_nodes = {t: ids.to(g.device) for t, ids in nodes.items()}  # a tensor for one node type, as DGL's
        input_nodes, _, blocks = self.sampler.sample(g, seed_nodes[ntypes[0]] if len(ntypes) == 1 else seed_nodes,
                                                     exclude_eids)
        if self.negative_sampler is None:
            return input_nodes, pair, blocks
        neg_pair = heterograph({c: local_pairs[1][r] for r, c in enumerate(relations)}, counts, idtype=g.idtype,
                               device=g.device)
        for t in ntypes:
            neg_pair.nodes[t].data[NID] = pair.nodes[t].data[NID]
        return input_nodes, pair, neg_pair, blocks

    sample_blocks = sample


def as_edge_prediction_sampler(sampler, exclude=None, reverse_eids=None, reverse_etypes=None, negative_sampler=None,
                               prefetch_labels=None) -> EdgePredictionSampler:
    """dgl.dataloading.as_edge_prediction_sampler: `sampler` (whose sample(g, seed_nodes, exclude_eids) builds
    the blocks) over seed edges; see this module's doc. exclude: None (no edge left out), 'self' (the batch's
    edges), 'reverse_id' (and reverse_eids[e] for each: a tensor of one id per edge, or {etype: tensor} per
    relation), 'reverse_types' (and edge e of relation reverse_etypes[r] for each seed e of relation r:
    {etype: reverse etype}), a callable taking the seed edges and returning the ids to leave out (SpotTarget),
    or fixed edge ids (a tensor or {etype: tensor}) left out of every batch.
    negative_sampler: a callable (g, eids) -> (sources, destinations), or {etype: (sources, destinations)} for
    {etype: eids}, e.g. negative_sampler.Uniform(k) / GlobalUniform(k). prefetch_labels: DGL's lazy-feature
    names for pair_graph's edges (a list, or {etype: names}); here every edge feature is gathered, so they are
    only checked to exist."""
    return EdgePredictionSampler(sampler, exclude, reverse_eids, reverse_etypes, negative_sampler, prefetch_labels)
