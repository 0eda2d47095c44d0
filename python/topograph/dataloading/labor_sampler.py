"""dgl.dataloading.LaborSampler (Balın & Çatalyürek, layer-neighbour sampling; DGL 2.1's default LABOR-0): per layer,
one uniform random number r_t per node t, and seed s keeps its in-edge from t when r_t <= min(1, fanout / deg(s)).
Each seed keeps fanout edges in expectation, as neighbour sampling does, but seeds sharing a neighbour draw it
together, so a batch reaches fewer distinct nodes. Homogeneous graphs, uniform weights, LABOR-0 only (DGL's
importance sampling, layer and batch dependency, prob: a DGLError here)."""
from __future__ import annotations

import torch

from .._base import DGLError
from .._block import to_block
from .._graph import EID, NID
from .._subgraph import edge_subgraph, in_subgraph
from .base import BlockSampler


class LaborSampler(BlockSampler):
    def __init__(self, fanouts, edge_dir: str = "in", prob=None, importance_sampling: int = 0,
                 layer_dependency: bool = False, batch_dependency: int = 1, prefetch_node_feats=None,
                 prefetch_labels=None, prefetch_edge_feats=None, output_device=None):
        super().__init__(prefetch_node_feats, prefetch_labels, prefetch_edge_feats, output_device)
        unsupported = [name for name, value, default in (("edge_dir", edge_dir, "in"), ("prob", prob, None),
                                                          ("importance_sampling", importance_sampling, 0),
                                                          ("layer_dependency", layer_dependency, False),
                                                          ("batch_dependency", batch_dependency, 1))
                       if value != default]
        if unsupported:
            raise DGLError(f"LaborSampler: only LABOR-0 on in-edges is implemented here; {unsupported} must keep "
                           f"their defaults (NeighborSampler covers out-edges and prob)")
        self.fanouts = list(fanouts)

    def sample_blocks(self, g, seed_nodes, exclude_eids=None):
        if not g.is_homogeneous:
            raise DGLError(f"LaborSampler: a homogeneous graph only here, got relations {g.canonical_etypes}")
        if exclude_eids is not None:
            raise DGLError("LaborSampler: exclude_eids is not supported here (use NeighborSampler)")
        output_nodes = seeds = torch.as_tensor(seed_nodes, dtype=torch.int64)
        blocks = []
        for fanout in reversed(self.fanouts):
            frontier = in_subgraph(g, seeds)  # every in-edge of the seeds, EID their ids in g
            parent_eids = frontier.edata[EID]
            u, v = (t.to(torch.int64) for t in frontier.edges())
            if fanout >= 0:
                r = torch.rand(g.num_nodes(), device=u.device)  # one number per node, shared by every seed
                degree = torch.bincount(v, minlength=g.num_nodes()).clamp(min=1).to(r.dtype)
                kept = torch.nonzero(r[u] <= torch.clamp(fanout / degree[v], max=1.0)).reshape(-1)
                frontier = edge_subgraph(frontier, kept, relabel_nodes=False)
                parent_eids = parent_eids[kept]
            block = to_block(frontier, seeds)
            block.edata[EID] = parent_eids[block.edata[EID].long()]  # g's edge ids, as NeighborSampler's blocks
            seeds = block.srcdata[NID].to(torch.int64)
            blocks.insert(0, block)
        return seeds, output_nodes, blocks
