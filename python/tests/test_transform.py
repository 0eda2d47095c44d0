"""to_simple, to_bidirected, add_self_loop's features, has_edges_between and find_edges against references
written with Python sets and loops over the edge list: on the conftest graphs (multi-edges, self loops,
isolated nodes, no edges), in int32 and int64, and on batches (which stay batches, each graph's edges the
reference's for that graph)."""
import pytest
import torch

import topograph
from conftest import GRAPHS, build, make_edges


def pairs(g, etype=None):
    u, v = g.edges(etype=etype)
    return list(zip(u.tolist(), v.tolist()))


def test_to_simple_merges_parallel_edges_sorted(graph_name, idtype):
    g, src, dst, n = build(graph_name, idtype)
    g.ndata["x"] = torch.randn(n, 2)
    g.edata["w"] = torch.randn(src.numel(), 3)
    old = list(zip(src.tolist(), dst.tolist()))
    distinct = sorted(set(old))
    for aggregator in ("arbitrary", "sum", "mean"):
        sg, mapping = topograph.to_simple(g, writeback_mapping=True, copy_edata=True, aggregator=aggregator)
        assert pairs(sg) == distinct and sg.num_nodes() == n and sg.idtype == idtype
        assert sg.edata["count"].tolist() == [old.count(p) for p in distinct] and sg.edata["count"].dtype == idtype
        assert mapping.tolist() == [distinct.index(p) for p in old] and mapping.dtype == idtype
        assert sg.ndata["x"] is g.ndata["x"]
        for i, p in enumerate(distinct):
            rows = g.edata["w"][[e for e, q in enumerate(old) if q == p]]
            want = {"arbitrary": rows[0], "sum": rows.sum(0), "mean": rows.mean(0)}[aggregator]  # lowest edge id
            torch.testing.assert_close(sg.edata["w"][i], want)
    bare = g.to_simple(return_counts=None, copy_ndata=False)
    assert pairs(bare) == distinct and len(bare.edata) == 0 and len(bare.ndata) == 0


def test_to_bidirected_is_the_symmetric_simple_graph(graph_name, idtype):
    g, src, dst, n = build(graph_name, idtype)
    g.ndata["x"] = torch.randn(n, 2)
    g.edata["w"] = torch.randn(src.numel(), 1)
    both = set(zip(src.tolist(), dst.tolist())) | set(zip(dst.tolist(), src.tolist()))
    bg = topograph.to_bidirected(g)
    assert pairs(bg) == sorted(both) and bg.num_nodes() == n and bg.idtype == idtype
    assert len(bg.ndata) == 0 and len(bg.edata) == 0  # copy_ndata=False by default; edge features never
    assert topograph.to_bidirected(g, copy_ndata=True).ndata["x"] is g.ndata["x"]


def test_add_reverse_edges_appends_each_edge_turned(graph_name, idtype):
    g, src, dst, n = build(graph_name, idtype)
    g.ndata["x"] = torch.randn(n, 2)
    g.edata["w"] = torch.randn(src.numel(), 3)
    old = list(zip(src.tolist(), dst.tolist()))
    for exclude_self in (True, False):
        turned = [(v, u) for u, v in old if not (exclude_self and u == v)]
        rg = topograph.add_reverse_edges(g, copy_edata=True, exclude_self=exclude_self)
        assert pairs(rg) == old + turned and rg.idtype == idtype and rg.ndata["x"] is g.ndata["x"]
        rows = [e for e, (u, v) in enumerate(old) if not (exclude_self and u == v)]
        torch.testing.assert_close(rg.edata["w"], torch.cat([g.edata["w"], g.edata["w"][rows]]))
    bare = topograph.add_reverse_edges(g, copy_ndata=False)
    assert len(bare.ndata) == 0 and len(bare.edata) == 0
    h = topograph.heterograph({("u", "f", "u"): ([0, 1], [1, 1]), ("u", "r", "i"): ([0], [2])})
    with pytest.raises(topograph.DGLError, match=r"relation \('u', 'r', 'i'\) joins two node types"):
        topograph.add_reverse_edges(h)
    kept = topograph.add_reverse_edges(h, ignore_bipartite=True)
    assert pairs(kept, "f") == [(0, 1), (1, 1), (1, 0)] and pairs(kept, "r") == [(0, 2)]
    with pytest.raises(topograph.DGLError, match="a batch of 2 graphs; unbatch it first"):
        topograph.add_reverse_edges(topograph.batch([g, g]))


def test_transforms_keep_a_batch_a_batch():
    graphs = []
    for name in GRAPHS:
        src, dst, n = make_edges(name)
        graphs.append(topograph.graph((src, dst), num_nodes=n))
    graphs.insert(2, topograph.graph(([], []), num_nodes=0))
    batched = topograph.batch(graphs)
    for transform in (topograph.to_bidirected, topograph.to_simple, lambda g: topograph.add_self_loop(g)):
        out = transform(batched)
        assert out.batch_size == len(graphs)
        assert out.batch_num_nodes().tolist() == batched.batch_num_nodes().tolist()
        members = topograph.unbatch(out)
        for member, g in zip(members, graphs):
            assert pairs(member) == pairs(transform(g))
        offsets = torch.cumsum(batched.batch_num_nodes(), 0) - batched.batch_num_nodes()
        glued = [(u + int(o), v + int(o)) for m, o in zip(members, offsets) for u, v in pairs(m)]
        assert pairs(out) == glued  # each graph's edges in turn: for to_bidirected / to_simple, DGL's order


