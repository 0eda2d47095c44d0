"""dgl.dataloading's samplers that return one subgraph per batch instead of blocks (DGL 2.1's semantics):
ShaDowKHopSampler (Zeng et al., ShaDow-GNN: the subgraph induced by the seeds' sampled k-hop neighbourhood),
SAINTSampler (Zeng et al., GraphSAINT: a random node set by node, edge or random-walk sampling, whatever the
indices) and ClusterGCNSampler (Chiang et al., Cluster-GCN: the subgraph induced by the batch's partitions). They
build on the package's sampling (sample_neighbors, random_walk) and node_subgraph; the subgraph carries NID / EID
and g's features, as DGL's."""
from __future__ import annotations

import os
import pickle
from typing import Sequence

import torch

from .._base import DGLError
from .._block import to_block
from .._graph import EID, NID
from .._random_walks import pack_traces, random_walk
from .._reorder import _rcmk_permutation
from .._subgraph import node_subgraph
from .._transform import remove_edges
from ..sampling import sample_neighbors
from .base import Sampler
from .dataloader import to_device


class ShaDowKHopSampler(Sampler):
    """fanouts[l] neighbours per node, hop after hop from the seeds (the last fan-out first, as DGL's), then the
    subgraph of g induced by every node reached, relabelled with the reached nodes in to_block's order (seeds
    first): sample(g, seed_nodes, exclude_eids=None) -> (input_nodes, output_nodes, subgraph). exclude_eids:
    edge ids neither sampled nor kept in the subgraph."""

    _indices_are_node_ids = True

    def __init__(self, fanouts: Sequence, replace: bool = False, prob=None, prefetch_node_feats=None,
                 prefetch_edge_feats=None, output_device=None):
        self.fanouts, self.replace, self.prob = list(fanouts), replace, prob
        self.prefetch_node_feats, self.prefetch_edge_feats = prefetch_node_feats, prefetch_edge_feats
        self.output_device = None if output_device is None else torch.device(output_device)

    def sample(self, g, seed_nodes, exclude_eids=None):
        output_nodes = seed_nodes
        for fanout in reversed(self.fanouts):
            frontier = sample_neighbors(g, seed_nodes, fanout, replace=self.replace, prob=self.prob,
                                        exclude_edges=exclude_eids)
            seed_nodes = to_block(frontier, seed_nodes).srcdata[NID]
        subg = node_subgraph(g, seed_nodes)
        if exclude_eids is not None:
            dropped = torch.isin(subg.edata[EID], torch.as_tensor(exclude_eids, device=subg.device))
            subg = remove_edges(subg, torch.nonzero(dropped).reshape(-1))
        out = seed_nodes, output_nodes, subg
        return out if self.output_device is None else to_device(out, self.output_device)


class SAINTSampler(Sampler):
    """A GraphSAINT subgraph per batch, the indices only counting batches: mode 'node' (budget nodes drawn
    with replacement in proportion to out-degree), 'edge' (budget edges drawn with replacement in proportion
    to 1 / in-degree(dst) + 1 / out-degree(src), their end nodes) or 'walk' (budget = (roots, walk length):
    the nodes of random walks from uniform roots); the subgraph induced by the distinct nodes drawn. cache keeps
    the drawing probabilities of the first graph seen, as DGL's."""

    def __init__(self, mode: str, budget, cache: bool = True, prefetch_ndata=None, prefetch_edata=None,
                 output_device="cpu"):
        if mode not in ("node", "edge", "walk"):
            raise DGLError(f"SAINTSampler: mode must be 'node', 'edge' or 'walk', got {mode!r}")
        if mode == "walk" and (not isinstance(budget, (tuple, list)) or len(budget) != 2):
            raise DGLError(f"SAINTSampler: mode 'walk' takes budget = (roots, walk length), got {budget!r}")
        self.mode, self.budget, self.cache, self.prob = mode, budget, cache, None
        self.prefetch_ndata, self.prefetch_edata = prefetch_ndata or [], prefetch_edata or []
        self.output_device = None if output_device is None else torch.device(output_device)

    def _probabilities(self, g) -> torch.Tensor:
        if self.cache and self.prob is not None:
            return self.prob
        if self.mode == "node":
            prob = g.out_degrees().float().clamp(min=1)
        else:
            src, dst = (ids.long() for ids in g.edges())
            prob = 1.0 / g.in_degrees().float().clamp(min=1)[dst] + 1.0 / g.out_degrees().float().clamp(min=1)[src]
            prob = prob / prob.sum()
        if self.cache:
            self.prob = prob
        return prob

    def _nodes(self, g) -> torch.Tensor:
        if self.mode == "walk":
            roots, length = self.budget
            traces, types = random_walk(g, torch.randint(0, g.num_nodes(), (roots,)), length=length)
            return pack_traces(traces, types)[0].unique()
        drawn = torch.multinomial(self._probabilities(g), num_samples=self.budget, replacement=True)
        if self.mode == "node":
            return drawn.unique()
        src, dst = g.find_edges(drawn.unique())
        return torch.cat([src, dst]).unique()

    def sample(self, g, indices):
        subg = node_subgraph(g, self._nodes(g).to(g.idtype))
        return subg if self.output_device is None else subg.to(self.output_device)


