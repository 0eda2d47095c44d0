"""dgl.data.utils: save_graphs / load_graphs (topograph's graph files, _serialize.py) and save_info / load_info (a
dict of a data set's extra information, pickled as DGL's; written atomically)."""
from __future__ import annotations

import os
import pickle

import numpy as np
import torch

from .._base import DGLError
from .._serialize import load_graphs, save_graphs, write_atomically
from .dgl_dataset import Subset, get_download_dir, makedirs, split_dataset

__all__ = ["save_graphs", "load_graphs", "save_info", "load_info", "Subset", "split_dataset", "get_download_dir",
           "makedirs", "download", "generate_mask_tensor"]


def _get_dgl_url(file_url: str) -> str:
    """DGL's data URL of file_url ($DGL_REPO, default https://data.dgl.ai/, + file_url); only a string here:
    topograph downloads nothing."""
    repo_url = os.environ.get("DGL_REPO", "https://data.dgl.ai/")
    if not repo_url.endswith("/"):
        repo_url += "/"
    return repo_url + file_url


def download(url: str, path=None, overwrite: bool = True, sha1_hash=None, retries: int = 5, verify_ssl: bool = True,
             log: bool = True) -> str:
    """dgl.data.utils.download without the network: the local file DGL's would write (path, a folder or a file
    name; default the url's last part in the working directory). With overwrite=False a file already there is
    returned, as DGL's; otherwise a DGLError saying where to put the file (topograph downloads nothing)."""
    fname = url.split("/")[-1]
    if path is not None:
        path = os.path.expanduser(os.fspath(path))
        fname = os.path.join(path, fname) if os.path.isdir(path) else path
    if not overwrite and os.path.exists(fname):
        return fname
    raise DGLError(f"download: topograph downloads nothing; fetch {url} yourself, put it at {fname} and call "
                   "download(..., overwrite=False) (or read the file directly)")


def generate_mask_tensor(mask) -> torch.Tensor:
    """dgl.data.utils.generate_mask_tensor: a numpy mask as a bool tensor (DGL 0.5+'s mask dtype)."""
    if not isinstance(mask, np.ndarray):
        raise DGLError(f"generate_mask_tensor: mask must be a numpy array, got {type(mask).__name__}")
    return torch.tensor(mask, dtype=torch.bool)


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
