"""dgl.nn.pytorch.link: EdgePredictor, TransE, TransR (topograph.nn's link.py)."""
from ..link import EdgePredictor, TransE, TransR  # noqa: F401
