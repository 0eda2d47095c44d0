"""dgl.data's synthetic sets made without downloads (DGL 2.1's): GNNExplainer's node classification graphs
(BAShapeDataset, BACommunityDataset, TreeCycleDataset, TreeGridDataset: a base graph with motifs attached, the
motif nodes' labels being what an explainer should trace back to the motif's edges) and SBMMixtureDataset
(stochastic block model graphs with their line graphs, for community detection).

The same seed gives DGL's graphs, labels and features exactly: NetworkX's generators and NumPy's legacy
RandomState are called in DGL's order. DGL seeds NumPy's (and for BACommunityDataset Python's) global generators;
here a seed drives private generators of the same kind instead, so user code's own random streams are left alone.
seed=None uses the global generators, as DGL's does. The graphs are cached in save_path under a file named by the
arguments' hash (DGL's name ignores the arguments, so a changed seed there reloads the old graph)."""
from __future__ import annotations

import numbers
import os
import random

import torch

from .._base import DGLError
from .._construct import batch, graph
from .._external import from_scipy
from .._positional import _count, _real
from .._reorder import reorder_graph
from .._serialize import load_graphs, save_graphs
from .._structure_ops import line_graph
from .dgl_dataset import DGLDataset
from .synthetic import _networkx

__all__ = ["BAShapeDataset", "BACommunityDataset", "TreeCycleDataset", "TreeGridDataset", "SBMMixtureDataset",
           "SBMMixture"]


def _seed_arg(seed, what: str):
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0):
        raise DGLError(f"{what}: seed must be None or an int >= 0 (NumPy's seed range), got {seed!r}")
    return None if seed is None else int(seed)


def _numpy_rng(seed):
    """A RandomState seeded as np.random.seed(seed) seeds the global one (so its draws are DGL's), or, for None,
    NumPy's global generator itself, which DGL then draws from."""
    import numpy as np

    return np.random if seed is None else np.random.RandomState(seed)


def _perturbed_graph(src: list, dst: list, n: int, ratio: float, rng, what: str):
    """graph((src, dst)) with int(E * ratio) random edges u -> v appended (u != v, not already present), drawn
    as DGL's: a u, then a v, redrawn together until they fit. The noise edges keep an explainer from finding the
    motifs by structure alone."""
    num_real = len(src)
    max_ratio = (n * (n - 1) - num_real) / num_real
    if ratio > max_ratio:
        raise DGLError(f"{what}: perturb_ratio cannot exceed {max_ratio:.4f} (the number of node pairs not yet "
                       f"joined over the {num_real} edges), got {ratio}")
    present = set(zip(src, dst))  # a set stands for DGL's g.has_edges_between on the growing graph
    src, dst = list(src), list(dst)
    for _ in range(int(num_real * ratio)):
        while True:
            u, v = int(rng.randint(0, n)), int(rng.randint(0, n))
            if u != v and (u, v) not in present:
                break
        present.add((u, v))
        src.append(u)
        dst.append(v)
    return graph((torch.tensor(src, dtype=torch.int64), torch.tensor(dst, dtype=torch.int64)), num_nodes=n)


def _labelled(g, labels, feat):
    """g with ndata 'label' [N] int64 and 'feat', renumbered as DGL's reorder_graph(g, 'rcmk', 'dst') does it
    (ids then carry no hint of which nodes form a motif): reverse Cuthill-McKee nodes, then edges by destination
    in NumPy's default argsort, which DGL calls and which is not stable, so ties fall in its order, not in
    topograph's stable 'dst' order."""
    import numpy as np

    g.ndata["label"] = torch.tensor(labels, dtype=torch.int64) if isinstance(labels, list) else labels
    g.ndata["feat"] = feat
    g = reorder_graph(g, node_permute_algo="rcmk", edge_permute_algo="src", store_ids=False)
    by_dst = torch.from_numpy(np.argsort(g.edges()[1].numpy()))
    return reorder_graph(g, edge_permute_algo="custom", permute_config={"edges_perm": by_dst}, store_ids=False)


def _edge_lists(nx_graph):
    src, dst = map(list, zip(*nx_graph.edges()))
    return src, dst


