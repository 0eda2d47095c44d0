"""topograph.data's DGLDataset base class (the cache-or-process flow users' datasets rely on), Subset and
split_dataset, and the datasets made without downloads (MiniGCDataset, KarateClubDataset): what each must hold,
and, where dgl imports, the same graphs, labels and splits as DGL 2.1's from the same seeds."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import os

import pytest
import torch

from topograph.data import DGLDataset, KarateClubDataset, MiniGCDataset, split_dataset


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    """Every dataset's default folder in the test's own temporary folder (never the user's home)."""
    monkeypatch.setenv("TOPOGRAPH_DATA_DIR", str(tmp_path))
    return tmp_path


class Squares(DGLDataset):
    """A user's dataset as DGL's tutorial writes one: process, save / load / has_cache on a file."""

    calls = []

    def __init__(self, n, **kwargs):
        self.n = n
        super().__init__(name="squares", hash_key=(n,), **kwargs)

    def process(self):
        Squares.calls.append("process")
        self.values = torch.arange(self.n) ** 2

    def _file(self):
        return f"{self.save_path}_{self.hash}.pt"

    def save(self):
        torch.save(self.values, self._file())

    def has_cache(self):
        import os
        return os.path.exists(self._file())

    def load(self):
        Squares.calls.append("load")
        self.values = torch.load(self._file())

    def __getitem__(self, i):
        return self.values[i]

    def __len__(self):
        return self.n


def test_dataset_flow_caches_and_reprocesses(data_dir, capsys):
    Squares.calls = []
    a = Squares(5)
    b = Squares(5, verbose=True)
    c = Squares(5, force_reload=True)
    assert Squares.calls == ["process", "load", "process"] and b[3] == 9 and len(c) == 5
    assert "Done loading data from cached files." in capsys.readouterr().out
    assert a.raw_dir == str(data_dir) and a.save_path.endswith("squares") and len(a.hash) == 8
    open(a._file(), "wb").write(b"not a tensor")  # a broken cache is rebuilt, as DGL's
    Squares.calls = []
    assert Squares(5)[4] == 16 and Squares.calls == ["load", "process"]
    assert Squares(6).hash != a.hash and repr(a).startswith('Dataset("squares", num_graphs=5')


def test_split_dataset():
    data = list(range(10))
    train, val, test = split_dataset(data, [0.6, 0.2, 0.2])
    assert [list(s) for s in (train, val, test)] == [[0, 1, 2, 3, 4, 5], [6, 7], [8, 9]]
    shuffled = split_dataset(data, shuffle=True, random_state=4)
    assert [len(s) for s in shuffled] == [8, 1, 1]
    assert sorted(sum((list(s) for s in shuffled), [])) == data
    assert list(split_dataset(data, shuffle=True, random_state=4)[0]) == list(shuffled[0])
    with pytest.raises(topograph.DGLError, match="summing to 1"):
        split_dataset(data, [0.5, 0.2])


def test_minigc_graphs():
    ds = MiniGCDataset(80, 10, 20)
    assert len(ds) == 80 and ds.num_classes == 8
    labels = torch.stack([ds[i][1] for i in range(80)])
    assert torch.equal(torch.bincount(labels), torch.full((8,), 10))
    for g, label in ds:
        n = g.num_nodes()
        src, dst = g.edges()
        assert int((src == dst).sum()) == n  # one self loop each
        degrees = g.in_degrees() - 1
        if label == 0:  # cycle
            assert bool((degrees == 2).all()) and 10 <= n < 20
        elif label == 1:  # star: one hub joined to all
            assert int(degrees.max()) == n - 1 and int((degrees == 1).sum()) == n - 1
        elif label == 6:  # clique
            assert bool((degrees == n - 1).all())
    again = MiniGCDataset(80, 10, 20)  # from the cache file
    assert all(torch.equal(x[0].edges()[0], y[0].edges()[0]) for x, y in zip(ds, again))
    with pytest.raises(topograph.DGLError, match="min_num_v"):
        MiniGCDataset(8, 2, 5)
    # a lollipop or grid of under 6 nodes: DGL's numpy randint(2, n // 2) fails; here a DGLError that says why
    with pytest.raises(topograph.DGLError, match="lollipop of [45] nodes, but a lollipop needs at least 6"):
        MiniGCDataset(40, 4, 6, save_graph=False, force_reload=True)


def test_karate_club():
    g = KarateClubDataset()[0]
    assert (g.num_nodes(), g.num_edges()) == (34, 156) and int(g.ndata["label"].sum()) == 17
    assert int(g.ndata["label"][0]) == 0 and int(g.ndata["label"][33]) == 1  # Mr. Hi and the officer
    with pytest.raises(IndexError):
        KarateClubDataset()[1]


def test_against_dgl(data_dir, monkeypatch):
    dgl = pytest.importorskip("dgl")
    monkeypatch.setenv("DGL_DOWNLOAD_DIR", str(data_dir / "dgl"))
    ours, theirs = MiniGCDataset(40, 8, 16, seed=3), dgl.data.MiniGCDataset(40, 8, 16, seed=3)
    for (gt, lt), (gd, ld) in zip(ours, theirs):
        assert int(lt) == int(ld) and [t.tolist() for t in gt.edges()] == [t.tolist() for t in gd.edges()]
    kt, kd = KarateClubDataset()[0], dgl.data.KarateClubDataset()[0]
    assert [t.tolist() for t in kt.edges()] == [t.tolist() for t in kd.edges()]
    assert torch.equal(kt.ndata["label"], kd.ndata["label"])
    for args in (([0.7, 0.2, 0.1], True, 5), ([0.5, 0.5], False, None)):
        a, b = split_dataset(list(range(30)), *args), dgl.data.utils.split_dataset(list(range(30)), *args)
        assert [list(x.indices) for x in a] == [list(x.indices) for x in b]


def test_dgl_graph_classification_tutorial_learns():
    """DGL 2.1's graph classification tutorial on MiniGC, in its words: GraphDataLoader batches, two GraphConv
    layers, a mean readout; the accuracy on held-out graphs must leave chance (1/8) far behind."""
    import torch.nn.functional as F
    from topograph.dataloading import GraphDataLoader

    torch.manual_seed(0)
    train = MiniGCDataset(320, 10, 20, seed=0)
    test = MiniGCDataset(80, 10, 20, seed=1)

    class Classifier(torch.nn.Module):
        def __init__(self, in_dim, hidden_dim, n_classes):
            super().__init__()
            self.conv1 = topograph.nn.GraphConv(in_dim, hidden_dim)
            self.conv2 = topograph.nn.GraphConv(hidden_dim, hidden_dim)
            self.classify = torch.nn.Linear(hidden_dim, n_classes)

        def forward(self, g):
            h = g.in_degrees().view(-1, 1).float()  # the tutorial's input feature: the degree
            h = F.relu(self.conv1(g, h))
            h = F.relu(self.conv2(g, h))
            g.ndata["h"] = h
            return self.classify(topograph.mean_nodes(g, "h"))

    model = Classifier(1, 256, train.num_classes)
    opt = torch.optim.Adam(model.parameters(), lr=0.001)
    loader = GraphDataLoader(train, batch_size=32, shuffle=True)
    for _ in range(40):
        for bg, label in loader:
            loss = F.cross_entropy(model(bg), label)
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        bg, label = next(iter(GraphDataLoader(test, batch_size=80)))
        accuracy = (model(bg).argmax(1) == label).float().mean().item()
    assert accuracy > 0.45  # measured: 0.65 after 40 epochs (chance: 0.125; DGL's tutorial runs 80)


def test_as_node_pred_dataset(data_dir):
    """Cora's own masks as the split; a random split by ratio, cached so a second dataset reads the same one;
    a graph without labels or masks named."""
    from conftest import shared_data

    from topograph.data import AsNodePredDataset, CoraGraphDataset

    cora = CoraGraphDataset(raw_dir=shared_data("planetoid"), verbose=False)
    assert cora.raw_path.endswith(".npz") and os.path.dirname(cora.raw_path) == cora.raw_dir
    assert cora.url is None and cora.verbose is False
    ds = AsNodePredDataset(cora)
    assert (len(ds.train_idx), len(ds.val_idx), len(ds.test_idx)) == (140, 500, 1000) and ds.num_classes == 7
    split = AsNodePredDataset(cora, split_ratio=[0.6, 0.2, 0.2])
    assert (len(split.train_idx), len(split.val_idx), len(split.test_idx)) == (1624, 541, 543)
    masks = split[0].ndata
    assert int((masks["train_mask"].int() + masks["val_mask"].int() + masks["test_mask"].int()).max()) == 1
    again = AsNodePredDataset(cora, split_ratio=[0.6, 0.2, 0.2])
    assert torch.equal(again.train_idx, split.train_idx)
    plain = KarateClubDataset()
    with pytest.raises(topograph.DGLError, match="no \\['train_mask'"):
        AsNodePredDataset(plain)
    assert AsNodePredDataset(plain, split_ratio=(0.5, 0.25, 0.25)).num_classes == 2


def test_as_graph_pred_dataset():
    from topograph.data import AsGraphPredDataset

    base = MiniGCDataset(40, 10, 20)
    ds = AsGraphPredDataset(base, split_ratio=[0.5, 0.25, 0.25])
    assert (len(ds.train_idx), len(ds.val_idx), len(ds.test_idx)) == (20, 10, 10) and len(ds) == 40
    assert sorted(torch.cat([ds.train_idx, ds.val_idx, ds.test_idx]).tolist()) == list(range(40))
    assert ds.num_classes == 8 and ds.num_tasks == 1 and ds.node_feat_size is None
    again = AsGraphPredDataset(base, split_ratio=[0.5, 0.25, 0.25])  # from the cache
    assert torch.equal(again.test_idx, ds.test_idx) and again[3][1] == base[3][1]
    with pytest.raises(topograph.DGLError, match="split_ratio"):
        AsGraphPredDataset(base)


def test_as_link_pred_dataset():
    """Cora's edges split 80/10/10 with 3 negatives per held-out positive: the training graph has exactly the
    training edges and every node, negatives are no edges, the split comes back from the cache."""
    from conftest import shared_data

    from topograph.data import AsLinkPredDataset, CoraGraphDataset

    cora = CoraGraphDataset(raw_dir=shared_data("planetoid"), verbose=False)
    ds = AsLinkPredDataset(cora, split_ratio=[0.8, 0.1, 0.1], neg_ratio=3)
    g = cora[0]
    (vs, vd), (vns, vnd) = ds.val_edges
    (ts, td), (tns, tnd) = ds.test_edges
    n = g.num_edges()
    assert ds.train_graph.num_edges() == int(n * 0.8) and ds.train_graph.num_nodes() == g.num_nodes()
    assert len(vs) == int(n * 0.1) and len(ts) == n - int(n * 0.8) - int(n * 0.1)
    assert len(vns) == 3 * len(vs) and len(tns) == 3 * len(ts) and ds.feat_size == 1433
    edges = set(zip(*[t.tolist() for t in g.edges()]))
    assert not any((a, b) in edges for a, b in zip(vns.tolist() + tns.tolist(), vnd.tolist() + tnd.tolist()))
    again = AsLinkPredDataset(cora, split_ratio=[0.8, 0.1, 0.1], neg_ratio=3)
    assert torch.equal(again.test_edges[1][0], tns) and torch.equal(again.train_graph.edges()[0],
                                                                     ds.train_graph.edges()[0])
    with pytest.raises(topograph.DGLError, match="get_edge_split"):
        AsLinkPredDataset(cora)
