"""dgl.data.SSTDataset (and its old name SST): the Stanford Sentiment Treebank as DGL's TreeLSTM example reads it,
one constituency tree per sentence, built from local PTB bracket files. Nothing is ever downloaded.

Where the files come from: ``raw_dir`` is a folder holding ``train.txt`` / ``dev.txt`` / ``test.txt`` (and
``tiny.txt`` for mode 'tiny'; DGL's sst.zip ships one, ../shared/data does not); without it,
``$TOPOGRAPH_DATA_DIR/sst/trees/`` (the layout of ../shared/data, see its sst/SOURCE.txt). Neither given, or a
needed file missing: a DGLError naming the path expected. Each line is one tree ``(LABEL child ...)``, a leaf
``(LABEL word)``, labels 0..4.

Each item is DGL's tree: node 0 the root, the other nodes numbered in pre-order (a node, then its children's
subtrees left to right: DGL's networkx insertion order), one node per bracket (a leaf is the ``(LABEL word)``
bracket itself); edge i runs from node i + 1 to its parent (child -> parent, so prop_nodes_topo sends leaves ->
root), in DGL's order. ndata 'x' int64: the leaf's word id (``vocab[word.lower()]``, UNK_WORD when absent),
PAD_WORD at internal nodes; 'y' int64: the node's label; 'mask' int64: 1 at leaves, 0 elsewhere.

The vocabulary (an OrderedDict word -> id): ``vocab_file`` when given, else ``raw_dir``'s ``vocab.txt`` when
there is one (DGL's layout), one word a line, ids in line order, as DGL. Otherwise (../shared/data has no
vocab.txt) it is made from the trees: the lowercased words of train.txt, then dev.txt, then test.txt, in order of
first appearance. That is the same word set as DGL's vocab.txt (19,536 words, DGL's ``vocab_size``), so no word
of any split is UNK, as in DGL, whose example would index its embedding with UNK_WORD = -1 otherwise; but the
ids follow that order, not DGL's file's, so compare words, not ids, with DGL.

Unlike DGL: nothing is cached (``force_reload`` changes nothing; no save / load); ``raw_path`` is the mode's
.txt file. ``pretrained_emb`` follows DGL: with ``glove_embed_file`` (read only in mode 'train', as DGL) a float64
[vocab_size, dim] tensor, each word's GloVe row (matched lowercased), uniform(-0.05, 0.05) from numpy's global
generator for words GloVe lacks; else None. A glove_embed_file that does not exist is a DGLError (DGL silently
ignores it).
"""
from __future__ import annotations

import os
import re
from collections import OrderedDict
from typing import Callable, List, Optional, Tuple

import torch

from .._base import DGLError
from .._construct import graph as _make_graph
from ._local_files import ENV_VAR, LocalFileProperties, data_folder

__all__ = ["SSTDataset", "SST"]

_MODES = ("train", "dev", "test", "tiny")
_TOKEN = re.compile(r"\(|\)|[^\s()]+")

# A parsed tree: (label, word) for a leaf, (label, [children]) otherwise.
_Tree = Tuple[int, object]


def _split_file(cls_name: str, folder: str, source: str, mode: str) -> str:
    path = os.path.join(folder, mode + ".txt")
    if not os.path.isfile(path):
        raise DGLError(f"{cls_name}: {path} not found (from {source}); topograph downloads nothing: put SST's PTB "
                       f"trees ({mode}.txt, one '(LABEL ...)' tree a line) there, or pass raw_dir / set {ENV_VAR} to "
                       f"where they are")
    return path