def _ba_shapes(num_base: int, per_node: int, num_motifs: int, ratio: float, nx_seed, rng, what: str):
    """A Barabasi-Albert graph of num_base nodes (label 0) with num_motifs five-node houses attached (labels 1
    middle, 2 bottom, 3 top), perturbed; feat [N, 1] float32 ones, so that only structure tells the classes."""
    src, dst = _edge_lists(_networkx().barabasi_albert_graph(num_base, per_node, nx_seed))
    n, labels, spacing = num_base, [0] * num_base, num_base // num_motifs
    for motif in range(num_motifs):
        # square n, n+1, n+2, n+3 with the roof n+4 on n and n+1; n hangs from a base node
        for a, b in ((0, 1), (1, 2), (2, 3), (3, 0), (4, 0), (4, 1)):
            src.append(n + a)
            dst.append(n + b)
        labels += [1, 1, 2, 2, 3]
        src.append(n)
        dst.append(motif * spacing)
        n += 5
    g = _perturbed_graph(src, dst, n, ratio, rng, what)
    return _labelled(g, labels, torch.ones((n, 1), dtype=torch.float32))


class _OneGraphDataset(DGLDataset):
    """One graph, cached as a graph file in save_path named by the arguments' hash."""

    def _file(self) -> str:
        return os.path.join(self.save_path, f"{self.name}_dgl_graph_{self.hash}.bin")

    def has_cache(self) -> bool:
        return os.path.exists(self._file())

    def save(self) -> None:
        os.makedirs(self.save_path, exist_ok=True)
        save_graphs(self._file(), [self._graph])

    def load(self) -> None:
        self._graph = load_graphs(self._file())[0][0]

    def __len__(self) -> int:
        return 1

    def __getitem__(self, idx):
        if idx != 0:
            raise IndexError(f"{type(self).__name__} has one graph, asked for {idx}")
        return self._graph if self._transform is None else self._transform(self._graph)


class BAShapeDataset(_OneGraphDataset):
    """BA-SHAPES (GNNExplainer): a Barabasi-Albert graph of num_base_nodes nodes (each new node joined to
    num_base_edges_per_node earlier ones) with num_motifs houses hung from every (num_base_nodes // num_motifs)-th
    base node, then int(E * perturb_ratio) random edges. Directed edges as DGL's (each undirected tie once).
    ndata 'label' [N] int64: 0 base, 1 house middle, 2 bottom, 3 top; 'feat' [N, 1] float32 ones (the classes
    differ only in structure). N = num_base_nodes + 5 * num_motifs."""

    def __init__(self, num_base_nodes: int = 300, num_base_edges_per_node: int = 5, num_motifs: int = 80,
                 perturb_ratio: float = 0.01, seed=None, raw_dir=None, force_reload: bool = False,
                 verbose: bool = True, transform=None):
        what = "BAShapeDataset"
        self.num_base_nodes = _count(num_base_nodes, f"{what}: num_base_nodes", 2)
        self.num_base_edges_per_node = _count(num_base_edges_per_node, f"{what}: num_base_edges_per_node", 1)
        if self.num_base_edges_per_node >= self.num_base_nodes:
            raise DGLError(f"{what}: num_base_edges_per_node must be below num_base_nodes, got "
                           f"{num_base_edges_per_node} >= {num_base_nodes}")
        self.num_motifs = _count(num_motifs, f"{what}: num_motifs", 1)
        self.perturb_ratio, self.seed = _real(perturb_ratio, f"{what}: perturb_ratio", 0), _seed_arg(seed, what)
        super().__init__(name="BA-SHAPES", raw_dir=raw_dir, force_reload=force_reload, verbose=verbose,
                         transform=transform, hash_key=(self.num_base_nodes, self.num_base_edges_per_node,
                                                        self.num_motifs, self.perturb_ratio, self.seed))

    def process(self) -> None:
        self._graph = _ba_shapes(self.num_base_nodes, self.num_base_edges_per_node, self.num_motifs,
                                 self.perturb_ratio, self.seed, _numpy_rng(self.seed), "BAShapeDataset")

    @property
    def num_classes(self) -> int:
        return 4


