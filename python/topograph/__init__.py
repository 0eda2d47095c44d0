"""Topograph for PyTorch: DGL's graph and message-passing names over Topograph's C++ kernels.

    import topograph
    g = topograph.graph((u, v), num_nodes=n)
    h = topograph.ops.copy_u_sum(g, x)                 # dgl.ops.copy_u_sum
    a = topograph.nn.functional.edge_softmax(g, s)     # dgl.nn.functional.edge_softmax

Tensors cross by DLPack without copies (see topograph.ops); autograd runs Topograph's own backward kernels.
"""
from . import _C
from ._graph import ALL, DGLGraph, batch, edge_type_subgraph, graph, heterograph, reverse, unbatch
from . import ops
from . import nn

__version__ = "0.1.0"
built_with_cuda = _C.built_with_cuda


def set_num_threads(threads: int) -> None:
    """Threads of Topograph's CPU kernels (its OpenMP pool; torch's is set apart with torch.set_num_threads)."""
    _C.set_num_threads(int(threads))


def get_num_threads() -> int:
    return _C.num_threads()


__all__ = ["ALL", "DGLGraph", "graph", "heterograph", "batch", "unbatch", "edge_type_subgraph", "reverse", "ops",
           "nn", "built_with_cuda", "set_num_threads", "get_num_threads"]
