"""dgl.nn.pytorch.factory: KNNGraph, SegmentedKNNGraph, RadiusGraph (topograph.nn's factory.py)."""
from ..factory import KNNGraph, RadiusGraph, SegmentedKNNGraph  # noqa: F401