class BACommunityDataset(_OneGraphDataset):
    """BA-COMMUNITY (GNNExplainer): two BA-SHAPES graphs (BAShapeDataset's arguments; the second one's labels
    shifted by 4) joined by num_inter_edges random edges from the first to the second. ndata 'label' [N] int64
    (0-7), 'feat' [N, 10] float64 (DGL's dtype): Gaussian, columns 0-1 of mean -1 in the first graph and +1 in the
    second (variance 0.5), the other 8 standard normal, so the community shows in the features and the role in
    the structure. N = 2 * (num_base_nodes + 5 * num_motifs)."""

    def __init__(self, num_base_nodes: int = 300, num_base_edges_per_node: int = 4, num_motifs: int = 80,
                 perturb_ratio: float = 0.01, num_inter_edges: int = 350, seed=None, raw_dir=None,
                 force_reload: bool = False, verbose: bool = True, transform=None):
        what = "BACommunityDataset"
        self.num_base_nodes = _count(num_base_nodes, f"{what}: num_base_nodes", 2)
        self.num_base_edges_per_node = _count(num_base_edges_per_node, f"{what}: num_base_edges_per_node", 1)
        if self.num_base_edges_per_node >= self.num_base_nodes:
            raise DGLError(f"{what}: num_base_edges_per_node must be below num_base_nodes, got "
                           f"{num_base_edges_per_node} >= {num_base_nodes}")
        self.num_motifs = _count(num_motifs, f"{what}: num_motifs", 1)
        self.perturb_ratio = _real(perturb_ratio, f"{what}: perturb_ratio", 0)
        self.num_inter_edges = _count(num_inter_edges, f"{what}: num_inter_edges", 0)
        self.seed = _seed_arg(seed, what)
        super().__init__(name="BA-COMMUNITY", raw_dir=raw_dir, force_reload=force_reload, verbose=verbose,
                         transform=transform, hash_key=(self.num_base_nodes, self.num_base_edges_per_node,
                                                        self.num_motifs, self.perturb_ratio,
                                                        self.num_inter_edges, self.seed))

    def process(self) -> None:
        import numpy as np

        # DGL seeds Python's and NumPy's global generators once, then both halves draw from them in turn
        py_rng = None if self.seed is None else random.Random(self.seed)
        rng = _numpy_rng(self.seed)
        halves = [_ba_shapes(self.num_base_nodes, self.num_base_edges_per_node, self.num_motifs, self.perturb_ratio,
                             py_rng, rng, "BACommunityDataset") for _ in range(2)]
        g = batch(halves)
        half = g.num_nodes() // 2
        src = rng.randint(0, half, (self.num_inter_edges,))
        dst = rng.randint(half, 2 * half, (self.num_inter_edges,))
        g.add_edges(torch.from_numpy(src).to(torch.int64), torch.from_numpy(dst).to(torch.int64))
        labels = torch.cat([halves[0].ndata["label"], halves[1].ndata["label"] + 4])
        feats = [rng.multivariate_normal(np.array([mean] * 2 + [0.0] * 8), np.diag([0.5] * 2 + [1.0] * 8), half)
                 for mean in (-1.0, 1.0)]
        self._graph = _labelled(g, labels, torch.from_numpy(np.concatenate(feats)))

    @property
    def num_classes(self) -> int:
        return 8


class _TreeMotifDataset(_OneGraphDataset):
    """A balanced binary tree of height tree_height (label 0) with num_motifs motifs (label 1) hung from every
    (tree nodes // num_motifs)-th tree node, perturbed; feat [N, 1] float32 ones."""

    def __init__(self, name: str, tree_height, num_motifs, motif_size: int, perturb_ratio, seed, raw_dir,
                 force_reload: bool, verbose: bool, transform):
        """The arguments both sets share, checked (motif_size: the subclass's own, checked by it); the cache key
        holds them all."""
        what = type(self).__name__
        self.tree_height = _count(tree_height, f"{what}: tree_height", 1)
        self.num_motifs = _count(num_motifs, f"{what}: num_motifs", 1)
        self.perturb_ratio, self.seed = _real(perturb_ratio, f"{what}: perturb_ratio", 0), _seed_arg(seed, what)
        super().__init__(name=name, raw_dir=raw_dir, force_reload=force_reload, verbose=verbose, transform=transform,
                         hash_key=(self.tree_height, self.num_motifs, motif_size, self.perturb_ratio, self.seed))

    def _tree(self):
        nx = _networkx()
        tree = nx.balanced_tree(r=2, h=self.tree_height)
        src, dst = _edge_lists(tree)
        n = nx.number_of_nodes(tree)
        return src, dst, n, n // self.num_motifs

    def _finish(self, src, dst, n, labels, rng) -> None:
        g = _perturbed_graph(src, dst, n, self.perturb_ratio, rng, type(self).__name__)
        self._graph = _labelled(g, labels, torch.ones((n, 1), dtype=torch.float32))

    @property
    def num_classes(self) -> int:
        return 2


