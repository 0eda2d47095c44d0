"""dgl.nn.functional's names: edge_softmax over Topograph's kernel (forward and backward)."""
from ..ops import edge_softmax

__all__ = ["edge_softmax"]
