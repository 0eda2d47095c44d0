"""What a second round of DGL example-style scripts (GIN, GCNII/JKNet/APPNP, PNA, TreeLSTM, HAN, DGI,
unsupervised GraphSAGE, MPNN regression, hetero link prediction, DistMult, and old-style DGLGraph code) needed:
dgl.data.load_data, dgl.backend (`import dgl.backend as F`), dgl.init, DGLGraph's
set_n_initializer / set_e_initializer, DGLGraph(networkx graph / scipy matrix), NodeDataLoader / EdgeDataLoader and
dgl.data.utils's download helpers. Checked against DGL's documented behaviour and plain torch."""
import argparse

import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)
import topograph.function as fn

import numpy as np
import pytest
import torch


def test_load_data_reads_the_named_citation_graph(monkeypatch):
    calls = []
    monkeypatch.setattr(topograph.data, "load_cora", lambda: calls.append("cora") or "C")
    monkeypatch.setattr(topograph.data, "load_citeseer", lambda: calls.append("citeseer") or "S")
    assert topograph.data.load_data(argparse.Namespace(dataset="cora")) == "C"
    assert topograph.data.load_data(argparse.Namespace(dataset="citeseer")) == "S"
    assert calls == ["cora", "citeseer"]
    with pytest.raises(ValueError, match="Unknown dataset: 'pubmed'"):
        topograph.data.load_data(argparse.Namespace(dataset="pubmed"))
    from topograph.data import load_data  # noqa: F401  (the import old examples write)


def test_backend_helpers_are_dgl_pytorch_backend():
    import topograph.backend as F
    assert F.backend_name == "pytorch" and F.float32 is torch.float32 and F.int64 is torch.int64
    x = F.ones((3, 2), F.float32, F.cpu())
    assert F.shape(x) == (3, 2) and F.dtype(x) == torch.float32 and F.context(x) == torch.device("cpu")
    assert F.ndim(x) == 2 and F.is_tensor(x) and F.device_type(F.context(x)) == "cpu" and F.device_id("cpu") == 0
    assert F.asnumpy(F.sum(x, 0)).tolist() == [3.0, 3.0] and F.sum(x, 1, keepdims=True).shape == (3, 1)
    assert F.tensor(5).tolist() == [5] and F.tensor([1, 2], F.int32).dtype == torch.int32
    assert F.tensor([torch.tensor(1), torch.tensor(2)]).tolist() == [1, 2]
    y = torch.tensor([[1.0, 5.0], [3.0, 2.0], [0.0, 4.0]])
    assert F.max(y, 0).tolist() == [3.0, 5.0] and F.min(y, 1).tolist() == [1.0, 2.0, 0.0]
    assert F.gather_row(y, torch.tensor([2, 0])).tolist() == [[0.0, 4.0], [1.0, 5.0]]
    assert F.scatter_row(y, torch.tensor([1]), torch.zeros(1, 2)).tolist()[1] == [0.0, 0.0] and y[1, 0] == 3.0
    assert F.take(y, torch.tensor([[1]]), 1).shape == (3, 1, 1)
    assert F.repeat(torch.tensor([1, 2]), torch.tensor([2, 1]), 0).tolist() == [1, 1, 2]
    assert F.nonzero_1d(torch.tensor([0, 3, 0, 1])).tolist() == [1, 3]
    assert F.nonzero_1d(torch.tensor([0, 3])).tolist() == [1]  # one hit stays 1-d
    assert F.zeros((2,), F.int64, F.cpu()).tolist() == [0, 0] and F.arange(1, 4).tolist() == [1, 2, 3]
    assert F.boolean_mask(torch.arange(3), torch.tensor([1, 0, 1])).tolist() == [0, 2]
    packed = torch.arange(5.0).view(5, 1)
    padded = F.pad_packed_tensor(packed, [2, 3], -1.0)
    assert padded[:, :, 0].tolist() == [[0.0, 1.0, -1.0], [2.0, 3.0, 4.0]]
    assert F.pad_packed_tensor(packed, [2, 3], 0.0, l_min=4).shape == (2, 4, 1)
    assert F.pack_padded_tensor(padded, [2, 3]).tolist() == packed.tolist()
    assert F.copy_to(x, F.cpu()).device.type == "cpu" and F.zerocopy_from_numpy(np.ones(2)).dtype == torch.float64


