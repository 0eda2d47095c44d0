"""dgl.nn.pytorch.explain: GNNExplainer, HeteroGNNExplainer (topograph.nn's explain.py), PGExplainer and
HeteroPGExplainer (pgexplainer.py), SubgraphX and HeteroSubgraphX (subgraphx.py)."""
from ..explain import GNNExplainer, HeteroGNNExplainer  # noqa: F401
from ..pgexplainer import HeteroPGExplainer, PGExplainer  # noqa: F401
from ..subgraphx import HeteroSubgraphX, SubgraphX  # noqa: F401

__all__ = ["GNNExplainer", "HeteroGNNExplainer", "PGExplainer", "HeteroPGExplainer", "SubgraphX",
           "HeteroSubgraphX"]