def _parse(line: str, where: str) -> _Tree:
    """One PTB bracket tree; anything malformed is a DGLError naming `where` (file:line)."""
    tokens = _TOKEN.findall(line)
    stack: List[list] = []
    root = None
    for pos, tok in enumerate(tokens):
        if root is not None:
            raise DGLError(f"SSTDataset: {where}: text after the tree's closing bracket")
        if tok == "(":
            if pos + 1 >= len(tokens) or tokens[pos + 1] in "()":
                raise DGLError(f"SSTDataset: {where}: a bracket without a label")
            stack.append([None, []])
        elif tok == ")":
            if not stack:
                raise DGLError(f"SSTDataset: {where}: unbalanced ')'")
            label, kids = stack.pop()
            if not kids:
                raise DGLError(f"SSTDataset: {where}: an empty bracket ({label})")
            # A leaf's word is its first token, as DGL's (nltk's child[0]): the few words holding a no-break
            # space (train's "8\xa01\\/2") split there as in nltk, which keeps "8".
            if isinstance(kids[0], str):
                node = (label, kids[0])
            elif any(isinstance(k, str) for k in kids):
                raise DGLError(f"SSTDataset: {where}: a bracket mixes words and subtrees: {kids!r}")
            else:
                node = (label, kids)
            if stack:
                stack[-1][1].append(node)
            else:
                root = node
        elif not stack:
            raise DGLError(f"SSTDataset: {where}: a word outside any bracket: {tok!r}")
        elif stack[-1][0] is None:
            if tok not in ("0", "1", "2", "3", "4"):
                raise DGLError(f"SSTDataset: {where}: label {tok!r} is not one of 0..4")
            stack[-1][0] = int(tok)
        else:
            stack[-1][1].append(tok)
    if root is None:
        raise DGLError(f"SSTDataset: {where}: unbalanced brackets (the tree never closes)")
    return root


def _read_trees(path: str) -> List[_Tree]:
    with open(path, encoding="utf-8") as f:
        return [_parse(line, f"{path}:{i}") for i, line in enumerate(f, 1) if line.strip()]


def _leaves(tree: _Tree):
    stack = [tree]
    while stack:
        label, body = stack.pop()
        if isinstance(body, str):
            yield body
        else:
            stack.extend(reversed(body))


