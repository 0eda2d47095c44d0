"""dgl.dataloading's sampler base classes, which users subclass to write their own samplers (DGL 2.1's
"Writing your own sampler"): Sampler (sample(g, indices) -> anything the training loop reads) and BlockSampler
(sample_blocks(g, seed_nodes, exclude_eids) -> (input_nodes, output_nodes, blocks), with DGL's prefetch
arguments). The DataLoader hands a Sampler its indices as given (their meaning is the sampler's: SAINTSampler
reads them as iteration numbers) and checks a BlockSampler's to be node ids of the graph."""
from __future__ import annotations

import torch

from .dataloader import to_device


class Sampler:
    """A mini-batch sampler: sample(g, indices) builds one batch from a batch of the DataLoader's indices."""

    _indices_are_node_ids = False  # the DataLoader passes the indices through unchecked

    def sample(self, g, indices):
        raise NotImplementedError(f"{type(self).__name__}.sample(g, indices) is not defined")


class BlockSampler(Sampler):
    """A sampler of message-flow blocks: subclasses define sample_blocks(g, seed_nodes, exclude_eids=None) ->
    (input_nodes, output_nodes, blocks). prefetch_node_feats / prefetch_labels / prefetch_edge_feats are DGL's
    lazy-feature names (blocks made by topograph.to_block carry g's features already, so they are kept for
    DGL's signature); output_device moves what sample() returns."""

    _indices_are_node_ids = True

    def __init__(self, prefetch_node_feats=None, prefetch_labels=None, prefetch_edge_feats=None, output_device=None):
        self.prefetch_node_feats = prefetch_node_feats or []
        self.prefetch_labels = prefetch_labels or []
        self.prefetch_edge_feats = prefetch_edge_feats or []
        self.output_device = None if output_device is None else torch.device(output_device)

    def sample_blocks(self, g, seed_nodes, exclude_eids=None):
        raise NotImplementedError(f"{type(self).__name__}.sample_blocks(g, seed_nodes, exclude_eids=None) is not "
                                  f"defined")

    def assign_lazy_features(self, result):
        """DGL's hook that marks features to fetch; the blocks hold them already, so the result as it is."""
        return result

    def sample(self, g, seed_nodes, exclude_eids=None):
        out = self.assign_lazy_features(self.sample_blocks(g, seed_nodes, exclude_eids=exclude_eids))
        return out if self.output_device is None else to_device(out, self.output_device)
