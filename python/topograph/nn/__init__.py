"""topograph.nn: as dgl.nn, the functional ops first (topograph.nn.functional.edge_softmax)."""
from . import functional

__all__ = ["functional"]
