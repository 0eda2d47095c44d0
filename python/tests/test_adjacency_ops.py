"""metapath_reachable_graph, adj_product_graph and adj_sum_graph (_adjacency_ops.py): edges and weights against
dense adjacency products and sums written here, the weights' gradients, errors named, and the same graphs as
DGL 2.1's where dgl imports (edge sets and weights; DGL orders a row's columns as its CSR kernels leave them)."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

DATA = {("a", "ab", "b"): (torch.tensor([0, 0, 1, 2, 2]), torch.tensor([0, 1, 1, 2, 3])),
        ("b", "ba", "a"): (torch.tensor([0, 1, 2, 3, 3]), torch.tensor([1, 2, 0, 2, 2]))}
COUNTS = {"a": 4, "b": 4}  # node 3 of type a joins nothing


def dense(u, v, shape, w=None):
    return torch.zeros(shape).index_put((u.long(), v.long()), torch.ones(u.numel()) if w is None else w,
                                        accumulate=True)


def weighted(lib, u, v, w, n=4):
    g = lib.graph((u, v), num_nodes=n)
    g.edata["w"] = w
    return g


def triples(g, weights=None):
    u, v = g.edges()
    w = [None] * u.numel() if weights is None else weights.tolist()
    return sorted(zip(u.tolist(), v.tolist(), [None if x is None else round(x, 5) for x in w]))


def test_metapath_reachable_graph_by_dense_product():
    g = topograph.heterograph(DATA, COUNTS)
    g.nodes["a"].data["h"] = torch.arange(4.0)
    m = topograph.metapath_reachable_graph(g, ["ab", "ba"])
    reach = dense(*DATA[("a", "ab", "b")], (4, 4)) @ dense(*DATA[("b", "ba", "a")], (4, 4))
    assert m.canonical_etypes == [("a", "_E", "a")] and torch.equal(m.ndata["h"], torch.arange(4.0))
    assert [t.tolist() for t in m.edges()] == [t.tolist() for t in torch.nonzero(reach, as_tuple=True)]
    bip = topograph.metapath_reachable_graph(g, ["ab"])
    assert bip.canonical_etypes == [("a", "_E", "b")] and bip.num_edges() == 5
    with pytest.raises(topograph.DGLError, match="ends at 'b'"):
        topograph.metapath_reachable_graph(g, ["ab", "ab"])


def test_adj_product_and_sum_by_dense_matrices():
    u1, v1, w1 = torch.tensor([0, 1, 1, 3]), torch.tensor([1, 2, 0, 1]), torch.tensor([1.0, 2.0, 3.0, 0.5])
    u2, v2, w2 = torch.tensor([1, 2, 0, 1, 1]), torch.tensor([2, 0, 0, 2, 3]), torch.tensor([4.0, 5.0, 6.0, 7.0, 1.5])
    w1.requires_grad_(), w2.requires_grad_()
    a, b = weighted(topograph, u1, v1, w1), weighted(topograph, u2, v2, w2)
    c = topograph.adj_product_graph(a, b, "w")
    ref = dense(u1, v1, (4, 4), w1) @ dense(u2, v2, (4, 4), w2)
    assert triples(c, c.edata["w"].detach()) == sorted(
        (i, j, round(float(ref[i, j]), 5)) for i, j in torch.nonzero(ref).tolist())
    cw = torch.randn(c.num_edges())
    got = torch.autograd.grad((c.edata["w"] * cw).sum(), [w1, w2])
    want = torch.autograd.grad((ref[c.edges()[0].long(), c.edges()[1].long()] * cw).sum(), [w1, w2])
    for x, y in zip(got, want):
        torch.testing.assert_close(x, y)
    s = topograph.adj_sum_graph([a, b], "w")
    total = dense(u1, v1, (4, 4), w1) + dense(u2, v2, (4, 4), w2)
    assert triples(s, s.edata["w"].detach()) == sorted(
        (i, j, round(float(total[i, j]), 5)) for i, j in torch.nonzero(total).tolist())
    with pytest.raises(topograph.DGLError, match="no edge feature 'x'"):
        topograph.adj_sum_graph([a, b], "x")
    with pytest.raises(ValueError, match="empty"):
        topograph.adj_sum_graph([], "w")


def test_against_dgl():
    dgl = pytest.importorskip("dgl")
    gt, gd = topograph.heterograph(DATA, COUNTS), dgl.heterograph(DATA, COUNTS)
    for path in (["ab", "ba"], ["ab"], ["ba", "ab", "ba"]):
        mt, md = topograph.metapath_reachable_graph(gt, path), dgl.metapath_reachable_graph(gd, path)
        assert [t.tolist() for t in mt.edges()] == [t.tolist() for t in md.edges()]
        assert mt.canonical_etypes == md.canonical_etypes and mt.ntypes == md.ntypes
    u1, v1, w1 = torch.tensor([0, 1, 1, 3]), torch.tensor([1, 2, 0, 1]), torch.tensor([1.0, 2.0, 3.0, 0.5])
    u2, v2, w2 = torch.tensor([1, 2, 0, 1, 1]), torch.tensor([2, 0, 0, 2, 3]), torch.tensor([4.0, 5.0, 6.0, 7.0, 1.5])
    for lib_t, lib_d in ((topograph.adj_product_graph, dgl.adj_product_graph),):
        t = lib_t(weighted(topograph, u1, v1, w1), weighted(topograph, u2, v2, w2), "w")
        d = lib_d(weighted(dgl, u1, v1, w1), weighted(dgl, u2, v2, w2), "w")
        assert triples(t, t.edata["w"]) == triples(d, d.edata["w"])
    t = topograph.adj_sum_graph([weighted(topograph, u1, v1, w1), weighted(topograph, u2, v2, w2)], "w")
    d = dgl.adj_sum_graph([weighted(dgl, u1, v1, w1), weighted(dgl, u2, v2, w2)], "w")
    assert triples(t, t.edata["w"]) == triples(d, d.edata["w"])
