"""dgl.data's citation graphs (CoraGraphDataset, CiteseerGraphDataset, their base CitationGraphDataset,
load_cora / load_citeseer) read from local Planetoid .npz files. Nothing is ever downloaded.

Where the file comes from: ``raw_dir`` is a folder holding ``cora.npz`` / ``citeseer.npz``; without it,
``$TOPOGRAPH_DATA_DIR/planetoid/cora.npz`` (the layout of ../shared/data). Neither there, or the file missing:
a DGLError saying what to set. The file layout is ../shared/data/planetoid/SOURCE.txt's: edge_index int64 [2, E],
the features as CSR (x_indptr int64 [N + 1], x_indices int64 [nnz], x_data float32 [nnz], x_shape int64 [2] =
(N, F)), y int64 [N], train_mask / val_mask / test_mask bool [N]. Every array's dtype, shape and range is
checked against the others before use; anything else is a DGLError naming the file and the array.

The graph is DGL's: ndata 'feat' float32 [N, F] row-normalised (each row times the reciprocal of its sum, as
DGL's _preprocess_features: a row summing to 0 stays 0; equal to DGL's computed in float64, as its Citeseer is,
and within one float32 step of its float32 path, its Cora's), 'label' int64 [N], 'train_mask' / 'val_mask' /
'test_mask' bool [N]; ``num_classes`` 7 (Cora) / 6 (Citeseer), the width of the raw one-hot labels, as DGL's.
Citeseer's 15 isolated test-range nodes without features have zero feature rows, label 0 (DGL takes the argmax
of their all-zero one-hot row, which is 0, and the file holds 0 too) and are in no mask, as in DGL.

Unlike DGL 2.1:
- The edges are the file's: symmetrised, de-duplicated, self loops dropped, sorted by (dst, src). DGL builds
  from networkx's dict of lists and keeps the raw graph's self loops, so its Citeseer has 9,228 edges (124 self
  loops more) where this one has 9,104; Cora has 10,556 in both. The edge order differs (DGL's is networkx's):
  compare edge sets, not edge ids.
- Nothing is cached: each construction reads the .npz (a fraction of a second), so ``force_reload`` changes
  nothing; there is no ``save`` / ``load`` / ``download`` / ``save_dir``. ``raw_path`` is the .npz file.
- ``reverse_edge=False`` (DGL: each undirected edge once, in networkx's direction) and ``reorder=True`` (DGL's
  reverse Cuthill-McKee node order) are not implemented: a DGLError (also a NotImplementedError) rather than a
  graph that silently differs.
- ``ds[i]`` for i other than 0 is an IndexError (DGL asserts), so ``for g in ds`` ends after the one graph.
- ``name`` is DGL's ('cora_v2', 'citeseer'); there is no Pubmed file, so no PubmedGraphDataset.
"""
from __future__ import annotations

import operator
import os
from typing import Callable, Dict, Optional

import torch

from .._base import DGLError
from .._construct import graph as _make_graph
from ._local_files import ENV_VAR, LocalFileProperties, data_folder

# name -> (file, DGL's dataset name, classes: the width of the raw one-hot labels)
_DATASETS = {"cora": ("cora.npz", "cora_v2", 7), "citeseer": ("citeseer.npz", "citeseer", 6)}
_LAYOUT = ("the Planetoid .npz layout: edge_index int64 [2, E], x_indptr int64 [N + 1], x_indices int64 [nnz], "
           "x_data float32 [nnz], x_shape int64 [2], y int64 [N], train_mask / val_mask / test_mask bool [N]")


class _NotImplementedDGLError(DGLError, NotImplementedError):
    """An argument DGL accepts whose behaviour is not implemented here: caught as DGLError, ValueError or
    NotImplementedError alike."""


