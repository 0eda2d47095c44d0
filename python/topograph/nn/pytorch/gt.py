"""dgl.nn.pytorch.gt: the graph transformer blocks of topograph.nn (graph_transformer.py)."""
from ..graph_transformer import (BiasedMHA, DegreeEncoder, EGTLayer, GraphormerLayer, LapPosEncoder,  # noqa: F401
                                 PathEncoder, SpatialEncoder, SpatialEncoder3d)
