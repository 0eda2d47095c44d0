"""dgl.save_graphs / dgl.load_graphs (dgl.data.utils): graphs with their node and edge features, and a dict of
graph labels, in one file. The file is Topograph's own, not DGL's binary format: torch.save of plain
containers (each graph as _pickle.py's reduce_graph describes it: types, counts, edges, features), read back
with torch.load(weights_only=True), so loading runs no pickled code. Neither library reads the other's files.
Writing is atomic: a temporary file in the same folder, flushed to disk, then renamed over the target, so a
crash leaves the old file or the new one, never half of one."""
from __future__ import annotations

import os
import stat
import tempfile
from typing import Dict, List, Optional, Tuple

import torch

from ._base import DGLError
from ._graph import DGLGraph

_FORMAT, _VERSION = "topograph.save_graphs", 1


def _record(g: DGLGraph, position: int) -> tuple:
    """What rebuilds g as one graph on the CPU (a batch's members merged into one graph, as DGL's files keep
    no batch): _pickle.restore_graph's arguments."""
    from ._pickle import reduce_graph

    if not isinstance(g, DGLGraph) or g.is_block:
        raise DGLError(f"save_graphs: g_list[{position}] must be a graph (not a block), got {type(g).__name__}: "
                       f"g_list must be a DGLGraph or a list of DGLGraphs")
    _, (types, relations, node_counts, edge_counts, edges, features, _device, _block) = reduce_graph(g)
    node_counts = [[sum(c)] for c in node_counts]
    edge_counts = [[sum(c)] for c in edge_counts]
    features = {key: {name: value.detach().cpu() for name, value in data.items()} for key, data in features.items()}
    return types, relations, node_counts, edge_counts, edges, features, "cpu"


def save_graphs(filename: str, g_list, labels: Optional[Dict[str, torch.Tensor]] = None, formats=None) -> None:
    """dgl.save_graphs: g_list (a graph or a list of graphs; a batch is saved as one graph, as DGL's) with their
    features, and labels ({name: tensor}, e.g. one row per graph), to filename (its folder made if missing).
    formats (DGL's sparse formats to store) is accepted and ignored: a loaded graph builds its formats on use."""
    filename = os.fspath(filename)
    if os.path.isdir(filename):
        raise DGLError(f"save_graphs: filename {filename} is an existing directory")
    graphs = g_list if isinstance(g_list, (list, tuple)) else [g_list]
    if not graphs:
        raise DGLError("save_graphs: g_list is empty; give a DGLGraph or a list of DGLGraphs")
    records = [_record(g, i) for i, g in enumerate(graphs)]
    labels = {} if labels is None else labels
    if not isinstance(labels, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                               for k, v in labels.items()):
        raise DGLError("save_graphs: labels must be a dict {name: tensor}")
    payload = {"format": _FORMAT, "version": _VERSION, "graphs": records,
               "labels": {k: v.detach().cpu() for k, v in labels.items()}}
    write_atomically(filename, lambda f: torch.save(payload, f))


def write_atomically(filename: str, write) -> None:
    """write(f) into a temporary file beside filename (its folder made if missing), synced, then renamed over
    it: a reader sees the old file or the new one whole, never a part, also when the process is killed. As
    kernels/atomic_file.hpp: a symlink has the file it points to replaced, a device or FIFO (/dev/null) is
    written in place (a rename made it a regular file, run as root), a directory is a DGLError."""
    filename = os.path.realpath(filename) if os.path.islink(filename) else filename
    if os.path.isdir(filename):
        raise DGLError(f"cannot write {filename}: it is a directory")
    if os.path.exists(filename) and not stat.S_ISREG(os.stat(filename).st_mode):
        with open(filename, "wb") as f:
            write(f)
        return
    folder = os.path.dirname(os.path.abspath(filename))
    os.makedirs(folder, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(filename) + ".", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, filename)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _read(filename: str) -> dict:
    if not os.path.exists(filename):
        raise DGLError(f"load_graphs: file {filename} does not exist")
    try:
        payload = torch.load(filename, map_location="cpu", weights_only=True)
    except Exception as e:  # not a torch file, or one holding other objects
        raise DGLError(f"load_graphs: {filename} is not a file topograph.save_graphs wrote (DGL's binary graph "
                       f"files are not read): {e}") from None
    if not isinstance(payload, dict) or payload.get("format") != _FORMAT:
        raise DGLError(f"load_graphs: {filename} is not a file topograph.save_graphs wrote (DGL's binary graph "
                       f"files are not read)")
    if payload.get("version") != _VERSION:
        raise DGLError(f"load_graphs: {filename} has format version {payload.get('version')!r}; this topograph "
                       f"reads version {_VERSION}")
    return payload


def load_graphs(filename: str, idx_list: Optional[List[int]] = None) -> Tuple[List[DGLGraph], Dict[str, torch.Tensor]]:
    """dgl.load_graphs: (the graphs saved in filename, or those at positions idx_list, in that order; every
    label {name: tensor}), on the CPU, each graph one graph (batch_size 1) with its features. A missing file,
    one save_graphs did not write, or a position out of range: a DGLError naming the file."""
    filename = os.fspath(filename)
    payload = _read(filename)
    from ._pickle import restore_graph

    records, labels = payload.get("graphs"), payload.get("labels")
    if not isinstance(records, list) or not isinstance(labels, dict) or not all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in labels.items()):
        raise DGLError(f"load_graphs: {filename} is malformed: it needs 'graphs', a list, and 'labels', a dict "
                       f"{{name: tensor}}")
    if idx_list is None:
        idx_list = range(len(records))
    elif not isinstance(idx_list, (list, tuple)) or not all(isinstance(i, int) and not isinstance(i, bool)
                                                            for i in idx_list):
        raise DGLError(f"load_graphs: idx_list must be a list of ints, got {idx_list!r}")
    graphs = []
    for i in idx_list:
        if not 0 <= i < len(records):
            raise DGLError(f"load_graphs: idx_list has id {i}, out of range: {filename} holds {len(records)} graphs")
        try:
            graphs.append(restore_graph(*records[i]))
        except Exception as e:  # a file save_graphs wrote, altered since: its records do not make a graph
            raise DGLError(f"load_graphs: graph {i} of {filename} is malformed: {e}") from None
    return graphs, dict(labels)

