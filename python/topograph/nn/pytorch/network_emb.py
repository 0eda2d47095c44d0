"""dgl.nn.pytorch.network_emb: DeepWalk, MetaPath2Vec (topograph.nn's network_emb.py)."""
from ..network_emb import DeepWalk, MetaPath2Vec  # noqa: F401