class TreeCycleDataset(_TreeMotifDataset):
    """TREE-CYCLES (GNNExplainer): a balanced binary tree of height tree_height (2^(tree_height+1) - 1 nodes,
    label 0) with num_motifs directed cycles of cycle_size nodes (label 1), each joined to the tree by an edge
    from its first node, and with probability 1/2 by a second edge (cycle node 1-3 to one of the 3 nodes after
    the anchor), then int(E * perturb_ratio) random edges. 'feat' [N, 1] float32 ones.

    DGL's motif is always a 6-cycle whatever cycle_size (its labels count cycle_size nodes per motif, so other
    sizes break its graph); here it has cycle_size nodes, the same graph for the default 6."""

    def __init__(self, tree_height: int = 8, num_motifs: int = 60, cycle_size: int = 6, perturb_ratio: float = 0.01,
                 seed=None, raw_dir=None, force_reload: bool = False, verbose: bool = True, transform=None):
        # >= 4: the second tie starts at cycle node 1, 2 or 3, which must lie in the same cycle
        self.cycle_size = _count(cycle_size, "TreeCycleDataset: cycle_size", 4)
        super().__init__("TREE-CYCLES", tree_height, num_motifs, self.cycle_size, perturb_ratio, seed, raw_dir,
                         force_reload, verbose, transform)

    def process(self) -> None:
        rng = _numpy_rng(self.seed)
        src, dst, n, spacing = self._tree()
        labels, size = [0] * n, self.cycle_size
        for motif in range(self.num_motifs):
            src += [n + i for i in range(size)]
            dst += [n + (i + 1) % size for i in range(size)]
            labels += [1] * size
            anchor = motif * spacing
            src.append(n)
            dst.append(anchor)
            if rng.random() > 0.5:
                a, b = int(rng.randint(1, 4)), int(rng.randint(1, 4))
                src.append(n + a)
                dst.append(anchor + b)
            n += size
        self._finish(src, dst, n, labels, rng)


class TreeGridDataset(_TreeMotifDataset):
    """TREE-GRIDS (GNNExplainer): a balanced binary tree of height tree_height (2^(tree_height+1) - 1 nodes,
    label 0) with num_motifs grid_size x grid_size grids (NetworkX's grid_graph, each tie once; label 1), each
    joined by one edge from its first node to the tree, then int(E * perturb_ratio) random edges (DGL's default
    ratio here is 0.1). 'feat' [N, 1] float32 ones."""

    def __init__(self, tree_height: int = 8, num_motifs: int = 80, grid_size: int = 3, perturb_ratio: float = 0.1,
                 seed=None, raw_dir=None, force_reload: bool = False, verbose: bool = True, transform=None):
        self.grid_size = _count(grid_size, "TreeGridDataset: grid_size", 2)
        super().__init__("TREE-GRIDS", tree_height, num_motifs, self.grid_size, perturb_ratio, seed, raw_dir,
                         force_reload, verbose, transform)

    def process(self) -> None:
        nx = _networkx()
        rng = _numpy_rng(self.seed)
        src, dst, n, spacing = self._tree()
        grid = nx.convert_node_labels_to_integers(nx.grid_graph([self.grid_size, self.grid_size]), first_label=0)
        grid_src, grid_dst = _edge_lists(grid)
        labels, size = [0] * n, grid.number_of_nodes()
        for motif in range(self.num_motifs):
            src += [n + u for u in grid_src]
            dst += [n + v for v in grid_dst]
            labels += [1] * size
            src.append(n)
            dst.append(motif * spacing)
            n += size
        self._finish(src, dst, n, labels, rng)


def _sbm_adjacency(n_blocks: int, block_size: int, p: float, q: float, rng):
    """The symmetric SciPy adjacency of a stochastic block model, as DGL's sbm: each block pair i <= j drawn by
    scipy.sparse.random at density p / n (i == j) or q / n, the upper triangle mirrored, so that p and q are the
    expected degrees."""
    import numpy as np
    import scipy.sparse

    n = n_blocks * block_size
    p, q = p / n, q / n
    rng = np.random.RandomState() if rng is None else rng
    rows, cols = [], []
    for i in range(n_blocks):
        for j in range(i, n_blocks):
            block = scipy.sparse.random(block_size, block_size, p if i == j else q, random_state=rng,
                                        data_rvs=lambda k: np.ones(k))
            rows.append(block.row + i * block_size)
            cols.append(block.col + j * block_size)
    rows, cols = np.hstack(rows), np.hstack(cols)
    a = scipy.sparse.coo_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(n, n))
    return scipy.sparse.triu(a) + scipy.sparse.triu(a, 1).transpose()


