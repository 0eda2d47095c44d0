"""dgl.nn.pytorch.sparse_emb: NodeEmbedding (topograph.nn's sparse_emb.py)."""
from ..sparse_emb import NodeEmbedding  # noqa: F401
