"""topograph.nn: as dgl.nn, the functional ops (topograph.nn.functional.edge_softmax) and the layers as
torch.nn.Modules: GraphMultiHeadAttention (Topograph's fused attention) and DGL's GraphConv, SAGEConv and
GATConv."""
from . import functional
from .attention import GraphMultiHeadAttention
from .conv import GATConv, GraphConv, SAGEConv

__all__ = ["functional", "GraphMultiHeadAttention", "GraphConv", "SAGEConv", "GATConv"]
