"""dgl.data.AsNodePredDataset and AsGraphPredDataset (DGL 2.1's names and behaviour). AsNodePredDataset: a
one-graph dataset made a node-prediction task: the graph's own train / val / test masks, or, with split_ratio
(train, val, test fractions), a random split of the target type's nodes (numpy's RandomState(seed); DGL draws
from numpy's global generator) written to the masks; train_idx / val_idx / test_idx and num_classes.
AsGraphPredDataset: the same over the graphs of a (graph, label) dataset. Both cache the processed split in
save_path (a hash of the split and the dataset's name), so a second run reads the same split, as DGL's."""
from __future__ import annotations

import json
import os

import torch

from .._base import DGLError
from .._serialize import load_graphs, save_graphs, write_atomically
from .dgl_dataset import DGLDataset


class AsNodePredDataset(DGLDataset):
    def __init__(self, dataset, split_ratio=None, target_ntype=None, seed: int = 0, **kwargs):
        self.dataset, self.split_ratio, self.target_ntype, self.seed = dataset, split_ratio, target_ntype, seed
        super().__init__(dataset.name + "-as-nodepred", hash_key=(split_ratio, target_ntype, dataset.name, "nodepred",
                                                                  seed), **kwargs)

    def _files(self):
        return (os.path.join(self.save_path, f"graph_{self.hash}.bin"),
                os.path.join(self.save_path, f"info_{self.hash}.json"))

    def process(self) -> None:
        self.g = self.dataset[0].clone()
        data = self.g.nodes[self.target_ntype].data
        if "label" not in data:
            raise DGLError("AsNodePredDataset: the graph has no node labels ndata['label']")
        if self.split_ratio is None:
            missing = [m for m in ("train_mask", "val_mask", "test_mask") if m not in data]
            if missing:
                raise DGLError(f"AsNodePredDataset: the graph has no {missing}; pass split_ratio to make a split")
        else:
            import numpy as np

            ratios = [float(r) for r in self.split_ratio]
            if len(ratios) != 3 or min(ratios) < 0 or abs(sum(ratios) - 1.0) > 1e-6:
                raise DGLError(f"AsNodePredDataset: split_ratio must be 3 fractions summing to 1, got "
                               f"{self.split_ratio}")
            n = self.g.num_nodes(self.target_ntype)
            order = torch.from_numpy(np.random.RandomState(self.seed).permutation(n))
            n_train, n_val = int(n * ratios[0]), int(n * ratios[1])
            for name, part in (("train_mask", order[:n_train]), ("val_mask", order[n_train:n_train + n_val]),
                               ("test_mask", order[n_train + n_val:])):
                mask = torch.zeros(n, dtype=torch.bool)
                mask[part] = True
                data[name] = mask
        self.num_classes = getattr(self.dataset, "num_classes", None)
        if self.num_classes is None:
            self.num_classes = int(torch.unique(data["label"]).numel())
        self._set_split_index()

    def has_cache(self) -> bool:
        return all(os.path.isfile(f) for f in self._files())

    def save(self) -> None:
        graph_file, info_file = self._files()
        os.makedirs(self.save_path, exist_ok=True)
        save_graphs(graph_file, [self.g])
        info = {"split_ratio": self.split_ratio, "target_ntype": self.target_ntype, "num_classes": self.num_classes}
        write_atomically(info_file, lambda f: f.write(json.dumps(info).encode()))

    def load(self) -> None:
        graph_file, info_file = self._files()
        with open(info_file) as f:
            info = json.load(f)
        if info["split_ratio"] != (list(self.split_ratio) if self.split_ratio is not None else None):
            raise DGLError("AsNodePredDataset: the cached split differs from split_ratio; re-processing")
        self.num_classes = info["num_classes"]
        self.g = load_graphs(graph_file)[0][0]
        self._set_split_index()

    def _set_split_index(self) -> None:
        data = self.g.nodes[self.target_ntype].data
        self.train_idx, self.val_idx, self.test_idx = (torch.nonzero(data[m]).reshape(-1)
                                                       for m in ("train_mask", "val_mask", "test_mask"))

    def __getitem__(self, idx):
        if idx != 0:
            raise IndexError(f"AsNodePredDataset has one graph, asked for {idx}")
        return self.g

    def __len__(self) -> int:
        return 1


