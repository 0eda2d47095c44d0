"""dgl.nn.pytorch.softmax: edge_softmax (topograph.nn.functional's)."""
from ..functional import edge_softmax  # noqa: F401
