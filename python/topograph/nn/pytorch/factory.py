"""dgl.nn.pytorch.factory: KNNGraph, SegmentedKNNGraph, RadiusGraph and DGL 2.1's functions there, knn_graph,
segmented_knn_graph, radius_graph and pairwise_squared_distance (topograph.nn's factory.py)."""
from ..factory import (KNNGraph, RadiusGraph, SegmentedKNNGraph, knn_graph,  # noqa: F401
                       pairwise_squared_distance, radius_graph, segmented_knn_graph)
