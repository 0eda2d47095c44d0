"""dgl.dataloading.NodeDataLoader and EdgeDataLoader, the loaders of DGL 0.7's examples that DGL 0.8+ keeps as
deprecated DataLoader subclasses: NodeDataLoader is DataLoader; EdgeDataLoader given a BlockSampler wraps it in
as_edge_prediction_sampler with its exclude / reverse_eids / reverse_etypes / negative_sampler (DGL warns
that this will be deprecated), so each batch is (input_nodes, pair_graph, [negative_pair_graph,] blocks)."""
from __future__ import annotations

import warnings

from .base import BlockSampler
from .dataloader import DataLoader
from .edge_prediction import as_edge_prediction_sampler


class NodeDataLoader(DataLoader):
    """(Deprecated since DGL 0.8) dgl.dataloading.DataLoader over seed nodes, under its old name."""


class EdgeDataLoader(DataLoader):
    """(Deprecated since DGL 0.8) DataLoader over seed edges: a BlockSampler is wrapped as DGL's does,
    as_edge_prediction_sampler(sampler, exclude, reverse_eids, reverse_etypes, negative_sampler); an
    edge-prediction sampler is used as given."""

    def __init__(self, graph, indices, graph_sampler, device=None, use_ddp=False, ddp_seed=0, batch_size=1,
                 drop_last=False, shuffle=False, use_prefetch_thread=None, use_alternate_streams=None,
                 pin_prefetcher=None, exclude=None, reverse_eids=None, reverse_etypes=None, negative_sampler=None,
                 use_uva=False, **kwargs):
        if isinstance(graph_sampler, BlockSampler):
            warnings.warn("EdgeDataLoader directly taking a BlockSampler will be deprecated and it will not "
                          "support feature prefetching. Please use dgl.dataloading.as_edge_prediction_sampler "
                          "to wrap it.", DeprecationWarning, stacklevel=2)
            graph_sampler = as_edge_prediction_sampler(graph_sampler, exclude=exclude, reverse_eids=reverse_eids,
                                                       reverse_etypes=reverse_etypes,
                                                       negative_sampler=negative_sampler)
        super().__init__(graph, indices, graph_sampler, device=device, use_ddp=use_ddp, ddp_seed=ddp_seed,
                         batch_size=batch_size, drop_last=drop_last, shuffle=shuffle,
                         use_prefetch_thread=use_prefetch_thread, use_alternate_streams=use_alternate_streams,
                         pin_prefetcher=pin_prefetcher, use_uva=use_uva, **kwargs)
