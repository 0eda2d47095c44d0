"""dgl.data's datasets made without downloads (DGL 2.1's): MiniGCDataset (DGL's graph classification tutorial: 8
kinds of small graphs) and KarateClubDataset (Zachary's karate club, two clubs). Both come from NetworkX's
generators through topograph.from_networkx, so NetworkX must be installed (an ImportError says so). GNNExplainer's
synthetic node classification sets (BAShapeDataset, BACommunityDataset, TreeCycleDataset, TreeGridDataset) and
SBMMixtureDataset are in explain_synthetic.py."""
from __future__ import annotations

import math
import os

import torch

from .._base import DGLError
from .._external import from_networkx
from .._serialize import load_graphs, save_graphs
from .._transform import add_self_loop
from .dgl_dataset import DGLDataset

__all__ = ["MiniGCDataset", "KarateClubDataset"]


def _networkx():
    try:
        import networkx
    except ImportError:
        raise ImportError("this dataset is made with NetworkX: pip install networkx") from None
    return networkx


class MiniGCDataset(DGLDataset):
    """num_graphs undirected graphs with self loops, num_graphs // 8 of each of cycle, star, wheel, lollipop,
    hypercube, grid, clique and (the rest) circular ladder, labels 0-7 in that order; each with a node count drawn
    from [min_num_v, max_num_v) (numpy's RandomState(seed), so the same seed gives DGL's graphs, without
    touching numpy's global generator as DGL's does). dataset[i] = (graph, label); cached as a graph file in
    save_path when save_graph, as DGL's."""

    def __init__(self, num_graphs: int, min_num_v: int, max_num_v: int, seed: int = 0, save_graph: bool = True,
                 force_reload: bool = False, verbose: bool = False, transform=None):
        if num_graphs < 1 or min_num_v < 4 or max_num_v <= min_num_v:
            raise DGLError(f"MiniGCDataset: needs num_graphs >= 1 and 4 <= min_num_v < max_num_v (a grid needs two "
                           f"rows and two columns), got {num_graphs}, {min_num_v}, {max_num_v}")
        self.num_graphs, self.min_num_v, self.max_num_v = num_graphs, min_num_v, max_num_v
        self.seed, self.save_graph = seed, save_graph
        super().__init__(name="minigc", hash_key=(num_graphs, min_num_v, max_num_v, seed), force_reload=force_reload,
                         verbose=verbose, transform=transform)

    def _file(self) -> str:
        return os.path.join(self.save_path, f"dgl_graph_{self.hash}.bin")

    def process(self) -> None:
        nx = _networkx()
        import numpy as np

        rng = np.random.RandomState(self.seed)
        size = lambda: int(rng.randint(self.min_num_v, self.max_num_v))  # noqa: E731

        def split(kind: str, n: int) -> int:  # DGL's randint(2, n // 2), which needs n >= 6
            if n < 6:
                raise DGLError(f"MiniGCDataset: drew a {kind} of {n} nodes, but a {kind} needs at least 6 (DGL's "
                               f"randint(2, n // 2) fails there too, with the same seed): use min_num_v >= 6")
            return int(rng.randint(2, n // 2))

        def lollipop():
            n = size()
            path = split("lollipop", n)
            return nx.lollipop_graph(m=n - path, n=path)

        def grid():
            n = size()
            rows = split("grid", n)
            return nx.convert_node_labels_to_integers(nx.grid_graph([rows, n // rows]))

        makers = [lambda: nx.cycle_graph(size()), lambda: nx.star_graph(size() - 1), lambda: nx.wheel_graph(size()),
                  lollipop, lambda: nx.convert_node_labels_to_integers(nx.hypercube_graph(int(math.log(size(), 2)))),
                  grid, lambda: nx.complete_graph(size()), lambda: nx.circular_ladder_graph(size() // 2)]
        per_kind = self.num_graphs // 8
        graphs, labels = [], []
        for label, make in enumerate(makers):
            count = per_kind if label < 7 else self.num_graphs - 7 * per_kind
            for _ in range(count):
                graphs.append(add_self_loop(from_networkx(make())))
                labels.append(label)
        self.graphs, self.labels = graphs, torch.tensor(labels, dtype=torch.int64)

    def has_cache(self) -> bool:
        return os.path.exists(self._file())

    def save(self) -> None:
        if self.save_graph:
            os.makedirs(self.save_path, exist_ok=True)
            save_graphs(self._file(), self.graphs, {"labels": self.labels})

    def load(self) -> None:
        self.graphs, labels = load_graphs(self._file())
        self.labels = labels["labels"]

    @property
    def num_classes(self) -> int:
        return 8

    def __len__(self) -> int:
        return len(self.graphs)

    def __getitem__(self, idx):
        g = self.graphs[idx]
        return (g if self._transform is None else self._transform(g)), self.labels[idx]


class KarateClubDataset(DGLDataset):
    """Zachary's karate club: one graph of 34 members and 156 directed edges (the 78 ties both ways, NetworkX's
    order), ndata['label'] 1 for the members who left with the officer, 0 for Mr. Hi's."""

    def __init__(self, transform=None):
        super().__init__(name="karate_club", transform=transform)

    def process(self) -> None:
        club = _networkx().karate_club_graph()
        g = from_networkx(club)
        g.ndata["label"] = torch.tensor([club.nodes[i]["club"] != "Mr. Hi" for i in club.nodes], dtype=torch.int64)
        self._graph = g

    @property
    def num_classes(self) -> int:
        return 2

    def __len__(self) -> int:
        return 1

    def __getitem__(self, idx):
        if idx != 0:
            raise IndexError(f"KarateClubDataset has one graph, asked for {idx}")
        return self._graph if self._transform is None else self._transform(self._graph)