def _locate(cls_name: str, file: str, raw_dir) -> str:
    """The .npz path: raw_dir/file, else $TOPOGRAPH_DATA_DIR/planetoid/file; a DGLError when neither is given or
    the file is not there (never a download)."""
    folder, source = data_folder(cls_name, raw_dir, "planetoid", file)
    path = os.path.join(folder, file)
    if os.path.exists(path) and not os.path.isfile(path):
        raise DGLError(f"{cls_name}: {path} (from {source}) is not a file; expected {file} ({_LAYOUT})")
    if not os.path.isfile(path):
        raise DGLError(f"{cls_name}: {path} not found (from {source}); topograph downloads nothing: put {file} "
                       f"({_LAYOUT}) there, or pass raw_dir / set {ENV_VAR} to where it is")
    return path


def _read_planetoid(path: str, classes: int, cls_name: str) -> Dict[str, torch.Tensor]:
    """The checked arrays of a Planetoid .npz as torch tensors: src, dst [E], feat [N, F] (dense, not normalised),
    label [N] and the three masks [N]. Every malformed array is a DGLError naming the file and the array."""
    try:
        import numpy as np
    except ImportError as err:  # numpy is torch's companion, but not a dependency of this package
        raise ImportError(f"{cls_name}: reading {path} needs numpy (pip install numpy)") from err

    def fail(what: str, cause: Optional[BaseException] = None):
        raise DGLError(f"{cls_name}: {path}: {what} ({_LAYOUT})") from cause

    try:
        archive = np.load(path, allow_pickle=False)
    except Exception as err:  # not a zip, truncated, a pickle, unreadable: whatever numpy / zipfile raise
        fail(f"not a readable .npz archive ({type(err).__name__}: {err})", err)
    if not isinstance(archive, np.lib.npyio.NpzFile):  # a bare .npy reads as one array
        fail("not a .npz archive of named arrays (it holds a single array)")

    def array(key: str, dtype: str, ndim: int):
        """archive[key] as a native-order, contiguous array of dtype with ndim dims."""
        if key not in archive.files:
            fail(f"array '{key}' is missing (it holds {sorted(archive.files)})")
        try:
            a = archive[key]
        except Exception as err:  # a corrupt member: bad deflate stream, short data, an object array
            fail(f"array '{key}' cannot be read ({type(err).__name__}: {err})", err)
        if a.dtype.newbyteorder("=") != np.dtype(dtype):  # any byte order of the right type is taken
            fail(f"array '{key}' has dtype {a.dtype}, expected {dtype}")
        if a.ndim != ndim:
            fail(f"array '{key}' has shape {list(a.shape)}, expected {ndim} dims")
        return np.ascontiguousarray(a, dtype=dtype)

    def expect_shape(key: str, a, shape):
        if tuple(a.shape) != tuple(shape):
            fail(f"array '{key}' has shape {list(a.shape)}, expected {list(shape)}")

    def expect_range(key: str, a, low: int, high: int, meaning: str):
        """Every value of integer array a in [low, high); else the first one outside, by position."""
        bad = np.flatnonzero((a.ravel() < low) | (a.ravel() >= high))
        if bad.size:
            where = np.unravel_index(bad[0], a.shape)
            fail(f"array '{key}'{list(int(i) for i in where)} = {a.ravel()[bad[0]]} is outside [{low}, {high}) "
                 f"({meaning})")

    with archive:
        shape = array("x_shape", "int64", 1)
        expect_shape("x_shape", shape, (2,))
        n, f = int(shape[0]), int(shape[1])
        if n < 0 or f < 0:
            fail(f"array 'x_shape' = {shape.tolist()} holds a negative size")
        edges = array("edge_index", "int64", 2)
        if edges.shape[0] != 2:
            fail(f"array 'edge_index' has shape {list(edges.shape)}, expected [2, E]")
        expect_range("edge_index", edges, 0, n, f"node ids, N = {n} from x_shape")
        indptr = array("x_indptr", "int64", 1)
        expect_shape("x_indptr", indptr, (n + 1,))
        indices = array("x_indices", "int64", 1)
        nnz = indices.shape[0]
        if indptr[0] != 0 or indptr[-1] != nnz:
            fail(f"array 'x_indptr' runs from {indptr[0]} to {indptr[-1]}, expected 0 to nnz = {nnz} (the length "
                 f"of x_indices)")
        steps = np.diff(indptr)
        if (steps < 0).any():
            row = int(np.flatnonzero(steps < 0)[0])
            fail(f"array 'x_indptr' decreases at row {row} ({indptr[row]} -> {indptr[row + 1]})")
        expect_range("x_indices", indices, 0, f, f"feature columns, F = {f} from x_shape")
        values = array("x_data", "float32", 1)
        expect_shape("x_data", values, (nnz,))
        if not np.isfinite(values).all():
            fail(f"array 'x_data'[{int(np.flatnonzero(~np.isfinite(values))[0])}] is not finite")
        label = array("y", "int64", 1)
        expect_shape("y", label, (n,))
        expect_range("y", label, 0, classes, f"class ids of this data set's {classes} classes")
        masks = {}
        for split in ("train_mask", "val_mask", "test_mask"):
            masks[split] = array(split, "bool", 1)
            expect_shape(split, masks[split], (n,))

    # The CSR densified [N, F]: row r holds x_data[indptr[r]:indptr[r + 1]] at columns x_indices[...]; a
    # repeated (row, column) adds up, as scipy's todense (which DGL's normalisation runs on) does.
    try:
        feat = torch.zeros(n, f)
    except (RuntimeError, MemoryError) as err:  # a bogus x_shape: the dense rows do not fit in memory
        fail(f"array 'x_shape' = [{n}, {f}]: the dense float32 features ({n * f * 4 / 2**30:.1f} GiB) cannot be "
             f"allocated", err)
    rows = torch.repeat_interleave(torch.arange(n), torch.from_numpy(steps))
    feat.index_put_((rows, torch.from_numpy(indices)), torch.from_numpy(values), accumulate=True)
    out = {"src": torch.from_numpy(edges[0].copy()), "dst": torch.from_numpy(edges[1].copy()), "feat": feat,
           "label": torch.from_numpy(label)}
    out.update({k: torch.from_numpy(v) for k, v in masks.items()})
    return out


