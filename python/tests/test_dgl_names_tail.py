"""DGL 2.1 names with small bodies: dgl.ops.copy_e / gather_mm / segment_mm, dgl.sparse's sp_* / spsp_* names of
the element-wise ops, DGLGraph.inc / incidence_matrix, and the methods DGLGraph.select_topk / to_networkx: against
references written here, and against DGL 2.1 where it imports (those cases skip without it)."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

import topograph.sparse as tsp


def test_copy_e_gather_mm_segment_mm():
    g = topograph.graph(([0, 1, 1], [1, 2, 2]), num_nodes=4)
    x = torch.randn(3, 2)
    assert topograph.ops.copy_e(g, x) is x
    with pytest.raises(ValueError, match="one row per edge"):
        topograph.ops.copy_e(g, torch.randn(4, 2))
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(7, 3, generator=gen, requires_grad=True)
    b = torch.randn(4, 3, 5, generator=gen, requires_grad=True)
    idx = torch.tensor([3, 0, 3, 1, 1, 0, 3])
    out = topograph.ops.gather_mm(a, b, idx_b=idx)
    want = torch.stack([a[i] @ b[idx[i]] for i in range(7)])
    torch.testing.assert_close(out, want)
    grads = torch.autograd.grad(out.square().sum(), (a, b))
    torch.testing.assert_close(grads, torch.autograd.grad(want.square().sum(), (a, b)))
    seglen = torch.tensor([2, 0, 4, 1])
    out = topograph.ops.segment_mm(a, b, seglen)
    want = torch.cat([a[:2] @ b[0], a[2:6] @ b[2], a[6:] @ b[3]])
    torch.testing.assert_close(out, want)
    with pytest.raises(IndexError, match=r"idx_b\[1\] = 4 is not in \[0, 4\)"):
        topograph.ops.gather_mm(a, b, idx_b=torch.tensor([0, 4, 0, 0, 0, 0, 0]))
    with pytest.raises(ValueError, match="add up to 6, but the value has 7 rows"):  # DGL 2.1 drops row 6 silently
        topograph.ops.segment_mm(a, b, torch.tensor([2, 0, 4, 0]))
    with pytest.raises(ValueError, match="3 segment lengths for 4 matrices"):
        topograph.ops.segment_mm(a, b, torch.tensor([3, 0, 4]))
    with pytest.raises(ValueError, match=r"\[N, D1\] and b \[R, D1, D2\]"):
        topograph.ops.gather_mm(a, b[:, :2], idx_b=idx)


def test_sparse_op_names_are_the_ops():
    A = tsp.spmatrix(torch.tensor([[0, 1, 1], [1, 0, 2]]), torch.tensor([1.0, 2.0, 3.0]), (2, 3))
    for name, op in [("sp_add", tsp.add), ("sp_sub", tsp.sub), ("sp_mul", tsp.mul), ("sp_div", tsp.div),
                     ("sp_power", tsp.power), ("spsp_add", tsp.add), ("spsp_mul", tsp.mul), ("spsp_div", tsp.div)]:
        assert getattr(tsp, name) is op
    assert torch.equal(tsp.sp_power(A, 2).to_dense(), A.to_dense() ** 2)


def incidence_reference(u, v, n, typestr):
    m = torch.zeros(n, len(u))
    for e, (s, d) in enumerate(zip(u, v)):
        if typestr in ("in", "both"):
            m[d, e] += 1
        if typestr == "out":
            m[s, e] += 1
        if typestr == "both":
            m[s, e] -= 1
    return m


def test_incidence_matrix_and_methods():
    u, v = [0, 1, 1, 2, 3], [1, 2, 2, 2, 0]  # a multi-edge and a self loop
    g = topograph.graph((torch.tensor(u), torch.tensor(v)), num_nodes=5)
    for typestr in ("in", "out", "both"):
        m = g.inc(typestr)
        assert m.layout == torch.sparse_coo and m.is_coalesced() and m.shape == (5, 5)
        assert torch.equal(m.to_dense(), incidence_reference(u, v, 5, typestr))
    assert torch.equal(g.incidence_matrix("in").to_dense(), g.inc("in").to_dense())
    hg = topograph.heterograph({("a", "r", "b"): ([0, 1], [2, 0])}, num_nodes_dict={"a": 2, "b": 3})
    assert hg.inc("in").shape == (3, 2) and hg.inc("out").shape == (2, 2)
    with pytest.raises(topograph.DGLError, match="one node type at both ends"):
        hg.inc("both")
    with pytest.raises(topograph.DGLError, match="typestr must be"):
        g.inc("all")
    g.edata["w"] = torch.arange(5.0)
    assert torch.equal(g.select_topk(1, "w").edata[topograph.EID], topograph.sampling.select_topk(g, 1, "w").edata[
        topograph.EID])
    pytest.importorskip("networkx")
    assert g.to_networkx().number_of_edges() == 5


def test_against_dgl():
    dgl = pytest.importorskip("dgl")
    gen = torch.Generator().manual_seed(1)
    a, b = torch.randn(6, 3, generator=gen), torch.randn(3, 3, 2, generator=gen)
    idx = torch.tensor([2, 0, 2, 1, 0, 0])
    torch.testing.assert_close(topograph.ops.gather_mm(a, b, idx_b=idx), dgl.ops.gather_mm(a, b, idx_b=idx))
    seglen = torch.tensor([1, 3, 2])
    torch.testing.assert_close(topograph.ops.segment_mm(a, b, seglen), dgl.ops.segment_mm(a, b, seglen))
    u, v = torch.tensor([0, 1, 1, 2, 3]), torch.tensor([1, 2, 2, 2, 0])
    ours, theirs = topograph.graph((u, v), num_nodes=5), dgl.graph((u, v), num_nodes=5)
    for typestr in ("in", "out", "both"):
        assert torch.equal(ours.inc(typestr).to_dense(), theirs.inc(typestr).to_dense())


def test_schemes_block_type_ids_and_pinning():
    g = topograph.graph(([0, 1], [1, 2]))
    g.ndata["x"], g.edata["w"] = torch.randn(3, 4), torch.ones(2, dtype=torch.int64)
    assert g.node_attr_schemes() == {"x": ((4,), torch.float32)} and g.edge_attr_schemes()["w"].dtype == torch.int64
    assert g.edge_attr_schemes()["w"].shape == ()
    block = topograph.to_block(g, torch.tensor([1, 2]))
    assert (block.get_ntype_id_from_src("_N"), block.get_ntype_id_from_dst("_N"), g.get_ntype_id_from_dst("_N")) == (
        0, 1, 0)
    hg = topograph.heterograph({("a", "r", "b"): ([0], [1]), ("b", "s", "a"): ([0], [0])})
    hb = topograph.to_block(hg, {"a": torch.tensor([0]), "b": torch.tensor([1])})
    assert hb.get_ntype_id_from_src("b") == 1 and hb.get_ntype_id_from_dst("b") == 3  # sources first, as DGL's
    with pytest.raises(topograph.DGLError, match="not a destination node type"):
        hb.get_ntype_id_from_dst("c")
    assert not g.is_pinned() and g.unpin_memory_() is g
    with pytest.raises(topograph.DGLError, match="does not pin"):
        g.pin_memory_()
