"""topograph.dataloading, as dgl.dataloading: neighbour-sampled mini-batches of nodes (NeighborSampler alias
MultiLayerNeighborSampler and MultiLayerFullNeighborSampler, neighbor_sampler.py; DataLoader, dataloader.py),
mini-batches of whole graphs (GraphDataLoader, GraphCollator; graph_dataloader.py) and negative samplers for link prediction
(negative_sampler.Uniform / PerSourceUniform / GlobalUniform; negative_sampler.py) and as_edge_prediction_sampler
(edge_prediction.py), which turns a node-wise sampler into one over seed edges."""
from . import negative_sampler
from .graph_dataloader import GraphCollator, GraphDataLoader
from .edge_prediction import EdgePredictionSampler, as_edge_prediction_sampler
from .dataloader import DataLoader
from .neighbor_sampler import MultiLayerFullNeighborSampler, MultiLayerNeighborSampler, NeighborSampler

__all__ = ["DataLoader", "NeighborSampler", "MultiLayerNeighborSampler", "MultiLayerFullNeighborSampler",
           "GraphDataLoader", "GraphCollator", "negative_sampler", "as_edge_prediction_sampler", "EdgePredictionSampler"]