def test_transforms_on_several_relations():
    hg = topograph.heterograph({("user", "follows", "user"): ([0, 1, 1, 2], [1, 0, 0, 2]),
                                ("user", "plays", "game"): ([0, 2, 0], [1, 0, 1])})
    sg, mapping = topograph.to_simple(hg, writeback_mapping=True)
    assert pairs(sg, "follows") == [(0, 1), (1, 0), (2, 2)] and pairs(sg, "plays") == [(0, 1), (2, 0)]
    assert mapping[("user", "follows", "user")].tolist() == [0, 1, 1, 2]
    assert mapping[("user", "plays", "game")].tolist() == [0, 1, 0]
    with pytest.raises(ValueError, match="joins two node types"):
        topograph.to_bidirected(hg)
    bi = topograph.to_bidirected(topograph.edge_type_subgraph(hg, ["follows"]))
    assert pairs(bi) == [(0, 1), (1, 0), (2, 2)]


def test_add_self_loop_fills_features_as_dgl():
    g = topograph.graph(([0, 1, 2], [1, 1, 1]), num_nodes=4)  # node 1 has three in-edges, 0, 2 and 3 none
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, -6.0]])
    b = torch.tensor([7, 8, 9])
    g.edata["a"], g.edata["b"] = a, b
    loops_of = {  # fill_data -> the loop rows of 'a' for nodes 0..3
        7.5: [[7.5, 7.5]] * 4,
        "sum": [[0, 0], [9, 0], [0, 0], [0, 0]], "mean": [[0, 0], [3, 0], [0, 0], [0, 0]],
        "max": [[0, 0], [5, 4], [0, 0], [0, 0]], "min": [[0, 0], [1, -6], [0, 0], [0, 0]]}
    for fill, loops in loops_of.items():
        out = topograph.add_self_loop(g, fill_data=fill)
        assert pairs(out) == [(0, 1), (1, 1), (2, 1), (0, 0), (1, 1), (2, 2), (3, 3)]
        torch.testing.assert_close(out.edata["a"], torch.cat([a, torch.tensor(loops, dtype=a.dtype)]))
        assert out.edata["b"].dtype == torch.int64
    assert topograph.add_self_loop(g, fill_data=7.5).edata["b"].tolist() == [7, 8, 9, 7, 7, 7, 7]  # cast, as DGL
    named = g.add_self_loop(edge_feat_names=["a"], fill_data=2.0)  # the method, DGL's signature
    assert named.edata["b"].tolist() == [7, 8, 9, 0, 0, 0, 0]  # features not named: rows of 0
    torch.testing.assert_close(named.edata["a"][3:], torch.full((4, 2), 2.0))
    x = a.clone().requires_grad_()
    g.edata["a"] = x
    topograph.add_self_loop(g, fill_data="sum").edata["a"].sum().backward()
    assert x.grad.tolist() == [[2.0, 2.0]] * 3  # once as itself, once through node 1's loop
    with pytest.raises(ValueError, match="fill_data must be a number or one of"):
        topograph.add_self_loop(g, fill_data="prod")
    with pytest.raises(KeyError, match="'c'"):
        topograph.add_self_loop(g, edge_feat_names=["c"])
    assert pairs(g.remove_self_loop()) == [(0, 1), (2, 1)] and pairs(topograph.remove_self_loop(g)) == [(0, 1), (2, 1)]


def test_has_edges_between_and_find_edges(graph_name, idtype):
    g, src, dst, n = build(graph_name, idtype)
    present = set(zip(src.tolist(), dst.tolist()))
    u = torch.arange(n).repeat_interleave(n)
    v = torch.arange(n).repeat(n)
    got = g.has_edges_between(u.to(idtype), v.to(idtype))
    assert got.dtype == torch.bool
    assert got.tolist() == [(a, b) in present for a, b in zip(u.tolist(), v.tolist())]
    assert g.has_edges_between(n - 1, 0) is ((n - 1, 0) in present) and g.has_edges_between(0, 0) is ((0, 0) in present)
    assert g.has_edges_between(torch.tensor([0, 0]), 0).tolist() == [(0, 0) in present] * 2
    eids = torch.arange(src.numel()).flip(0)
    fu, fv = g.find_edges(eids.to(idtype))
    assert fu.tolist() == src[eids].tolist() and fv.tolist() == dst[eids].tolist() and fu.dtype == idtype
    empty_u, empty_v = g.find_edges([])
    assert empty_u.numel() == 0 and empty_v.numel() == 0
    if src.numel():
        assert [t.tolist() for t in g.find_edges(0)] == [[src[0].item()], [dst[0].item()]]
    with pytest.raises(ValueError, match=f"find_edges: edge id {src.numel()} out of range"):
        g.find_edges([0, src.numel()])
    with pytest.raises(ValueError, match=f"has_edges_between: v id {n} out of range"):
        g.has_edges_between(0, n)
    with pytest.raises(ValueError, match="has_edges_between: u id -1"):
        g.has_edges_between([-1], [0])
    assert not hasattr(g, "has_edge_between")  # removed in DGL 1.0


def test_transform_errors():
    block = topograph.to_block(topograph.graph(([0, 1], [1, 2])), torch.tensor([1, 2]))
    for transform in (topograph.to_simple, topograph.to_bidirected):
        with pytest.raises(ValueError, match="not defined for a block"):
            transform(block)
    g = topograph.graph(([0, 1], [1, 2]))
    with pytest.raises(ValueError, match="aggregator must be"):
        topograph.to_simple(g, aggregator="max")
    with pytest.raises(ValueError, match="2 source ids but 3 destination ids"):
        g.has_edges_between([0, 1], [1, 2, 0])
    with pytest.raises(TypeError, match="topograph graph"):
        topograph.to_bidirected("g")
