"""dgl.nn's graph-building modules (DGL 2.1's names): KNNGraph, SegmentedKNNGraph and RadiusGraph, modules over
topograph.knn_graph / segmented_knn_graph / radius_graph for models that build their graph from point features
(DGCNN, point clouds). As DGL 2.1's module, it also holds the functions knn_graph, segmented_knn_graph,
radius_graph (topograph's own, re-exported) and pairwise_squared_distance."""
from __future__ import annotations

import torch

from .._structure_ops import pairwise_squared_distance  # noqa: F401 (DGL 2.1's factory holds it)
from .._structure_ops import knn_graph, radius_graph, segmented_knn_graph


class KNNGraph(torch.nn.Module):
    def __init__(self, k: int):
        super().__init__()
        self.k = k

    def forward(self, x, algorithm: str = "bruteforce-blas", dist: str = "euclidean", exclude_self: bool = False):
        return knn_graph(x, self.k, algorithm=algorithm, dist=dist, exclude_self=exclude_self)


class SegmentedKNNGraph(torch.nn.Module):
    def __init__(self, k: int):
        super().__init__()
        self.k = k

    def forward(self, x, segs, algorithm: str = "bruteforce-blas", dist: str = "euclidean",
                exclude_self: bool = False):
        return segmented_knn_graph(x, self.k, segs, algorithm=algorithm, dist=dist, exclude_self=exclude_self)


class RadiusGraph(torch.nn.Module):
    def __init__(self, r: float, p: float = 2, self_loop: bool = False,
                 compute_mode: str = "donot_use_mm_for_euclid_dist"):
        super().__init__()
        self.r, self.p, self.self_loop, self.compute_mode = r, p, self_loop, compute_mode

    def forward(self, x, get_distances: bool = False):
        return radius_graph(x, self.r, self.p, self.self_loop, self.compute_mode, get_distances)
