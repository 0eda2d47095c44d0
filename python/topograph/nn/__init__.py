"""topograph.nn: as dgl.nn, the functional ops (topograph.nn.functional.edge_softmax) and the layers as
torch.nn.Modules (GraphMultiHeadAttention)."""
from . import functional
from .attention import GraphMultiHeadAttention

__all__ = ["functional", "GraphMultiHeadAttention"]
