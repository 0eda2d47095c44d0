"""Topograph for PyTorch: DGL's graph and message-passing names over Topograph's C++ kernels.

    import topograph
    g = topograph.graph((u, v), num_nodes=n)
    h = topograph.ops.copy_u_sum(g, x)                 # dgl.ops.copy_u_sum
    a = topograph.nn.functional.edge_softmax(g, s)     # dgl.nn.functional.edge_softmax
    r = topograph.mean_nodes(topograph.batch(gs), "h")  # dgl.mean_nodes: one row per graph

Tensors cross by DLPack without copies (see topograph.ops); autograd runs Topograph's own backward kernels.
"""
import os as _os
import sys as _sys
import warnings as _warnings

# OpenMP threads wait for the next parallel region by spinning: libgomp's default is ~3-9 ms of spinning
# after every region. With two pools in one process, torch's (its own libgomp) and Topograph's (the
# system's), the pool that just finished keeps spinning on the cores the other one needs: a GAT training
# step ran 4-10x slower with both at 2 threads on 2 cores (python/README.md, "Threads"). topo-train sets a
# short spin (1000 pause loops, ~30 us, then sleep; kernels/threads.hpp); libgomp reads it only when it
# loads, so it is set here for loading torch (if not loaded yet) and _C, then removed, unless the user chose
# a wait policy.
_short_spin = "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ
_torch_was_loaded = "torch" in _sys.modules
if _short_spin:
    _os.environ["GOMP_SPINCOUNT"] = "1000"
try:
    import torch as _torch
    from . import _C
finally:
    if _short_spin:
        del _os.environ["GOMP_SPINCOUNT"]
if _short_spin and _torch_was_loaded and _torch.get_num_threads() > 1:
    _warnings.warn("torch was imported before topograph, so torch's OpenMP threads keep libgomp's default "
                   "spin-wait (milliseconds after each op) and slow the Topograph kernels that follow: import "
                   "topograph first, or set GOMP_SPINCOUNT=1000 (or OMP_WAIT_POLICY=passive) in the environment",
                   RuntimeWarning, stacklevel=2)

from ._base import ALL, EID, ETYPE, NID, NTYPE, DGLError, DGLTypeError  # noqa: F401 (DGLTypeError: README, Errors)

_C._set_user_error(DGLError)  # the core's user-input errors (ids, types, shapes) raise DGLError, as DGL's
from ._construct import batch, edge_type_subgraph, graph, heterograph, reverse, unbatch
from ._graph import DGLGraph

DGLHeteroGraph = DGLGraph  # DGL's older name, still exported by DGL 2.1
from ._block import DGLBlock, block_to_graph, create_block, to_block
from ._subgraph import edge_subgraph, in_subgraph, node_subgraph, node_type_subgraph, out_subgraph
from ._transform import add_reverse_edges, add_self_loop, remove_edges, remove_self_loop, to_bidirected, to_simple
from ._transform import to_simple as to_simple_graph  # DGL 2.1's deprecated name
from ._convert import to_heterogeneous, to_homogeneous
from ._external import bipartite_from_networkx, bipartite_from_scipy, from_networkx, from_scipy, to_networkx
from . import _rebatch  # noqa: F401 (DGLGraph.set_batch_num_nodes / set_batch_num_edges)
from . import _schemes  # noqa: F401 (DGLGraph.node_attr_schemes, get_ntype_id_from_src, is_pinned, ...)
from . import _initializers  # noqa: F401 (DGLGraph.set_n_initializer / set_e_initializer)
from ._structure_ops import khop_graph, knn_graph, line_graph, radius_graph, segmented_knn_graph
from ._adjacency_ops import adj_product_graph, adj_sum_graph, metapath_reachable_graph
from ._traversal import (bfs_edges_generator, bfs_nodes_generator, prop_edges, prop_nodes, prop_nodes_bfs,
                         prop_nodes_topo, topological_nodes_generator)
from ._traversal import dfs_edges_generator, dfs_labeled_edges_generator, prop_edges_dfs
from ._positional import (khop_adj, lap_pe, laplacian_lambda_max, laplacian_pe, norm_by_dst, random_walk_pe,
                          shortest_dist, to_bfloat16, to_double, to_float, to_half)
from ._homophily import adjusted_homophily, edge_homophily, linkx_homophily, node_homophily
from ._homophily import edge_label_informativeness, node_label_informativeness
from ._node_labeling import double_radius_node_labeling
from ._reorder import reorder_graph, sort_csc_by_tag, sort_csr_by_tag
from ._construct import slice_batch
from ._edgewise import copy_u, copy_v, u_add_v, u_div_v, u_dot_v, u_mul_v, u_sub_v  # dgl.copy_u(g, x_node, etype=None)
from .utils import apply_each
from ._serialize import load_graphs, save_graphs
from ._mutation import (add_edges, add_nodes, compact_graphs, khop_in_subgraph, khop_out_subgraph, merge,
                        rand_bipartite, rand_graph, remove_nodes)
from .readout import (broadcast_edges, broadcast_nodes, max_edges, max_nodes, mean_edges, mean_nodes, readout_edges,
                      readout_nodes, softmax_edges, softmax_nodes, sum_edges, sum_nodes, topk_edges, topk_nodes)
