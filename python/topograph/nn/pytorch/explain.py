"""dgl.nn.pytorch.explain: GNNExplainer (topograph.nn's explain.py)."""
from ..explain import GNNExplainer  # noqa: F401
