"""dgl.nn.pytorch.hetero: HeteroGraphConv (topograph.nn's hetero.py)."""
from ..hetero import HeteroGraphConv  # noqa: F401