def test_dgl_init_zero_initializer():
    z = topograph.init.zero_initializer((2, 3), torch.float32, torch.device("cpu"), slice(0, 2))
    assert z.shape == (2, 3) and not z.any()


def test_set_initializers_take_zero_initializer_and_removed_old_methods_stay_absent():
    g = topograph.DGLGraph()
    g.add_nodes(3)
    g.set_n_initializer(topograph.init.zero_initializer)
    g.set_e_initializer(topograph.init.zero_initializer, field="w")
    with pytest.raises(topograph.DGLError, match="zero_initializer"):
        g.set_n_initializer(lambda shape, dtype, ctx, id_range: torch.ones(shape, dtype=dtype))
    for name in ("add_edge", "edge_id", "has_node", "has_edge_between", "in_degree", "out_degree", "is_readonly"):
        assert not hasattr(g, name)  # removed in DGL 1.0 (dmlc/dgl#4894, #4896, #4902)


def test_dglgraph_constructor_takes_networkx_and_scipy():
    nx = pytest.importorskip("networkx")
    sp = pytest.importorskip("scipy.sparse")
    g = topograph.DGLGraph(nx.path_graph(4))  # undirected: both directions, as DGL's
    assert g.num_nodes() == 4 and g.num_edges() == 6
    assert sorted(zip(*[t.tolist() for t in g.edges()])) == [(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)]
    d = topograph.DGLGraph(nx.DiGraph([(0, 2), (2, 1)]))
    assert d.num_edges() == 2 and d.has_edges_between(0, 2) and not d.has_edges_between(2, 0)
    m = sp.coo_matrix((np.ones(2), ([0, 2], [1, 0])), shape=(3, 3))
    s = topograph.DGLGraph(m)
    assert s.num_nodes() == 3 and sorted(zip(*[t.tolist() for t in s.edges()])) == [(0, 1), (2, 0)]
    assert topograph.DGLGraph((torch.tensor([0]), torch.tensor([2]))).num_nodes() == 3


def test_register_data_args_and_data_utils_helpers(tmp_path, monkeypatch):
    parser = argparse.ArgumentParser()
    topograph.data.register_data_args(parser)
    assert parser.parse_args(["--dataset", "cora"]).dataset == "cora" and parser.parse_args([]).dataset is None
    from topograph.data.utils import _get_dgl_url, download, generate_mask_tensor
    monkeypatch.delenv("DGL_REPO", raising=False)
    assert _get_dgl_url("dataset/ACM.mat") == "https://data.dgl.ai/dataset/ACM.mat"
    (tmp_path / "ACM.mat").write_bytes(b"x")
    url = _get_dgl_url("dataset/ACM.mat")
    assert download(url, path=str(tmp_path), overwrite=False) == str(tmp_path / "ACM.mat")
    with pytest.raises(topograph.DGLError, match="downloads nothing"):
        download(url, path=str(tmp_path / "other.mat"))
    m = generate_mask_tensor(np.array([1, 0, 1]))
    assert m.dtype == torch.bool and m.tolist() == [True, False, True]


def test_node_and_edge_dataloader_old_names():
    g = topograph.graph((torch.tensor([0, 1, 2, 3, 1]), torch.tensor([1, 2, 3, 0, 3])))
    sampler = topograph.dataloading.MultiLayerFullNeighborSampler(1)
    nodes = list(topograph.dataloading.NodeDataLoader(g, torch.arange(4), sampler, batch_size=2))
    assert len(nodes) == 2 and all(len(b) == 3 for b in nodes)
    assert isinstance(topograph.dataloading.NodeDataLoader(g, torch.arange(4), sampler),
                      topograph.dataloading.DataLoader)
    with pytest.warns(DeprecationWarning, match="as_edge_prediction_sampler"):
        loader = topograph.dataloading.EdgeDataLoader(
            g, torch.arange(5), sampler, batch_size=5, exclude="self",
            negative_sampler=topograph.dataloading.negative_sampler.Uniform(2))
    input_nodes, pair_graph, neg_graph, blocks = next(iter(loader))
    assert pair_graph.num_edges() == 5 and neg_graph.num_edges() == 10 and len(blocks) == 1
    assert blocks[0].num_edges() == 0  # every edge is a seed, and exclude='self' leaves them all out
    wrapped = topograph.dataloading.as_edge_prediction_sampler(sampler)
    assert len(next(iter(topograph.dataloading.EdgeDataLoader(g, torch.arange(5), wrapped, batch_size=5)))) == 3
