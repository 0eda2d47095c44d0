"""DGL 2.1's smaller top-level names (homophily measures, norm_by_dst, laplacian_lambda_max, slice_batch,
radius_graph, dgl.random, apply_each, the edgewise copy_u / u_add_v with etype, to_simple_graph): each against a
reference written here, errors named, and equal to DGL 2.1's where dgl imports."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

GEN = torch.Generator().manual_seed(0)
U, V = torch.randint(0, 30, (120,), generator=GEN), torch.randint(0, 30, (120,), generator=GEN)
Y = torch.randint(0, 3, (30,), generator=GEN)
X = torch.rand(12, 2, generator=GEN)


def test_homophily_by_definition():
    g = topograph.graph((U, V), num_nodes=30)
    same = (Y[U] == Y[V]).float()
    assert topograph.edge_homophily(g, Y) == pytest.approx(same.mean().item())
    per_node = [same[V == n].mean().item() if bool((V == n).any()) else 0.0 for n in range(30)]
    assert topograph.node_homophily(g, Y) == pytest.approx(sum(per_node) / 30)
    with pytest.raises(topograph.DGLError, match="one label per node"):
        topograph.edge_homophily(g, Y[:5])


def test_small_utilities():
    g = topograph.graph((U, V), num_nodes=30)
    indeg = torch.bincount(V, minlength=30).float()
    torch.testing.assert_close(topograph.norm_by_dst(g), 1.0 / indeg[V])
    ring = topograph.graph((torch.arange(6), (torch.arange(6) + 1) % 6))  # its Laplacian's eigenvalues: 1 - cos
    assert topograph.laplacian_lambda_max(ring)[0] == pytest.approx(2.0)
    small = topograph.graph((torch.tensor([0, 1]), torch.tensor([1, 2])), num_nodes=4)
    small.ndata["h"], g.ndata["h"] = torch.arange(4.0), torch.arange(30.0) + 4
    b = topograph.batch([small, g])
    s = topograph.slice_batch(b, 1, store_ids=True)
    assert [x.tolist() for x in s.edges()] == [U.tolist(), V.tolist()] and torch.equal(s.ndata["h"], g.ndata["h"])
    assert s.ndata[topograph.NID].tolist() == list(range(4, 34))
    with pytest.raises(topograph.DGLError, match="gid"):
        topograph.slice_batch(b, 2)
    r, dist = topograph.radius_graph(X, 0.4, get_distances=True)
    d = torch.cdist(X, X)
    want = [(i, j) for i in range(12) for j in range(12) if i != j and d[i, j] <= 0.4]
    assert list(zip(*[t.tolist() for t in r.edges()])) == want
    torch.testing.assert_close(dist.view(-1), torch.tensor([float(d[i, j]) for i, j in want]))
    assert topograph.apply_each({"a": torch.ones(2)}, torch.mul, 3)["a"].tolist() == [3.0, 3.0]
    assert topograph.apply_each([torch.ones(1)], torch.neg)[0].tolist() == [-1.0]
    h = topograph.heterograph({("u", "r", "v"): ([0, 1], [1, 0]), ("v", "s", "u"): ([0], [0])})
    assert topograph.copy_u(h, torch.tensor([5.0, 6.0]), etype="r").tolist() == [5.0, 6.0]
    summed = topograph.u_add_v(h, torch.tensor([1.0, 2.0]), torch.tensor([10.0, 20.0]), etype="r")
    assert summed.tolist() == [21.0, 12.0]
    assert topograph.to_simple_graph is topograph.to_simple


def test_random():
    topograph.random.seed(3)
    first = topograph.random.choice(10, 5, replace=False)
    topograph.random.seed(3)
    assert torch.equal(first, topograph.random.choice(10, 5, replace=False)) and len(set(first.tolist())) == 5
    rows = topograph.random.choice(torch.arange(100, 110), (2, 3), prob=torch.tensor([0.0] * 9 + [1.0]))
    assert rows.shape == (2, 3) and set(rows.view(-1).tolist()) == {109}
    with pytest.raises(ValueError, match="without replacement"):
        topograph.random.choice(3, 5, replace=False)


def test_against_dgl():
    dgl = pytest.importorskip("dgl")
    gt, gd = topograph.graph((U, V), num_nodes=30), dgl.graph((U, V), num_nodes=30)
    for f in ("edge_homophily", "node_homophily", "linkx_homophily", "adjusted_homophily"):
        assert getattr(topograph, f)(gt, Y) == pytest.approx(getattr(dgl, f)(gd, Y), abs=1e-6)
    torch.testing.assert_close(topograph.norm_by_dst(gt), dgl.norm_by_dst(gd))
    bt = topograph.batch([gt, topograph.graph((U[:9] % 5, V[:9] % 5), num_nodes=5)])
    bd = dgl.batch([gd, dgl.graph((U[:9] % 5, V[:9] % 5), num_nodes=5)])
    assert topograph.laplacian_lambda_max(bt) == pytest.approx(dgl.laplacian_lambda_max(bd), abs=1e-4)
    for gid in (0, 1):
        st, sd = topograph.slice_batch(bt, gid, store_ids=True), dgl.slice_batch(bd, gid, store_ids=True)
        assert [x.tolist() for x in st.edges()] == [x.tolist() for x in sd.edges()]
        assert torch.equal(st.ndata[topograph.NID], sd.ndata[dgl.NID])
    rt, dt = topograph.radius_graph(X, 0.4, get_distances=True)
    rd, dd = dgl.radius_graph(X, 0.4, get_distances=True)
    assert [x.tolist() for x in rt.edges()] == [x.tolist() for x in rd.edges()]
    torch.testing.assert_close(dt, dd)


def test_graph_building_modules():
    x = torch.rand(10, 3, generator=torch.Generator().manual_seed(4))
    assert [t.tolist() for t in topograph.nn.KNNGraph(3)(x).edges()] == \
        [t.tolist() for t in topograph.knn_graph(x, 3).edges()]
    assert [t.tolist() for t in topograph.nn.SegmentedKNNGraph(2)(x, [4, 6]).edges()] == \
        [t.tolist() for t in topograph.segmented_knn_graph(x, 2, [4, 6]).edges()]
    g, d = topograph.nn.RadiusGraph(0.5)(x, get_distances=True)
    assert g.num_edges() == d.shape[0] == topograph.radius_graph(x, 0.5).num_edges()
    assert topograph.data.KarateClub is topograph.data.KarateClubDataset


def test_utils_expand_as_pair_and_check_eq_shape():
    """dgl.utils.expand_as_pair / check_eq_shape, which conv modules written in DGL's style import: a tuple as
    it is, a block's destinations its first rows (per type for a dict), else the input twice."""
    from topograph.utils import check_eq_shape, expand_as_pair

    x = torch.arange(8.0).view(4, 2)
    pair = (x, x[:1])
    assert expand_as_pair(pair) is pair
    src, dst = expand_as_pair(x)
    assert src is x and dst is x
    block = topograph.to_block(topograph.graph(([1, 2, 3], [0, 0, 1]), num_nodes=4), torch.tensor([0, 1]))
    src, dst = expand_as_pair(x, block)
    assert src is x and torch.equal(dst, x[:2])
    h = topograph.heterograph({("a", "r", "b"): ([0, 1], [0, 0])})
    hb = topograph.to_block(h, {"b": torch.tensor([0])})
    _, dsts = expand_as_pair({"a": torch.ones(2, 3), "b": torch.ones(hb.num_src_nodes("b"), 3)}, hb)
    assert dsts["b"].shape == (1, 3) and dsts["a"].shape == (0, 3)
    check_eq_shape((x, x[:1]))
    with pytest.raises(topograph.DGLError, match="should be equal"):
        check_eq_shape((x, torch.ones(2, 3)))
