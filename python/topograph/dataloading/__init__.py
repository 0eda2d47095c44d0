"""topograph.dataloading, as dgl.dataloading: neighbour-sampled mini-batches of nodes (NeighborSampler alias
MultiLayerNeighborSampler and MultiLayerFullNeighborSampler, neighbor_sampler.py; DataLoader, dataloader.py),
mini-batches of whole graphs (GraphDataLoader, GraphCollator; graph_dataloader.py) and negative samplers for link prediction
(negative_sampler.Uniform / PerSourceUniform / GlobalUniform; negative_sampler.py) and as_edge_prediction_sampler
(edge_prediction.py), which turns a node-wise sampler into one over seed edges, with find_exclude_eids and
SpotTarget (exclusion.py) for the edges it leaves out; the base classes Sampler and
BlockSampler that users subclass (base.py) and the subgraph samplers ShaDowKHopSampler, SAINTSampler and
ClusterGCNSampler (subgraph_samplers.py), LaborSampler (labor_sampler.py); DGL 0.7's NodeDataLoader /
EdgeDataLoader (legacy.py)."""
from . import negative_sampler
from .graph_dataloader import GraphCollator, GraphDataLoader
from .edge_prediction import EdgePredictionSampler, as_edge_prediction_sampler
from .exclusion import SpotTarget, find_exclude_eids
from .dataloader import DataLoader
from .base import BlockSampler, Sampler
from .neighbor_sampler import MultiLayerFullNeighborSampler, MultiLayerNeighborSampler, NeighborSampler
from .labor_sampler import LaborSampler
from .subgraph_samplers import ClusterGCNSampler, SAINTSampler, ShaDowKHopSampler
from .legacy import EdgeDataLoader, NodeDataLoader

__all__ = ["DataLoader", "NeighborSampler", "MultiLayerNeighborSampler", "MultiLayerFullNeighborSampler",
           "GraphDataLoader", "GraphCollator", "negative_sampler", "as_edge_prediction_sampler",
           "EdgePredictionSampler", "Sampler", "BlockSampler", "ShaDowKHopSampler", "SAINTSampler",
           "ClusterGCNSampler", "LaborSampler", "SpotTarget", "find_exclude_eids", "NodeDataLoader", "EdgeDataLoader"]