class SBMMixtureDataset(DGLDataset):
    """Symmetric stochastic block model graphs (Appendix C of Chen et al., community detection with line graph
    GNNs): n_graphs graphs of n_nodes nodes in n_communities equal blocks. dataset[i] = (graph, its line graph
    without backtracking, the graph's in-degrees [n_nodes] float32, the line graph's [E] float32, the graph's
    edge sources [E] (DGL's pm_pd)); collate_fn batches a list of those for a DataLoader.

    pq: a list of n_graphs (p, q) expected degrees, or 'Appendix_C': q ~ U(0, avg_deg - sqrt(avg_deg)),
    p = k * avg_deg - q, swapped with probability 1/2. As DGL's, those draws come from NumPy's and Python's
    global generators; rng (a numpy RandomState; None: a fresh unseeded one per graph) draws the edges. DGL's
    never hands rng on (its graphs come from fresh unseeded generators whatever rng), so here a seeded rng gives
    what DGL's sbm gives with it. Unlike DGL's nothing is cached: DGL names its cache by rng's repr, so a given
    rng is never found again and rng=None reloads the first random graphs."""

    def __init__(self, n_graphs: int, n_nodes: int, n_communities: int, k: int = 2, avg_deg: int = 3,
                 pq="Appendix_C", rng=None):
        what = "SBMMixtureDataset"
        self._n_graphs = _count(n_graphs, f"{what}: n_graphs", 1)
        self._n_nodes = _count(n_nodes, f"{what}: n_nodes", 1)
        self._n_communities = _count(n_communities, f"{what}: n_communities", 1)
        if self._n_nodes % self._n_communities:
            raise DGLError(f"{what}: n_nodes must be a multiple of n_communities, got {n_nodes} and "
                           f"{n_communities}")
        self._block_size = self._n_nodes // self._n_communities
        if isinstance(pq, str):
            if pq != "Appendix_C":
                raise DGLError(f"{what}: pq must be 'Appendix_C' or a list of (p, q) pairs, got {pq!r}")
        elif not isinstance(pq, (list, tuple)) or len(pq) != self._n_graphs:
            raise DGLError(f"{what}: pq must be 'Appendix_C' or a list of n_graphs={n_graphs} (p, q) pairs, got "
                           f"{pq!r}")
        self._k, self._avg_deg, self._pq, self._rng = k, avg_deg, pq, rng
        super().__init__(name="sbmmixture", hash_key=(n_graphs, n_nodes, n_communities, k, avg_deg, pq, rng))

    def _appendix_c(self):
        import math

        import numpy as np

        q = np.random.uniform(0, self._avg_deg - math.sqrt(self._avg_deg))
        p = self._k * self._avg_deg - q
        return (p, q) if random.random() < 0.5 else (q, p)

    def process(self) -> None:
        pq = [self._appendix_c() for _ in range(self._n_graphs)] if isinstance(self._pq, str) else self._pq
        self._graphs = [from_scipy(_sbm_adjacency(self._n_communities, self._block_size, *x, self._rng))
                        for x in pq]
        self._line_graphs = [line_graph(g, backtracking=False) for g in self._graphs]
        self._graph_degrees = [g.in_degrees().float() for g in self._graphs]
        self._line_graph_degrees = [lg.in_degrees().float() for lg in self._line_graphs]
        self._pm_pds = [g.edges()[0] for g in self._graphs]

    def __len__(self) -> int:
        return len(self._graphs)

    def __getitem__(self, idx):
        return (self._graphs[idx], self._line_graphs[idx], self._graph_degrees[idx], self._line_graph_degrees[idx],
                self._pm_pds[idx])

    def collate_fn(self, x):
        """A list of items as one: the graphs and the line graphs batched, the degrees concatenated (numpy
        arrays, as DGL's), the edge sources concatenated with item i's shifted by i * n_nodes (node ids in the
        batched graph)."""
        import numpy as np

        g, lg, deg_g, deg_lg, pm_pd = zip(*x)
        return (batch(g), batch(lg), np.concatenate(deg_g, axis=0), np.concatenate(deg_lg, axis=0),
                np.concatenate([ids + i * self._n_nodes for i, ids in enumerate(pm_pd)], axis=0))


SBMMixture = SBMMixtureDataset  # DGL's other name
