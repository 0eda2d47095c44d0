"""DGL 2.1 module paths that re-export functions defined elsewhere, and dgl.graph's refusal of mixed id dtypes.
Each fact below was checked on DGL 2.1.0 (bench/peers/.venv)."""
import subprocess
import sys
import textwrap

import topograph  # noqa: F401 (before torch: topograph/__init__.py)

import pytest
import torch

import topograph.nn.factory
import topograph.nn.pytorch.factory
import topograph.nn.pytorch.glob
import topograph.readout
from topograph import DGLError

FACTORY_MODULES = [topograph.nn.pytorch.factory, topograph.nn.factory]


# DGL 2.1: dgl/nn/pytorch/factory.py does `from ...transforms import knn_graph, radius_graph, segmented_knn_graph`,
# so dgl.nn.pytorch.factory.knn_graph is dgl.knn_graph (the same function object), and likewise the other two.
@pytest.mark.parametrize("module", FACTORY_MODULES, ids=lambda m: m.__name__)
@pytest.mark.parametrize("name", ["knn_graph", "segmented_knn_graph", "radius_graph"])
def test_factory_reexports_the_graph_builders(module, name):
    assert getattr(module, name) is getattr(topograph, name)


# DGL 2.1: dgl.nn.pytorch.factory holds KNNGraph, SegmentedKNNGraph, RadiusGraph (and dgl.nn.factory is that
# same module, reached as an attribute of dgl.nn).
@pytest.mark.parametrize("module", FACTORY_MODULES, ids=lambda m: m.__name__)
def test_factory_modules(module):
    for name in ("KNNGraph", "SegmentedKNNGraph", "RadiusGraph"):
        assert getattr(module, name) is getattr(topograph.nn, name)


# DGL 2.1: dgl.nn.pytorch.factory.pairwise_squared_distance(x) = |x_i|^2 + |x_j|^2 - 2 x_i.x_j over the last two
# axes, x [..., P, D] -> [..., P, P] (x2s + x2s^T - 2 x @ x^T); it is not in dgl or dgl.transforms' namespace.
@pytest.mark.parametrize("module", FACTORY_MODULES, ids=lambda m: m.__name__)
def test_pairwise_squared_distance(module):
    f = module.pairwise_squared_distance
    x = torch.tensor([[0.0, 0.0], [3.0, 4.0], [1.0, 0.0]])
    assert torch.equal(f(x), torch.tensor([[0.0, 25.0, 1.0], [25.0, 0.0, 20.0], [1.0, 20.0, 0.0]]))
    xb = torch.randn(2, 5, 3, generator=torch.Generator().manual_seed(0))
    x2s = (xb * xb).sum(-1, keepdim=True)
    assert torch.equal(f(xb), x2s + x2s.transpose(-1, -2) - 2 * xb @ xb.transpose(-1, -2))  # DGL's own formula
    assert f(xb).shape == (2, 5, 5)


# DGL 2.1: dgl/nn/pytorch/glob.py does `from ...readout import broadcast_nodes, max_nodes, mean_nodes,
# softmax_nodes, sum_nodes, topk_nodes`: these six are attributes of dgl.nn.pytorch.glob, the same functions as
# dgl.readout's; the edge versions and readout_nodes / readout_edges are not there.
GLOB_READOUTS = ["sum_nodes", "mean_nodes", "max_nodes", "softmax_nodes", "broadcast_nodes", "topk_nodes"]


@pytest.mark.parametrize("name", GLOB_READOUTS)
def test_glob_reexports_node_readouts(name):
    assert getattr(topograph.nn.pytorch.glob, name) is getattr(topograph.readout, name)


@pytest.mark.parametrize("name", ["sum_edges", "mean_edges", "max_edges", "softmax_edges", "broadcast_edges",
                                  "topk_edges", "readout_nodes", "readout_edges"])
def test_glob_holds_no_edge_readouts(name):
    assert not hasattr(topograph.nn.pytorch.glob, name)


def test_dgl_import_paths(tmp_path):
    code = textwrap.dedent("""
        import topograph
        topograph.as_dgl()
        from dgl.nn.pytorch.factory import (KNNGraph, RadiusGraph, SegmentedKNNGraph, knn_graph,
                                            pairwise_squared_distance, radius_graph, segmented_knn_graph)
        from dgl.nn.pytorch.glob import (broadcast_nodes, max_nodes, mean_nodes, softmax_nodes, sum_nodes,
                                         topk_nodes)
        import dgl.nn
        assert dgl.nn.factory.knn_graph is knn_graph and dgl.nn.factory.pairwise_squared_distance is not None
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr


I32 = torch.tensor([0, 1], dtype=torch.int32)
I64 = torch.tensor([1, 2], dtype=torch.int64)


# DGL 2.1: dgl.graph((int32 tensor, int64 tensor)) raises DGLError ("Expected col to be the same type as
# row(int32). But got int64."), either order, also in the ('coo', (u, v)) form, with empty tensors, and with a
# list for one side (a list is int64); dgl.DGLGraph((u, v)) the same.
@pytest.mark.parametrize("data", [(I32, I64), (I64, I32), ("coo", (I32, I64)), (I32, [1, 2]),
                                  (I32[:0], I64[:0])], ids=["32-64", "64-32", "coo", "list", "empty"])
def test_graph_refuses_mixed_id_dtypes(data):
    with pytest.raises(DGLError, match=r"int32.*int64|int64.*int32"):
        topograph.graph(data)


def test_deprecated_constructor_refuses_mixed_id_dtypes():
    with pytest.raises(DGLError, match=r"int32.*int64"):
        topograph.DGLGraph((I32, I64))


# DGL 2.1: the same in one relation of dgl.heterograph.
def test_heterograph_refuses_mixed_id_dtypes_in_a_relation():
    with pytest.raises(DGLError, match=r"int32.*int64"):
        topograph.heterograph({("a", "r", "b"): (I32, I64)})


# DGL 2.1: ('csr', (int32 indptr, int64 indices, [])) raises DGLError too ("Expected indices to be the same
# type as indptr(int32). But got int64.").
def test_csr_refuses_mixed_id_dtypes():
    with pytest.raises(DGLError, match=r"int32.*int64"):
        topograph.graph(("csr", (torch.tensor([0, 1, 2], dtype=torch.int32), torch.tensor([1, 0]), [])))


# DGL 2.1: with idtype given, mixed dtypes are accepted and cast to it; numpy arrays are read as int64 whatever
# their dtype (np int32 with np int64 builds an int64 graph); relations of different (consistent) dtypes are
# accepted by dgl.heterograph.
def test_mixed_id_dtypes_still_accepted_where_dgl_accepts_them():
    np = pytest.importorskip("numpy")
    assert topograph.graph((I32, I64), idtype=torch.int64).idtype == torch.int64
    assert topograph.graph((I32, I64), idtype=torch.int32).idtype == torch.int32
    assert topograph.heterograph({("a", "r", "b"): (I32, I64)}, idtype=torch.int64).idtype == torch.int64
    assert topograph.graph((np.array([0, 1], dtype=np.int32), np.array([1, 2]))).idtype == torch.int64
    g = topograph.heterograph({("a", "r", "b"): (I32, I32), ("a", "s", "b"): (I64, I64)})
    assert g.num_edges() == 4
