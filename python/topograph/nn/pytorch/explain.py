"""dgl.nn.pytorch.explain: GNNExplainer (topograph.nn's explain.py), PGExplainer and HeteroPGExplainer
(pgexplainer.py)."""
from ..explain import GNNExplainer  # noqa: F401
from ..pgexplainer import HeteroPGExplainer, PGExplainer  # noqa: F401

__all__ = ["GNNExplainer", "PGExplainer", "HeteroPGExplainer"]