from . import readout
from . import transforms
from .transforms import (AddEdge, AddReverse, AddSelfLoop, BaseTransform, Compose, DropEdge, DropNode,  # dgl.DropEdge
                         FeatMask, GCNNorm, KHopGraph, LapPE, LaplacianPE, LineGraph, NodeShuffle, RandomWalkPE,
                         RemoveSelfLoop, RowFeatNormalizer, ToSimple)
from .transforms import (GDC, PPR, SVDPE, AddMetaPaths, HeatKernel, SIGNDiffusion, ToLevi,  # dgl.PPR, ...
                         svd_pe)
from . import builders
from . import dataloading
from . import sampling
from . import function
from . import backend  # dgl.backend: `import dgl.backend as F` helpers
from . import init  # dgl.init: zero_initializer
from . import ops
from . import nn
from . import models
from . import sparse  # dgl.sparse: SparseMatrix over the same kernels
from . import random  # dgl.random: seed, choice
from . import optim  # dgl.optim: SparseAdam, SparseAdagrad
from . import utils
from . import data  # dgl.data: the citation graphs, from local files only

# After every module that attaches methods to DGLGraph (above): torch.compile calls them eagerly (_compile.py).
from ._compile import eager_methods as _eager_methods

_eager_methods(DGLGraph)
_eager_methods(DGLBlock, with_bases=False)

__version__ = "0.1.0"
built_with_cuda = _C.built_with_cuda


def seed(val: int) -> None:
    """dgl.seed: seeds the generator of Topograph's random draws (neighbour and negative sampling, GATConv's
    attention dropout), which is torch's default generator, so this is torch.manual_seed(val). DGL seeds a
    generator of its own and leaves torch's alone: call it where torch's seed is set too (at the start), as
    scripts do, and both libraries draw alike."""
    _torch.manual_seed(int(val))


def set_num_threads(threads: int) -> None:
    """Threads of Topograph's CPU kernels (its OpenMP pool; torch's is set apart with torch.set_num_threads).
    Process-wide, as torch.set_num_threads: it holds for ops called from any Python thread."""
    _C.set_num_threads(int(threads))


def get_num_threads() -> int:
    return _C.num_threads()


def as_dgl():
    """Makes `import dgl`, `import dgl.nn as dglnn`, `from dgl.data import ...` load topograph's modules in this
    process, so a DGL script's own imports work unchanged; call it before the first `import dgl`. Returns
    topograph. `python -m topograph.dgl_alias SCRIPT ARGS...` runs a script so (topograph/dgl_alias.py)."""
    from .dgl_alias import install
    return install()


__all__ = ["ALL", "NID", "EID", "NTYPE", "ETYPE", "DGLError", "DGLGraph", "DGLHeteroGraph", "DGLBlock", "graph",
           "heterograph", "batch",
           "unbatch", "edge_type_subgraph", "node_subgraph", "edge_subgraph", "in_subgraph", "out_subgraph",
           "node_type_subgraph", "reverse", "to_block", "create_block", "block_to_graph", "line_graph", "khop_graph",
           "knn_graph", "segmented_knn_graph", "metapath_reachable_graph", "adj_product_graph", "adj_sum_graph",
           "save_graphs", "load_graphs", "transforms", "random_walk_pe", "lap_pe", "laplacian_pe", "shortest_dist",
           "khop_adj", "to_half", "to_float", "to_double", "to_bfloat16", "BaseTransform", "AddSelfLoop",
           "RemoveSelfLoop", "AddReverse", "ToSimple", "LineGraph", "KHopGraph", "Compose", "DropEdge", "DropNode",
           "AddEdge", "FeatMask", "RowFeatNormalizer", "GCNNorm", "NodeShuffle", "RandomWalkPE", "LapPE",
           "LaplacianPE", "bfs_nodes_generator", "bfs_edges_generator", "topological_nodes_generator", "prop_nodes",
           "prop_edges", "prop_nodes_bfs", "prop_nodes_topo", "radius_graph", "norm_by_dst", "laplacian_lambda_max",
           "edge_homophily", "node_homophily", "linkx_homophily", "adjusted_homophily", "edge_label_informativeness",
           "node_label_informativeness", "dfs_edges_generator", "dfs_labeled_edges_generator", "prop_edges_dfs",
           "double_radius_node_labeling", "sort_csr_by_tag", "sort_csc_by_tag", "reorder_graph", "slice_batch",
           "copy_u",
           "copy_v", "u_add_v", "u_sub_v", "u_mul_v", "u_div_v", "u_dot_v", "apply_each", "random", "utils", "optim",
           "bipartite_from_networkx",
           "to_simple_graph",
           "add_self_loop", "remove_self_loop", "remove_edges", "add_nodes", "add_edges", "remove_nodes",
           "rand_graph", "rand_bipartite", "compact_graphs", "merge", "khop_in_subgraph", "khop_out_subgraph",
           "to_simple",
           "to_bidirected", "to_homogeneous",
           "to_heterogeneous", "readout",
           *readout.__all__, "builders", "dataloading", "sampling", "function", "ops", "sparse", "nn", "models",
           "built_with_cuda", "seed", "set_num_threads", "get_num_threads", "as_dgl", "PPR", "HeatKernel", "GDC",
           "SIGNDiffusion", "ToLevi", "AddMetaPaths", "SVDPE", "svd_pe"]