class AsGraphPredDataset(DGLDataset):
    """dgl.data.AsGraphPredDataset: a dataset of (graph, label) pairs made a graph-prediction task: its own
    split (get_idx_split(), or train_mask / val_mask / test_mask attributes), or with split_ratio a random split
    of the graphs (numpy's RandomState(seed)); train_idx / val_idx / test_idx, num_classes, num_tasks,
    node_feat_size / edge_feat_size. The split is cached in save_path, as DGL's."""

    def __init__(self, dataset, split_ratio=None, seed: int = 0, **kwargs):
        self.dataset, self.split_ratio, self.seed = dataset, split_ratio, seed
        super().__init__(dataset.name + "-as-graphpred", hash_key=(split_ratio, dataset.name, "graphpred", seed),
                         **kwargs)

    def _files(self):
        return (os.path.join(self.save_path, f"info_{self.hash}.json"),
                os.path.join(self.save_path, f"split_{self.hash}.pt"))

    def process(self) -> None:
        if self.split_ratio is None:
            if hasattr(self.dataset, "get_idx_split"):
                split = self.dataset.get_idx_split()
                self.train_idx, self.val_idx, self.test_idx = split["train"], split["valid"], split["test"]
            elif all(hasattr(self.dataset, m) for m in ("train_mask", "val_mask", "test_mask")):
                self.train_idx, self.val_idx, self.test_idx = (torch.nonzero(torch.as_tensor(getattr(self.dataset, m)))
                                                               .reshape(-1) for m in ("train_mask", "val_mask",
                                                                                       "test_mask"))
            else:
                raise DGLError("AsGraphPredDataset: the dataset has no train / val / test split; pass split_ratio")
        else:
            import numpy as np

            train, val = float(self.split_ratio[0]), float(self.split_ratio[1])
            n = len(self.dataset)
            order = torch.from_numpy(np.random.RandomState(self.seed).permutation(n))
            n_train, n_val = int(n * train), int(n * val)
            self.train_idx, self.val_idx = order[:n_train], order[n_train:n_train + n_val]
            self.test_idx = order[n_train + n_val:]
        self.num_classes = getattr(self.dataset, "num_classes", None)
        self.num_tasks = getattr(self.dataset, "num_tasks", 1)

    def has_cache(self) -> bool:
        return all(os.path.isfile(f) for f in self._files())

    def save(self) -> None:
        info_file, split_file = self._files()
        info = {"split_ratio": list(self.split_ratio) if self.split_ratio is not None else None,
                "num_tasks": self.num_tasks, "num_classes": self.num_classes}
        write_atomically(split_file, lambda f: torch.save({"train": self.train_idx, "val": self.val_idx,
                                                           "test": self.test_idx}, f))
        write_atomically(info_file, lambda f: f.write(json.dumps(info).encode()))

    def load(self) -> None:
        info_file, split_file = self._files()
        with open(info_file) as f:
            info = json.load(f)
        if info["split_ratio"] != (list(self.split_ratio) if self.split_ratio is not None else None):
            raise DGLError("AsGraphPredDataset: the cached split differs from split_ratio; re-processing")
        self.num_tasks, self.num_classes = info["num_tasks"], info["num_classes"]
        split = torch.load(split_file, weights_only=True)
        self.train_idx, self.val_idx, self.test_idx = split["train"], split["val"], split["test"]

    def __getitem__(self, idx):
        return self.dataset[idx]

    def __len__(self) -> int:
        return len(self.dataset)

    @property
    def node_feat_size(self):
        g = self[0][0]
        return g.ndata["feat"].shape[-1] if "feat" in g.ndata else None

    @property
    def edge_feat_size(self):
        g = self[0][0]
        return g.edata["feat"].shape[-1] if "feat" in g.edata else None


