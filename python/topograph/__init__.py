"""Topograph for PyTorch: DGL's graph and message-passing names over Topograph's C++ kernels.

    import topograph
    g = topograph.graph((u, v), num_nodes=n)
    h = topograph.ops.copy_u_sum(g, x)                 # dgl.ops.copy_u_sum
    a = topograph.nn.functional.edge_softmax(g, s)     # dgl.nn.functional.edge_softmax

Tensors cross by DLPack without copies (see topograph.ops); autograd runs Topograph's own backward kernels.
"""
import os as _os

# Topograph's OpenMP threads (the system libgomp, which loads with _C) spin 1000 pause loops (~30 us) after a
# parallel region before they sleep, as in topo-train (kernels/threads.hpp, prepare_runtime): libgomp's
# default (~3-9 ms) would keep them spinning on the cores that torch's own threads need right after each
# Topograph op. libgomp reads the variable once, when it loads, so it is set just for _C's import (unless the
# user chose a wait policy) and then removed again, leaving libraries loaded later to their defaults.
_short_spin = "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ
if _short_spin:
    _os.environ["GOMP_SPINCOUNT"] = "1000"
try:
    from . import _C
finally:
    if _short_spin:
        del _os.environ["GOMP_SPINCOUNT"]
from ._graph import (ALL, DGLGraph, add_self_loop, batch, edge_type_subgraph, graph, heterograph, remove_self_loop,
                     reverse, unbatch)
from . import ops
from . import nn

__version__ = "0.1.0"
built_with_cuda = _C.built_with_cuda


def set_num_threads(threads: int) -> None:
    """Threads of Topograph's CPU kernels (its OpenMP pool; torch's is set apart with torch.set_num_threads)."""
    _C.set_num_threads(int(threads))


def get_num_threads() -> int:
    return _C.num_threads()


__all__ = ["ALL", "DGLGraph", "graph", "heterograph", "batch", "unbatch", "edge_type_subgraph", "reverse",
           "add_self_loop", "remove_self_loop", "ops", "nn", "built_with_cuda", "set_num_threads", "get_num_threads"]
