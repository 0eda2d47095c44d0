"""dgl.data.utils: save_graphs / load_graphs (topograph's graph files, _serialize.py) and save_info / load_info (a
dict of a data set's extra information, pickled as DGL's; written atomically)."""
from __future__ import annotations

import os
import pickle

from .._base import DGLError
from .._serialize import load_graphs, save_graphs, write_atomically
from .dgl_dataset import Subset, get_download_dir, makedirs, split_dataset

__all__ = ["save_graphs", "load_graphs", "save_info", "load_info", "Subset", "split_dataset", "get_download_dir",
           "makedirs"]


def save_info(filename: str, info: dict) -> None:
    """dgl.data.utils.save_info: `info` (a dict) pickled to filename, which a killed write never leaves half
    written."""
    if not isinstance(info, dict):
        raise DGLError(f"save_info: info must be a dict, got {type(info).__name__}")
    write_atomically(os.fspath(filename), lambda f: pickle.dump(info, f))


def load_info(filename: str) -> dict:
    """dgl.data.utils.load_info: the dict save_info wrote (unpickled: read only files you trust, as with DGL's)."""
    filename = os.fspath(filename)
    if not os.path.exists(filename):
        raise DGLError(f"load_info: file {filename} does not exist")
    try:
        with open(filename, "rb") as f:
            info = pickle.load(f)
    except Exception as e:  # truncated or not a pickle
        raise DGLError(f"load_info: {filename} is not a file save_info wrote: {e}") from None
    if not isinstance(info, dict):
        raise DGLError(f"load_info: {filename} holds a {type(info).__name__}, not the dict save_info writes")
    return info