class AsLinkPredDataset(DGLDataset):
    """dgl.data.AsLinkPredDataset: a one-graph dataset made a link-prediction task: with split_ratio (train, val,
    test fractions of the edges, in a permutation from numpy's RandomState(seed)), train_graph (the graph of the
    training edges, every node, ndata['feat'] when the graph has it), val_edges and test_edges ((positive src,
    dst), (negative src, dst)) with neg_ratio negatives per positive (pairs that are no edge,
    sampling.global_uniform_negative_sampling); without split_ratio, the dataset's get_edge_split() (OGB's)
    in its two layouts. Cached in save_path, as DGL's."""

    def __init__(self, dataset, split_ratio=None, neg_ratio: int = 3, seed: int = 0, **kwargs):
        self.dataset, self.split_ratio, self.neg_ratio, self.seed = dataset, split_ratio, neg_ratio, seed
        self.g = dataset[0]
        self.num_nodes = self.g.num_nodes()
        super().__init__(dataset.name + "-as-linkpred", hash_key=(neg_ratio, split_ratio, dataset.name, "linkpred",
                                                                  seed), **kwargs)

    def _files(self):
        return (os.path.join(self.save_path, f"graph_{self.hash}.bin"),
                os.path.join(self.save_path, f"info_{self.hash}.json"))

    def process(self) -> None:
        if self.split_ratio is None:
            if not hasattr(self.dataset, "get_edge_split"):
                raise DGLError("AsLinkPredDataset: the dataset has no get_edge_split(); pass split_ratio")
            split = self.dataset.get_edge_split()
            self._train_graph = self.g
            self._val_edges, self._test_edges = (_ogb_edges(split[part]) for part in ("valid", "test"))
            return
        import numpy as np

        from ..sampling import global_uniform_negative_sampling

        n = self.g.num_edges()
        n_train, n_val = int(n * self.split_ratio[0]), int(n * self.split_ratio[1])
        src, dst = (t.to(torch.int64) for t in self.g.edges())
        order = torch.from_numpy(np.random.RandomState(self.seed).permutation(n))
        train, val, test = order[:n_train], order[n_train:n_train + n_val], order[n_train + n_val:]
        neg_src, neg_dst = (t.to(torch.int64) for t in
                            global_uniform_negative_sampling(self.g, self.neg_ratio * (len(val) + len(test))))
        cut = self.neg_ratio * len(val)
        self._val_edges = (src[val], dst[val]), (neg_src[:cut], neg_dst[:cut])
        self._test_edges = (src[test], dst[test]), (neg_src[cut:], neg_dst[cut:])
        from .._construct import graph

        self._train_graph = graph((src[train], dst[train]), num_nodes=self.num_nodes)
        if "feat" in self.g.ndata:
            self._train_graph.ndata["feat"] = self.g.ndata["feat"]

    def has_cache(self) -> bool:
        return all(os.path.isfile(f) for f in self._files())

    def save(self) -> None:
        graph_file, info_file = self._files()
        (vp, vn), (tp, tn) = self._val_edges, self._test_edges
        tensors = {"val_pos_src": vp[0], "val_pos_dst": vp[1], "val_neg_src": vn[0], "val_neg_dst": vn[1],
                   "test_pos_src": tp[0], "test_pos_dst": tp[1], "test_neg_src": tn[0], "test_neg_dst": tn[1]}
        save_graphs(graph_file, [self._train_graph], {k: torch.as_tensor(v) for k, v in tensors.items()})
        info = {"split_ratio": list(self.split_ratio) if self.split_ratio is not None else None,
                "neg_ratio": self.neg_ratio}
        write_atomically(info_file, lambda f: f.write(json.dumps(info).encode()))

    def load(self) -> None:
        graph_file, info_file = self._files()
        with open(info_file) as f:
            info = json.load(f)
        if info["split_ratio"] != (list(self.split_ratio) if self.split_ratio is not None else None) or \
                info["neg_ratio"] != self.neg_ratio:
            raise DGLError("AsLinkPredDataset: the cached split differs from the arguments; re-processing")
        graphs, t = load_graphs(graph_file)
        self._train_graph = graphs[0]
        self._val_edges = (t["val_pos_src"], t["val_pos_dst"]), (t["val_neg_src"], t["val_neg_dst"])
        self._test_edges = (t["test_pos_src"], t["test_pos_dst"]), (t["test_neg_src"], t["test_neg_dst"])

    @property
    def feat_size(self) -> int:
        return self._train_graph.ndata["feat"].shape[-1]

    @property
    def train_graph(self):
        return self._train_graph

    @property
    def val_edges(self):
        return self._val_edges

    @property
    def test_edges(self):
        return self._test_edges

    def __getitem__(self, idx):
        return self.g

    def __len__(self) -> int:
        return 1


def _ogb_edges(part: dict):
    """((pos src, dst), (neg src, dst)) from one part of OGB's get_edge_split()."""
    if "source_node" in part:
        src, dst, neg = (torch.as_tensor(part[k]) for k in ("source_node", "target_node", "target_node_neg"))
        return (src, dst), (src.repeat_interleave(neg.shape[-1]), neg.reshape(-1))
    pos, neg = torch.as_tensor(part["edge"]), torch.as_tensor(part["edge_neg"])
    return (pos[:, 0], pos[:, 1]), (neg[:, 0], neg[:, 1])