def row_normalize(feat: torch.Tensor) -> torch.Tensor:
    """Each row of feat [N, F] times the reciprocal of its sum, in feat's dtype, as DGL's _preprocess_features
    (diag(1 / rowsum) @ X); a row summing to 0 stays 0. torch's reciprocal is correctly rounded, as DGL's is when
    it runs in float64 (Citeseer); numpy's float32 power(x, -1), DGL's float32 path (Cora), can be one step off."""
    total = feat.sum(1, keepdim=True)  # [N, 1]
    inverse = torch.where(total == 0, torch.zeros_like(total), 1.0 / total)
    return feat * inverse


class CitationGraphDataset(LocalFileProperties):
    """dgl.data.CitationGraphDataset(name, raw_dir=None, force_reload=False, verbose=True, reverse_edge=True,
    transform=None, reorder=False) for name 'cora' or 'citeseer' (see the module docstring for where the file
    comes from and what differs from DGL). One graph: ``ds[0]``, passed through ``transform`` on every access
    when one is given (the stored graph itself otherwise)."""

    def __init__(self, name: str, raw_dir=None, force_reload: bool = False, verbose: bool = True,
                 reverse_edge: bool = True, transform: Optional[Callable] = None, reorder: bool = False):
        cls_name = type(self).__name__
        key = str(name).lower()
        if key not in _DATASETS:
            raise DGLError(f"{cls_name}: name must be 'cora' or 'citeseer' (the Planetoid files topograph reads; "
                           f"no Pubmed), got {name!r}")
        if not reverse_edge:
            raise _NotImplementedDGLError(
                f"{cls_name}: reverse_edge=False is not implemented (DGL keeps each undirected edge once in "
                f"networkx's direction); the graph here always has both directions")
        if reorder:
            raise _NotImplementedDGLError(
                f"{cls_name}: reorder=True (DGL's reverse Cuthill-McKee node order) is not implemented")
        if transform is not None and not callable(transform):
            raise DGLError(f"{cls_name}: transform must be callable, got {type(transform).__name__}")
        file, self._name, self._num_classes = _DATASETS[key]
        self._raw_path = _locate(cls_name, file, raw_dir)
        self._raw_dir = os.path.dirname(self._raw_path)
        self._force_reload, self._verbose, self._reverse_edge = force_reload, verbose, reverse_edge
        self._transform = transform

        arrays = _read_planetoid(self._raw_path, self._num_classes, cls_name)
        g = _make_graph((arrays["src"], arrays["dst"]), num_nodes=arrays["feat"].shape[0])
        g.ndata["train_mask"] = arrays["train_mask"]
        g.ndata["val_mask"] = arrays["val_mask"]
        g.ndata["test_mask"] = arrays["test_mask"]
        g.ndata["label"] = arrays["label"]
        g.ndata["feat"] = row_normalize(arrays["feat"])
        self._g = g
        if verbose:
            print("Finished data loading and preprocessing.")
            print(f"  NumNodes: {g.num_nodes()}")
            print(f"  NumEdges: {g.num_edges()}")
            print(f"  NumFeats: {g.ndata['feat'].shape[1]}")
            print(f"  NumClasses: {self._num_classes}")
            print(f"  NumTrainingSamples: {int(g.ndata['train_mask'].sum())}")
            print(f"  NumValidationSamples: {int(g.ndata['val_mask'].sum())}")
            print(f"  NumTestSamples: {int(g.ndata['test_mask'].sum())}")

    def __getitem__(self, idx):
        try:
            position = operator.index(idx)  # ints, numpy integers, 0-d integer tensors
        except TypeError:
            raise TypeError(f"{type(self).__name__}: index must be an int, got {type(idx).__name__}") from None
        if position != 0:
            raise IndexError(f"{type(self).__name__} holds one graph: index 0, got {position}")
        return self._g if self._transform is None else self._transform(self._g)

    def __len__(self) -> int:
        return 1

    def __repr__(self) -> str:
        return f'Dataset("{self._name}", num_graphs=1, raw_path={self._raw_path})'

    @property
    def num_classes(self) -> int:
        return self._num_classes

    @property
    def num_labels(self) -> int:  # DGL's deprecated alias of num_classes
        return self._num_classes

    @property
    def name(self) -> str:
        return self._name

    @property
    def reverse_edge(self) -> bool:
        return self._reverse_edge


