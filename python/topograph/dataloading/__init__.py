"""topograph.dataloading, as dgl.dataloading: neighbour-sampled mini-batches of nodes (MultiLayerNeighborSampler,
MultiLayerFullNeighborSampler and DataLoader; neighbor_sampler.py), mini-batches of whole graphs
(GraphDataLoader, GraphCollator; graph_dataloader.py) and negative samplers for link prediction
(negative_sampler.Uniform / PerSourceUniform; negative_sampler.py)."""
from . import negative_sampler
from .graph_dataloader import GraphCollator, GraphDataLoader
from .neighbor_sampler import DataLoader, MultiLayerFullNeighborSampler, MultiLayerNeighborSampler

__all__ = ["DataLoader", "MultiLayerNeighborSampler", "MultiLayerFullNeighborSampler", "GraphDataLoader",
           "GraphCollator", "negative_sampler"]