class SSTDataset(LocalFileProperties):
    """dgl.data.SSTDataset(mode='train', glove_embed_file=None, vocab_file=None, raw_dir=None, force_reload=False,
    verbose=False, transform=None): mode one of 'train' (8,544 trees), 'dev' (1,101), 'test' (2,210), 'tiny'. See
    the module docstring for the files, the node order and the vocabulary. ``ds[i]`` is tree i (through
    ``transform`` when one is given)."""

    PAD_WORD = -1  # x at internal nodes
    UNK_WORD = -1  # x at a leaf whose word is not in vocab (DGL's value, the same as PAD_WORD)

    def __init__(self, mode: str = "train", glove_embed_file=None, vocab_file=None, raw_dir=None,
                 force_reload: bool = False, verbose: bool = False, transform: Optional[Callable] = None):
        cls_name = type(self).__name__
        if mode not in _MODES:
            raise DGLError(f"{cls_name}: mode must be one of {list(_MODES)}, got {mode!r}")
        if transform is not None and not callable(transform):
            raise DGLError(f"{cls_name}: transform must be callable, got {type(transform).__name__}")
        self.mode, self._force_reload, self._verbose, self._transform = mode, force_reload, verbose, transform
        self._glove_embed_file = glove_embed_file if mode == "train" else None  # as DGL
        folder, source = data_folder(cls_name, raw_dir, "sst/trees", "train.txt, dev.txt, test.txt")
        self._raw_dir, self._raw_path = folder, _split_file(cls_name, folder, source, mode)
        trees = _read_trees(self._raw_path)

        self._vocab = OrderedDict()
        default_vocab = os.path.join(folder, "vocab.txt")
        vocab_path = os.fspath(vocab_file) if vocab_file is not None else (
            default_vocab if os.path.isfile(default_vocab) else None)
        if vocab_path is not None:
            if not os.path.isfile(vocab_path):
                raise DGLError(f"{cls_name}: vocab_file {vocab_path} not found (one word a line)")
            with open(vocab_path, encoding="utf-8") as f:
                for line in f:
                    self._vocab[line.strip()] = len(self._vocab)
        else:  # every split's lowercased words, train first: DGL's vocab.txt's word set
            for split in ("train", "dev", "test"):
                split_trees = trees if split == mode else _read_trees(_split_file(cls_name, folder, source, split))
                for tree in split_trees:
                    for word in _leaves(tree):
                        self._vocab.setdefault(word.lower(), len(self._vocab))

        self._pretrained_emb = None
        if self._glove_embed_file is not None:
            self._pretrained_emb = self._load_glove(cls_name, os.fspath(self._glove_embed_file))
        self._trees = [self._build_tree(t) for t in trees]
        if verbose:
            print(f"Loaded {len(self._trees)} {mode} trees from {self._raw_path}; vocab size {len(self._vocab)}")

    def _load_glove(self, cls_name: str, path: str) -> torch.Tensor:
        import numpy as np

        if not os.path.isfile(path):
            raise DGLError(f"{cls_name}: glove_embed_file {path} not found (GloVe text: a word, then its values)")
        glove = {}
        with open(path, encoding="utf-8") as f:
            for line in f:
                sp = line.rstrip("\n").split(" ")
                if sp[0].lower() in self._vocab:
                    glove[sp[0].lower()] = np.asarray([float(v) for v in sp[1:]])
        dim = len(next(iter(glove.values()))) if glove else 300
        rows = [glove.get(w.lower(), np.random.uniform(-0.05, 0.05, dim)) for w in self._vocab]
        missing = sum(w.lower() not in glove for w in self._vocab)
        if self._verbose:
            print(f"Miss word in GloVe {missing / max(len(rows), 1):.4f}")
        return torch.from_numpy(np.stack(rows, 0))

    def _build_tree(self, tree: _Tree):
        """Node 0 the root, then pre-order; edge i from node i + 1 to its parent (DGL's numbering and order)."""
        x, y, mask, parent = [], [], [], []
        stack = [(tree, -1)]
        while stack:
            (label, body), up = stack.pop()
            nid = len(x)
            y.append(label)
            parent.append(up)
            if isinstance(body, str):
                x.append(self._vocab.get(body.lower(), self.UNK_WORD))
                mask.append(1)
            else:
                x.append(self.PAD_WORD)
                mask.append(0)
                stack.extend((child, nid) for child in reversed(body))
        n = len(x)
        g = _make_graph((torch.arange(1, n), torch.tensor(parent[1:], dtype=torch.int64)), num_nodes=n)
        g.ndata["x"] = torch.tensor(x, dtype=torch.int64)
        g.ndata["y"] = torch.tensor(y, dtype=torch.int64)
        g.ndata["mask"] = torch.tensor(mask, dtype=torch.int64)
        return g

    def __getitem__(self, idx):
        g = self._trees[idx]
        return g if self._transform is None else self._transform(g)

    def __len__(self) -> int:
        return len(self._trees)

    def __repr__(self) -> str:
        return f'Dataset("sst", mode={self.mode!r}, num_graphs={len(self)}, raw_path={self._raw_path})'

    @property
    def trees(self) -> list:
        return self._trees

    @property
    def vocab(self) -> OrderedDict:
        return self._vocab

    @property
    def vocab_size(self) -> int:
        return len(self._vocab)

    @property
    def num_vocabs(self) -> int:  # DGL's deprecated alias of vocab_size
        return len(self._vocab)

    @property
    def num_classes(self) -> int:
        return 5

    @property
    def pretrained_emb(self):
        return self._pretrained_emb

    @property
    def name(self) -> str:
        return "sst"


class SST(SSTDataset):
    """dgl.data.SST, DGL's deprecated name: SSTDataset(mode, vocab_file=vocab_file)."""

    def __init__(self, mode: str = "train", vocab_file=None):
        super().__init__(mode=mode, vocab_file=vocab_file)