class CoraGraphDataset(CitationGraphDataset):
    """dgl.data.CoraGraphDataset: Cora (2,708 papers, 10,556 directed edges, 1,433 bag-of-words features, 7
    classes; the public split 140 / 500 / 1,000) from cora.npz (see the module docstring)."""

    def __init__(self, raw_dir=None, force_reload: bool = False, verbose: bool = True, reverse_edge: bool = True,
                 transform: Optional[Callable] = None, reorder: bool = False):
        super().__init__("cora", raw_dir, force_reload, verbose, reverse_edge, transform, reorder)


class CiteseerGraphDataset(CitationGraphDataset):
    """dgl.data.CiteseerGraphDataset: Citeseer (3,327 papers, 9,104 directed edges here (DGL's 9,228 keep 124
    self loops), 3,703 features, 6 classes; 120 / 500 / 1,000) from citeseer.npz (see the module docstring)."""

    def __init__(self, raw_dir=None, force_reload: bool = False, verbose: bool = True, reverse_edge: bool = True,
                 transform: Optional[Callable] = None, reorder: bool = False):
        super().__init__("citeseer", raw_dir, force_reload, verbose, reverse_edge, transform, reorder)


def load_cora(raw_dir=None, force_reload=False, verbose=True, reverse_edge=True, transform=None):
    """dgl.data.citation_graph.load_cora: CoraGraphDataset with these arguments."""
    return CoraGraphDataset(raw_dir, force_reload, verbose, reverse_edge, transform)


def load_citeseer(raw_dir=None, force_reload=False, verbose=True, reverse_edge=True, transform=None):
    """dgl.data.citation_graph.load_citeseer: CiteseerGraphDataset with these arguments."""
    return CiteseerGraphDataset(raw_dir, force_reload, verbose, reverse_edge, transform)
