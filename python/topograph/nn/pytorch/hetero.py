"""dgl.nn.pytorch.hetero: HeteroGraphConv, HeteroLinear and HeteroEmbedding (topograph.nn's hetero.py)."""
from ..hetero import HeteroEmbedding, HeteroGraphConv, HeteroLinear  # noqa: F401
