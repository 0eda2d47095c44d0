"""dgl.dataloading's neighbour-sampled mini-batches: NeighborSampler / MultiLayerNeighborSampler (fan-outs per layer,
blocks per layer, as DGL's; in- or out-edges, weighted, with replacement), MultiLayerFullNeighborSampler (every
edge); the DataLoader over seed nodes is dataloader.py's. Each layer samples a frontier of the current seeds (as
topograph.sampling.sample_neighbors), turns it into a block (as topograph.to_block: the seeds first among the
sources, then the sampled neighbours) and makes the block's sources the next layer's seeds; blocks come first
layer first. All of a batch's layers are one call into the core (graph/sampling.hpp sample_blocks)."""
from __future__ import annotations

from collections import abc
from collections.abc import Mapping
from typing import List, Optional, Sequence

import torch

from .._block import DGLBlock, _carry_block_features
from .._base import DGLError
from .._graph import NID, DGLGraph
from .._subgraph import _check, _node_sets
from ..sampling import EDGE_DIRS, _exclusions, _fanouts, _sampling_options
from .base import BlockSampler
from .dataloader import to_device


def check_feature_names(g: DGLGraph, names, kind: str, what: str) -> None:
    """DGL's prefetch lists (a list of names, or {type: names}) checked to name features of g: node features for
    kind 'node', edge features for 'edge' (a list: of any type; a dict: of that type). A DGLError names the
    first missing one."""
    wanted = names.items() if isinstance(names, Mapping) else [(None, names)]
    for key, listed in wanted:
        if kind == "node":
            held = list(g.ndata if key is None else g.nodes[key].data)
        else:
            held = list(g.edata if key is None else g.edges[key].data)
        missing = [name for name in listed if name not in held]
        if missing:
            raise DGLError(f"{what} names {missing[0]!r}, no {kind} feature of "
                           f"{'the graph' if key is None else key} (it has {sorted(held)})")