class ClusterGCNSampler(Sampler):
    """The subgraph of g induced by the nodes of the batch's partitions (the DataLoader's indices are partition
    ids 0..k-1), nodes in partition order, as DGL 2.1's. DGL partitions with METIS, which topograph does not have:
    here partition i is the i-th of k near-equal runs of g's reverse Cuthill-McKee order, which keeps linked
    nodes close, so a batch is still a dense cluster; which nodes share a partition differs from DGL's.
    cache_path holds (partition_offset [k + 1], partition_node_ids [N]) as DGL's file does: read back when it
    exists (checked against k and g), written otherwise. balance_ntypes / balance_edges / mode are METIS's
    options, accepted and unused (the runs are balanced by node count)."""

    def __init__(self, g, k: int, cache_path: str = "cluster_gcn.pkl", balance_ntypes=None,
                 balance_edges: bool = False, mode: str = "k-way", prefetch_ndata=None, prefetch_edata=None,
                 output_device=None):
        if mode not in ("k-way", "recursive"):
            raise DGLError(f"ClusterGCNSampler: mode must be 'k-way' or 'recursive', got {mode!r}")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise DGLError(f"ClusterGCNSampler: k must be a positive int, got {k!r}")
        if os.path.exists(cache_path):
            self.partition_offset, self.partition_node_ids = _read_partition_cache(cache_path, k, g.num_nodes())
        else:
            order = _rcmk_permutation(g)
            sizes = torch.full((k,), g.num_nodes() // k, dtype=torch.int64)
            sizes[: g.num_nodes() % k] += 1
            self.partition_offset = torch.cat([torch.zeros(1, dtype=torch.int64), sizes.cumsum(0)])
            self.partition_node_ids = order
            with open(cache_path, "wb") as f:
                pickle.dump((self.partition_offset, self.partition_node_ids), f)
        self.prefetch_ndata, self.prefetch_edata = prefetch_ndata or [], prefetch_edata or []
        self.output_device = output_device

    def sample(self, g, partition_ids):
        offset, ids = self.partition_offset, self.partition_node_ids
        nodes = torch.cat([ids[offset[i]:offset[i + 1]] for i in torch.as_tensor(partition_ids).tolist()])
        subg = node_subgraph(g, nodes.to(device=g.device, dtype=g.idtype))
        return subg if self.output_device is None else subg.to(self.output_device)


def _read_partition_cache(path: str, k: int, num_nodes: int):
    """DGL 2.1's checks, in its words, so that a stale cache of another k or graph is named, not used."""
    try:
        with open(path, "rb") as f:
            offset, ids = pickle.load(f)
    except (EOFError, TypeError, ValueError, pickle.UnpicklingError):
        raise DGLError(f"The contents in the cache file {path} is invalid. Please remove the cache file {path} or "
                       "specify another path.") from None
    if len(offset) != k + 1:
        raise DGLError("Number of partitions in the cache does not match the value of k. Please remove the cache "
                       f"file {path} or specify another path.")
    if len(ids) != num_nodes:
        raise DGLError("Number of nodes in the cache does not match the given graph. Please remove the cache file "
                       f"{path} or specify another path.")
    return torch.as_tensor(offset), torch.as_tensor(ids)
