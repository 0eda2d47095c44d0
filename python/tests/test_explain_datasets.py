"""GNNExplainer's synthetic node classification sets (BAShapeDataset, BACommunityDataset, TreeCycleDataset,
TreeGridDataset) and SBMMixtureDataset: the laws each graph must obey (node and edge counts, labels per class,
that every motif is the motif, features); where dgl imports, the same graphs, labels and features as DGL 2.1's
for the same seed; and DGL's GNNExplainer example pattern on BA-SHAPES (train a GNN, explain one node)."""
import random
from types import SimpleNamespace

import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import numpy as np
import pytest
import torch

from topograph.data import (BACommunityDataset, BAShapeDataset, SBMMixture, SBMMixtureDataset, TreeCycleDataset,
                            TreeGridDataset)

nx = pytest.importorskip("networkx")  # the sets are made with NetworkX's generators


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    """Every dataset's cache (topograph's and DGL's) in the test's own temporary folder."""
    monkeypatch.setenv("TOPOGRAPH_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("DGL_DOWNLOAD_DIR", str(tmp_path / "dgl"))
    return tmp_path


def edge_list(g):
    return list(zip(*(t.tolist() for t in g.edges())))


def undirected(g, keep):
    """NetworkX graph of g's edges between nodes where keep [N] holds, directions dropped."""
    und = nx.Graph()
    und.add_nodes_from(int(i) for i in keep.nonzero().flatten())
    und.add_edges_from((u, v) for u, v in edge_list(g) if keep[u] and keep[v])
    return und


def motifs(g, keep):
    """The connected pieces of g among the nodes where keep holds, each as a NetworkX graph with 'label's."""
    und = undirected(g, keep)
    labels = g.ndata["label"].tolist()
    for part in nx.connected_components(und):
        piece = und.subgraph(part).copy()
        nx.set_node_attributes(piece, {i: labels[i] for i in piece}, "label")
        yield piece


def simple_without_loops(g):
    pairs = edge_list(g)
    return len(set(pairs)) == len(pairs) and all(u != v for u, v in pairs)


HOUSE = nx.Graph([(0, 1), (1, 2), (2, 3), (3, 0), (4, 0), (4, 1)])  # square 0-1-2-3, roof 4 on 0 and 1
nx.set_node_attributes(HOUSE, {0: 1, 1: 1, 2: 2, 3: 2, 4: 3}, "label")  # middle, bottom, top


def is_house(piece, offset=0) -> bool:
    return nx.is_isomorphic(piece, HOUSE, node_match=lambda a, b: a["label"] - offset == b["label"])


def check_ba_shapes(g, base, per_node, num_motifs, offset=0):
    """One BA-SHAPES graph (labels offset..offset+3) among g's nodes: a connected BA base (a star of per_node
    leaves, then per_node ties from each later node, so all but the star's leaves have per_node ties or more), and
    num_motifs labelled houses, each hung by one edge from a middle node to the base."""
    labels = g.ndata["label"]
    mine = (labels >= offset) & (labels < offset + 4)
    counts = torch.bincount(labels[mine] - offset, minlength=4).tolist()
    assert counts == [base, 2 * num_motifs, 2 * num_motifs, num_motifs]
    ba = undirected(g, labels == offset)
    assert ba.number_of_nodes() == base and nx.is_connected(ba)
    assert ba.number_of_edges() == per_node * (base - per_node)
    assert sum(d < per_node for _, d in ba.degree()) <= per_node
    houses = list(motifs(g, mine & (labels != offset)))
    assert len(houses) == num_motifs and all(is_house(h, offset) for h in houses)
    hang = [(u, v) for u, v in edge_list(g) if (labels[u] == offset) != (labels[v] == offset) and mine[u] and mine[v]]
    assert len(hang) == num_motifs and all(labels[u] == offset + 1 and labels[v] == offset for u, v in hang)


def test_ba_shapes_structure():
    ds = BAShapeDataset(num_base_nodes=60, num_base_edges_per_node=3, num_motifs=12, perturb_ratio=0.0, seed=0,
                        verbose=False)
    g = ds[0]
    assert (len(ds), ds.num_classes) == (1, 4)
    # BA: a 3-star, then 3 ties for each of the 56 later nodes; a house: 6 ties inside, 1 to the base
    assert (g.num_nodes(), g.num_edges()) == (60 + 5 * 12, 3 * 57 + 7 * 12)
    assert g.ndata["label"].dtype == torch.int64 and g.ndata["feat"].dtype == torch.float32
    assert torch.equal(g.ndata["feat"], torch.ones(120, 1))
    assert simple_without_loops(g)
    check_ba_shapes(g, 60, 3, 12)
    with pytest.raises(IndexError):
        ds[1]


def test_ba_shapes_noise_seed_and_cache(data_dir):
    kw = dict(num_base_nodes=60, num_base_edges_per_node=3, num_motifs=12, perturb_ratio=0.05, verbose=False)
    g = BAShapeDataset(seed=4, **kw)[0]
    real = 3 * 57 + 7 * 12
    assert g.num_edges() == real + int(real * 0.05) and simple_without_loops(g)
    cached = BAShapeDataset(seed=4, **kw)  # read back from its cache file
    assert list(data_dir.glob("BA-SHAPES/*.bin")) and edge_list(cached[0]) == edge_list(g)
    assert torch.equal(cached[0].ndata["label"], g.ndata["label"])
    assert edge_list(BAShapeDataset(seed=4, force_reload=True, **kw)[0]) == edge_list(g)
    assert edge_list(BAShapeDataset(seed=5, **kw)[0]) != edge_list(g)  # another seed is not the cached graph
    looped = BAShapeDataset(seed=4, transform=topograph.add_self_loop, **kw)[0]
    assert looped.num_edges() == g.num_edges() + g.num_nodes()


def test_ba_community_structure():
    ds = BACommunityDataset(num_base_nodes=40, num_base_edges_per_node=3, num_motifs=8, perturb_ratio=0.0,
                            num_inter_edges=30, seed=0, verbose=False)
    g = ds[0]
    labels = g.ndata["label"]
    assert ds.num_classes == 8 and g.num_nodes() == 2 * (40 + 5 * 8)
    assert g.num_edges() == 2 * (3 * 37 + 7 * 8) + 30
    assert labels.dtype == torch.int64 and g.ndata["feat"].shape == (160, 10)
    check_ba_shapes(g, 40, 3, 8, offset=0)
    check_ba_shapes(g, 40, 3, 8, offset=4)
    first = (labels < 4).tolist()
    across = [(first[u], first[v]) for u, v in edge_list(g) if first[u] != first[v]]
    assert across == [(True, False)] * 30  # the joining edges, all from the first community to the second


def test_ba_community_features():
    g = BACommunityDataset(seed=1, verbose=False)[0]
    feat, first = g.ndata["feat"], g.ndata["label"] < 4
    assert feat.dtype == torch.float64 and feat.shape == (1400, 10) and int(first.sum()) == 700
    for rows, mean in ((feat[first], -1.0), (feat[~first], 1.0)):  # 700 draws each: the bounds are > 5 sigma
        assert torch.allclose(rows.mean(0), torch.tensor([mean] * 2 + [0.0] * 8, dtype=torch.float64), atol=0.2)
        assert torch.allclose(rows.var(0), torch.tensor([0.5] * 2 + [1.0] * 8, dtype=torch.float64), atol=0.3)


def tree_part(g, height):
    tree = undirected(g, g.ndata["label"] == 0)
    assert tree.number_of_nodes() == 2 ** (height + 1) - 1 and nx.is_tree(tree)
    assert sorted(d for _, d in tree.degree()) == [1] * 2 ** height + [2] + [3] * (2 ** height - 2)
    return tree


def test_tree_cycles_structure():
    for size in (6, 8):  # DGL's motif is a 6-cycle whatever cycle_size; here a cycle of cycle_size
        ds = TreeCycleDataset(tree_height=4, num_motifs=6, cycle_size=size, perturb_ratio=0.0, seed=2, verbose=False)
        g = ds[0]
        labels = g.ndata["label"]
        assert ds.num_classes == 2 and torch.bincount(labels).tolist() == [31, 6 * size]
        assert torch.equal(g.ndata["feat"], torch.ones(31 + 6 * size, 1))
        tree_part(g, 4)
        cycles = list(motifs(g, labels == 1))
        assert len(cycles) == 6 and all(c.number_of_nodes() == size and nx.is_isomorphic(c, nx.cycle_graph(size))
                                        for c in cycles)
        inside = torch.tensor([labels[u] == 1 and labels[v] == 1 for u, v in edge_list(g)])
        out_deg = torch.bincount(g.edges()[0][inside], minlength=g.num_nodes())
        assert bool((out_deg[labels == 1] == 1).all())  # each cycle runs one way round
        ties = [(u, v) for u, v in edge_list(g) if labels[u] != labels[v]]
        assert all(labels[u] == 1 for u, _ in ties) and 6 <= len(ties) <= 12  # one tie each, a second at random
        assert g.num_edges() == 30 + 6 * size + len(ties)


def test_tree_grids_structure():
    ds = TreeGridDataset(tree_height=3, num_motifs=4, grid_size=3, perturb_ratio=0.0, seed=0, verbose=False)
    g = ds[0]
    labels = g.ndata["label"]
    assert torch.bincount(labels).tolist() == [15, 36] and g.num_edges() == 14 + 4 * (12 + 1)
    tree_part(g, 3)
    grids = list(motifs(g, labels == 1))
    assert len(grids) == 4 and all(nx.is_isomorphic(piece, nx.grid_2d_graph(3, 3)) for piece in grids)
    noisy = TreeGridDataset(tree_height=3, num_motifs=4, seed=0, verbose=False)[0]  # DGL's default ratio 0.1
    assert noisy.num_edges() == 66 + 6 and simple_without_loops(noisy)


def test_bad_arguments_named():
    with pytest.raises(topograph.DGLError, match="num_motifs"):
        BAShapeDataset(num_motifs=0)
    with pytest.raises(topograph.DGLError, match="num_base_edges_per_node"):
        BACommunityDataset(num_base_nodes=5, num_base_edges_per_node=5)
    with pytest.raises(topograph.DGLError, match="perturb_ratio cannot exceed"):
        TreeGridDataset(tree_height=1, num_motifs=1, grid_size=2, perturb_ratio=10.0, verbose=False)
    with pytest.raises(topograph.DGLError, match="perturb_ratio"):
        TreeGridDataset(perturb_ratio=-0.5)
    with pytest.raises(topograph.DGLError, match="cycle_size"):
        TreeCycleDataset(cycle_size=3)
    with pytest.raises(topograph.DGLError, match="seed"):
        TreeCycleDataset(seed="zero")
    with pytest.raises(topograph.DGLError, match="n_communities"):
        SBMMixtureDataset(2, 10, 3)
    with pytest.raises(topograph.DGLError, match="pq"):
        SBMMixtureDataset(2, 10, 2, pq="Appendix_D")
    with pytest.raises(topograph.DGLError, match="pq"):
        SBMMixtureDataset(2, 10, 2, pq=[(1.0, 2.0)])


def test_sbm_mixture():
    np.random.seed(0)
    random.seed(0)
    ds = SBMMixture(3, 40, 2, rng=np.random.RandomState(0))
    assert len(ds) == 3
    for g, lg, deg, lg_deg, pm_pd in (ds[i] for i in range(3)):
        pairs = edge_list(g)
        assert g.num_nodes() == 40 and sorted(pairs) == sorted((v, u) for u, v in pairs)  # symmetric
        # the line graph without backtracking, by brute force over pairs of consecutive edges
        want = [(i, j) for i, (u, v) in enumerate(pairs) for j, (x, w) in enumerate(pairs) if x == v and w != u]
        assert lg.num_nodes() == g.num_edges() and sorted(edge_list(lg)) == want
        assert deg.dtype == torch.float32 and torch.equal(deg, g.in_degrees().float())
        assert torch.equal(lg_deg, lg.in_degrees().float()) and torch.equal(pm_pd, g.edges()[0])
    bg, blg, deg, lg_deg, pm_pd = ds.collate_fn([ds[0], ds[2]])
    assert bg.batch_size == 2 and bg.num_nodes() == 80
    assert blg.num_nodes() == ds[0][1].num_nodes() + ds[2][1].num_nodes()
    assert isinstance(deg, np.ndarray) and deg.shape == (80,) and lg_deg.shape == (blg.num_nodes(),)
    assert np.array_equal(pm_pd, np.concatenate([ds[0][4].numpy(), ds[2][4].numpy() + 40]))
    np.random.seed(0)
    random.seed(0)
    again = SBMMixtureDataset(3, 40, 2, rng=np.random.RandomState(0))
    assert all(edge_list(again[i][0]) == edge_list(ds[i][0]) for i in range(3))
    # q = 0: no edge between the two communities; p = 0: only such edges
    inner, outer = SBMMixtureDataset(2, 200, 2, pq=[(6.0, 0.0), (0.0, 6.0)], rng=np.random.RandomState(1))
    assert inner[0].num_edges() > 0 and all((u < 100) == (v < 100) for u, v in edge_list(inner[0]))
    assert outer[0].num_edges() > 0 and all((u < 100) != (v < 100) for u, v in edge_list(outer[0]))


@pytest.fixture
def global_generators():
    """DGL's BACommunityDataset and SBM draw from (and seed) NumPy's and Python's global generators: put them
    back afterwards."""
    state = np.random.get_state(), random.getstate()
    yield
    np.random.set_state(state[0])
    random.setstate(state[1])


@pytest.mark.parametrize("name", ["BAShapeDataset", "BACommunityDataset", "TreeCycleDataset", "TreeGridDataset"])
def test_against_dgl(name, global_generators):
    dgl = pytest.importorskip("dgl")
    for seed in (0, 7):
        ours = getattr(topograph.data, name)(seed=seed, verbose=False)
        theirs = getattr(dgl.data, name)(seed=seed, verbose=False, force_reload=True)
        assert (len(ours), ours.num_classes) == (len(theirs), theirs.num_classes)
        a, b = ours[0], theirs[0]
        assert a.num_nodes() == b.num_nodes() and edge_list(a) == edge_list(b)
        assert sorted(a.ndata.keys()) == sorted(b.ndata.keys()) == ["feat", "label"]
        for key in ("label", "feat"):
            assert a.ndata[key].dtype == b.ndata[key].dtype and torch.equal(a.ndata[key], b.ndata[key])


def test_sbm_against_dgl(global_generators):
    """DGL's SBMMixtureDataset drops its rng (each graph's edges come from a fresh unseeded RandomState), so
    DGL's own procedure stands in: its (p, q) draws from the seeded global generators, then its sbm with the
    RandomState, from_scipy, line_graph and in-degrees, and its collate_fn."""
    dgl = pytest.importorskip("dgl")
    from dgl.data.sbm import sbm

    for seed in (0, 3):
        np.random.seed(seed)
        random.seed(seed)
        ours = SBMMixtureDataset(3, 60, 3, rng=np.random.RandomState(seed))
        np.random.seed(seed)
        random.seed(seed)
        fake = SimpleNamespace(_avg_deg=3, _k=2, _n_nodes=60)
        pq = [dgl.data.SBMMixtureDataset._appendix_c(fake) for _ in range(3)]
        rng = np.random.RandomState(seed)
        items = []
        for p, q in pq:
            g = dgl.from_scipy(sbm(3, 20, p, q, rng))
            lg = dgl.line_graph(g, backtracking=False)
            items.append((g, lg, g.in_degrees().float(), lg.in_degrees().float(), g.edges()[0]))
        for mine, theirs in zip((ours[i] for i in range(3)), items):
            assert edge_list(mine[0]) == edge_list(theirs[0]) and edge_list(mine[1]) == edge_list(theirs[1])
            assert all(torch.equal(x, y) for x, y in zip(mine[2:], theirs[2:]))
        ca, cb = ours.collate_fn([ours[i] for i in range(3)]), dgl.data.SBMMixtureDataset.collate_fn(fake, items)
        assert edge_list(ca[0]) == edge_list(cb[0]) and edge_list(ca[1]) == edge_list(cb[1])
        assert all(x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(ca[2:], cb[2:]))


def test_gnn_explainer_example_on_ba_shapes():
    """DGL's GNNExplainer example: train a 3-layer GNN on all of BA-SHAPES (Adam, lr 0.001, 500 epochs, hidden
    size 40), then explain the first house-middle node over its 3-hop in-subgraph. The features are all ones,
    so only structure tells the classes: the accuracy must pass predicting the majority class (base nodes) by far.
    GraphConv layers stand in for the example's own mean-aggregating layer (house roofs have no in-edges:
    allow_zero_in_degree)."""
    import torch.nn.functional as F

    torch.manual_seed(0)
    ds = BAShapeDataset(seed=0, verbose=False)
    g = ds[0]
    labels, feat = g.ndata["label"], g.ndata["feat"]

    class Model(torch.nn.Module):
        def __init__(self, in_dim, out_dim, hid_dim=40):
            super().__init__()
            dims = [in_dim, hid_dim, hid_dim, out_dim]
            self.convs = torch.nn.ModuleList(topograph.nn.GraphConv(i, o, allow_zero_in_degree=True)
                                             for i, o in zip(dims, dims[1:]))

        def forward(self, graph, feat, eweight=None):
            h = feat
            for i, conv in enumerate(self.convs):
                h = conv(graph, h, edge_weight=eweight)
                h = F.relu(h) if i < len(self.convs) - 1 else h
            return h

    model = Model(feat.shape[-1], ds.num_classes)
    optim = torch.optim.Adam(model.parameters(), lr=0.001)
    for _ in range(500):
        logits = model(g, feat)
        loss = F.cross_entropy(logits, labels)
        optim.zero_grad()
        loss.backward()
        optim.step()
    with torch.no_grad():
        accuracy = (model(g, feat).argmax(1) == labels).float().mean().item()
    majority = torch.bincount(labels).max().item() / labels.numel()
    assert abs(majority - 300 / 700) < 1e-9
    assert accuracy > majority + 0.3  # measured: 0.95 (majority: 0.43)

    node = int((labels == 1).nonzero()[0])
    explainer = topograph.nn.GNNExplainer(model, num_hops=3, log=False)
    new_id, sg, feat_mask, edge_mask = explainer.explain_node(node, g, feat)
    assert int(sg.ndata[topograph.NID][new_id]) == node
    assert feat_mask.numel() == feat.shape[1]  # [D], squeezed as DGL's: a 0-d tensor for D = 1
    assert edge_mask.shape == (sg.num_edges(),) and sg.num_edges() > 0
    for mask in (feat_mask, edge_mask):
        assert bool(((mask >= 0) & (mask <= 1)).all())
