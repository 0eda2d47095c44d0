"""dgl.data.AsNodePredDataset (DGL 2.1's names and behaviour): a one-graph dataset made a node-prediction task:
the graph's own train / val / test masks, or, with split_ratio (train, val, test fractions), a random split of
the target type's nodes (numpy's RandomState(seed) permutation; DGL draws from numpy's global generator),
written to the masks; train_idx / val_idx / test_idx and num_classes. The processed graph and its split are
cached in save_path (hash of the split and the dataset's name), so a second run reads the same split, as
DGL's."""
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
