"""dgl.nn.pytorch.explain: GNNExplainer, HeteroGNNExplainer (topograph.nn's explain.py), PGExplainer and
HeteroPGExplainer (pgexplainer.py)."""
from ..explain import GNNExplainer, HeteroGNNExplainer  # noqa: F401
from ..pgexplainer import HeteroPGExplainer, PGExplainer  # noqa: F401

__all__ = ["GNNExplainer", "HeteroGNNExplainer", "PGExplainer", "HeteroPGExplainer"]