class MultiLayerNeighborSampler(BlockSampler):
    """dgl.dataloading.NeighborSampler (MultiLayerNeighborSampler is its other name, as in DGL).
    fanouts[l]: layer l's fan-out, an int (-1: every edge) or {etype: int}; layer 0 is the input layer, so
    fanouts[-1] samples the seeds' own edges. edge_dir, prob and replace draw as sample_neighbors does (mask:
    DGL's name for a boolean prob; give one of the two). edge_dir="out": each layer draws its destinations'
    out-edges and the block holds them turned round (neighbour -> seed, relation (dst type, etype, src type)),
    so messages reach the seeds as through in-edges; EID still names g's edge. DGL 2.1's blocks there are
    unusable (destination ids outside the block), so this is Topograph's reading, not a copy.
    prefetch_node_feats, prefetch_labels, prefetch_edge_feats: DGL's lazy-feature names (a list, or {type:
    names}); the blocks carry every feature of g gathered already, so they are only checked to name features g
    has (a DGLError naming the first that is not). output_device: where sample() puts what it returns; fused:
    DGL's fused-kernel switch (the core samples a batch's layers in one call either way)."""

    def __init__(self, fanouts: Sequence, edge_dir: str = "in", prob: Optional[str] = None,
                 mask: Optional[str] = None, replace: bool = False, prefetch_node_feats=None, prefetch_labels=None,
                 prefetch_edge_feats=None, output_device=None, fused: bool = True):
        if isinstance(fanouts, (str, bytes)) or not isinstance(fanouts, abc.Sequence):
            raise TypeError("MultiLayerNeighborSampler: fanouts must be a list, one fan-out per layer (as DGL's), "
                            f"got {fanouts!r}")
        if len(fanouts) == 0:
            raise ValueError("MultiLayerNeighborSampler: fanouts must name at least one layer")
        if edge_dir not in EDGE_DIRS:
            raise DGLError(f"MultiLayerNeighborSampler: edge_dir must be 'in' or 'out', got {edge_dir!r}")
        if prob is not None and mask is not None:
            raise ValueError("MultiLayerNeighborSampler: prob and mask are mutually exclusive (as DGL's): multiply "
                             "the probability by the mask instead")
        self.fanouts, self.edge_dir, self.replace = list(fanouts), edge_dir, replace
        self.prob = prob if prob is not None else mask
        self._prob_name = "prob" if prob is not None else "mask"  # which argument an error names
        self.prefetch = [("node", "prefetch_node_feats", prefetch_node_feats or []),
                         ("node", "prefetch_labels", prefetch_labels or []),
                         ("edge", "prefetch_edge_feats", prefetch_edge_feats or [])]
        self.output_device = None if output_device is None else torch.device(output_device)

    def sample(self, g: DGLGraph, seed_nodes, exclude_eids=None):
        """(input_nodes, output_nodes, blocks): blocks[0] reads input_nodes' features (blocks[0].srcdata), the
        last block writes output_nodes (= seed_nodes). Ids are tensors, or {ntype: ids} with several types. The
        draws (from torch's generator) and the blocks are the core's (graph/sampling.hpp sample_blocks); each
        block carries NID / EID in g's ids and g's features gathered by them, as DGL's. exclude_eids (edge ids,
        or {etype: ids}): edges never sampled (as_edge_prediction_sampler's exclude), skipped by the core, so unlike
        DGL 2.1, which drops them from its draws, they leave the seed its full fan-out (sample_neighbors'
        exclude_edges)."""
        _check(g, "MultiLayerNeighborSampler")
        for kind, what, names in self.prefetch:
            check_feature_names(g, names, kind, f"MultiLayerNeighborSampler: {what}")
        edge_dir, replace, weights = _sampling_options(g, self.edge_dir, self.prob, self.replace,
                                                       "MultiLayerNeighborSampler", self._prob_name)
        single = not isinstance(seed_nodes, Mapping)
        sets = _node_sets(g, seed_nodes, "MultiLayerNeighborSampler")
        types = g.ntypes
        seeds = [torch.as_tensor(sets.get(t, []), dtype=torch.int64) for t in types]
        fanouts = [_fanouts(g, f) for f in self.fanouts]
        seed = int(torch.randint(0, 2 ** 62, (1,)).item())
        blocks: List[DGLGraph] = []
        excluded = _exclusions(g, exclude_eids, "exclude_eids")
        layers = g._g.sample_blocks(seeds, fanouts, seed, edge_dir, replace, weights, excluded)
        for handle, src, dst, eids in layers:  # on g's device already
            block = DGLBlock(handle)
            _carry_block_features(g, block, src, dst, eids)
            blocks.append(block)
        # what blocks[0] reads, and the seeds, in g's idtype as DGL 2.1 hands them back
        inputs = {t: blocks[0].srcnodes[t].data[NID].to(g.idtype) for t in types}
        outputs = {t: ids.to(g.idtype) for t, ids in zip(types, seeds) if t in sets}
        if single:
            (t,) = types
            out = inputs[t], outputs[t], blocks
        else:
            out = inputs, outputs, blocks
        return out if self.output_device is None else to_device(out, self.output_device)

    sample_blocks = sample  # DGL's BlockSampler name


NeighborSampler = MultiLayerNeighborSampler  # DGL 2.1's main name for it


class MultiLayerFullNeighborSampler(MultiLayerNeighborSampler):
    """Every edge into (edge_dir="out": out of) each layer's seeds, num_layers layers:
    MultiLayerNeighborSampler([-1] * num_layers, edge_dir=edge_dir, **kwargs) (prefetch_*, output_device, ...),
    as DGL's."""

    def __init__(self, num_layers: int, edge_dir: str = "in", **kwargs):
        if isinstance(num_layers, bool) or not isinstance(num_layers, int) or num_layers < 1:
            raise ValueError(f"MultiLayerFullNeighborSampler: num_layers must be an int >= 1, got {num_layers!r}")
        super().__init__([-1] * num_layers, edge_dir=edge_dir, **kwargs)
