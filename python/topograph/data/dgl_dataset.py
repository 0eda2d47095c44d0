"""dgl.data's dataset base class and helpers (DGL 2.1's behaviour): DGLDataset, which users subclass to make their
own datasets (process / save / load / has_cache, the cache-or-process flow in __init__), Subset and
split_dataset, get_download_dir and makedirs. Topograph downloads nothing: a subclass's own download() runs as
DGL's would (the default does nothing), and the default folder is $TOPOGRAPH_DATA_DIR, else $DGL_DOWNLOAD_DIR,
else ~/.topograph."""
from __future__ import annotations

import hashlib
import os
import traceback
from itertools import accumulate

from .._base import DGLError

__all__ = ["DGLDataset", "Subset", "split_dataset", "get_download_dir", "makedirs"]


def get_download_dir() -> str:
    """The default folder for datasets' raw and processed files (created if missing)."""
    dirname = (os.environ.get("TOPOGRAPH_DATA_DIR") or os.environ.get("DGL_DOWNLOAD_DIR")
               or os.path.join(os.path.expanduser("~"), ".topograph"))
    makedirs(dirname)
    return dirname


def makedirs(path) -> None:
    """os.makedirs that accepts an existing folder."""
    os.makedirs(os.path.expanduser(os.path.normpath(os.fspath(path))), exist_ok=True)


def _short_hash(value) -> str:
    return hashlib.sha1(str(value).encode("utf-8")).hexdigest()[:8]


class DGLDataset:
    """A dataset as DGL 2.1's base class runs one: __init__ loads from the cache (has_cache() and not
    force_reload: load()), else downloads when `url` names a source and raw_path is missing (the subclass's
    download(); nothing by default), then process() and save(); a failing load() falls back to processing.
    Subclasses define process, __getitem__ and __len__ (and save / load / has_cache to cache). Properties:
    name, url, raw_dir, raw_path, save_dir, save_path, verbose, hash (8 hex digits of hash_key)."""

    def __init__(self, name: str, url=None, raw_dir=None, save_dir=None, hash_key=(), force_reload: bool = False,
                 verbose: bool = False, transform=None):
        self._name, self._url, self._force_reload, self._verbose = name, url, force_reload, verbose
        self._hash_key, self._hash, self._transform = hash_key, _short_hash(hash_key), transform
        self._raw_dir = get_download_dir() if raw_dir is None else os.fspath(raw_dir)
        self._save_dir = self._raw_dir if save_dir is None else os.fspath(save_dir)
        self._load()

    def download(self):
        """Fetch the raw files into raw_dir; the default does nothing (topograph fetches nothing itself)."""

    def save(self):
        """Write the processed data to save_path; the default keeps nothing."""

    def load(self):
        """Read what save() wrote."""

    def process(self):
        """Build the dataset from the raw files."""

    def has_cache(self) -> bool:
        return False

    def _load(self) -> None:
        loaded = not self._force_reload and self.has_cache()
        if loaded:
            try:
                self.load()
                if self.verbose:
                    print("Done loading data from cached files.")
            except KeyboardInterrupt:
                raise
            except Exception:  # a cache that does not load is rebuilt, as DGL's
                loaded = False
                if self.verbose:
                    print(traceback.format_exc())
                    print("Loading from cache failed, re-processing.")
        if not loaded:
            if not os.path.exists(self.raw_path):
                makedirs(self.raw_dir)
                self.download()
            self.process()
            self.save()
            if self.verbose:
                print("Done saving data into cached files.")

    def _url_suffix(self) -> str:
        return "" if self._url is None else "_" + _short_hash(self._url)

    @property
    def url(self):
        return self._url

    @property
    def name(self) -> str:
        return self._name

    @property
    def raw_dir(self) -> str:
        return self._raw_dir

    @property
    def raw_path(self) -> str:
        return os.path.join(self.raw_dir, self.name + self._url_suffix())

    @property
    def save_dir(self) -> str:
        return self._save_dir

    @property
    def save_path(self) -> str:
        return os.path.join(self.save_dir, self.name + self._url_suffix())

    @property
    def verbose(self) -> bool:
        return self._verbose

    @property
    def hash(self) -> str:
        return self._hash

    def __getitem__(self, idx):
        raise NotImplementedError(f"{type(self).__name__}.__getitem__ is not defined")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__}.__len__ is not defined")

    def __repr__(self) -> str:
        return f'Dataset("{self.name}", num_graphs={len(self)}, save_path={self.save_path})'


class Subset:
    """The items of `dataset` at `indices`, in that order."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, item):
        return self.dataset[self.indices[item]]

    def __len__(self) -> int:
        return len(self.indices)


def split_dataset(dataset, frac_list=None, shuffle: bool = False, random_state=None) -> list:
    """Subsets of consecutive shares frac_list (default [0.8, 0.1, 0.1], summing to 1) of the dataset, in order
    or (shuffle) in a permutation drawn from numpy's RandomState(random_state), as DGL's: the same seed gives
    DGL's split (indices a numpy array, as DGL's). Each share is floor(n * frac), the last takes the rest."""
    import numpy as np

    fracs = np.asarray([0.8, 0.1, 0.1] if frac_list is None else frac_list, dtype=np.float64)
    if fracs.ndim != 1 or len(fracs) == 0 or (fracs < 0).any() or not np.isclose(fracs.sum(), 1.0):
        raise DGLError(f"split_dataset: frac_list must be non-negative fractions summing to 1, got {list(fracs)}")
    n = len(dataset)
    lengths = (n * fracs).astype(int)
    lengths[-1] = n - lengths[:-1].sum()
    order = np.random.RandomState(seed=random_state).permutation(n) if shuffle else np.arange(n)
    return [Subset(dataset, order[end - length:end]) for end, length in zip(accumulate(lengths), lengths)]
