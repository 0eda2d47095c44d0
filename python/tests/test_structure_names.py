"""DGL names a script calls that build graphs from graphs: out_subgraph, node_type_subgraph (_subgraph.py),
line_graph, khop_graph, knn_graph, segmented_knn_graph (_structure_ops.py) and the dgl.transforms callables
(transforms.py). Each is held to values derived by hand here (so it runs without DGL) and, where dgl imports
(PYTHONPATH=bench/peers/.venv/lib/python3.11/site-packages), to DGL 2.1 itself on the same inputs."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

from conftest import GRAPHS, make_edges, typed_graph

NID, EID = topograph.NID, topograph.EID


def need_dgl():
    return pytest.importorskip("dgl")


def lists(*tensors):
    return [t.tolist() for t in tensors]


def simple_graph(lib, idtype=torch.int64):
    g = lib.graph((torch.tensor([3, 3, 0, 2, 5], dtype=idtype), torch.tensor([1, 4, 2, 5, 0], dtype=idtype)),
                  num_nodes=7, idtype=idtype)
    g.ndata["h"] = torch.arange(7.0).view(7, 1)
    g.edata["w"] = torch.arange(5.0) * 10
    return g


def three_relations(lib):
    return lib.heterograph({("a", "x", "b"): (torch.tensor([0, 1]), torch.tensor([2, 0])),
                            ("b", "y", "a"): (torch.tensor([1, 2]), torch.tensor([2, 1])),
                            ("a", "z", "a"): (torch.tensor([1]), torch.tensor([0]))}, num_nodes_dict={"a": 3, "b": 3})


# --- out_subgraph
@pytest.mark.parametrize("seeds, edges, eids, nids", [
    ([3, 0], ([0, 0, 1], [2, 3, 4]), [0, 1, 2], [3, 0, 1, 4, 2]),
    ([0, 3], ([0, 1, 1], [2, 3, 4]), [2, 0, 1], [0, 3, 2, 1, 4]),
    ([5, 2], ([0, 1], [2, 0]), [4, 3], [5, 2, 0]),
    ([6], ([], []), [], []),
])
def test_out_subgraph_relabelled_as_dgl(seeds, edges, eids, nids):
    """Seed by seed in the order given, each seed's edges by id; nodes numbered by first appearance among the
    sources, then the destinations (DGL 2.1's outputs, worked out by hand)."""
    g = simple_graph(topograph)
    s = topograph.out_subgraph(g, seeds, relabel_nodes=True)
    assert lists(*s.edges()) == [list(e) for e in edges]
    assert s.edata[EID].tolist() == eids and s.ndata[NID].tolist() == nids
    assert s.edata["w"].tolist() == [10.0 * e for e in eids]
    assert s.ndata["h"].flatten().tolist() == [float(n) for n in nids]
    assert s.num_nodes() == len(nids)


def test_out_subgraph_keeps_every_node_without_relabelling():
    g = simple_graph(topograph)
    s = topograph.out_subgraph(g, [3, 0])
    assert s.num_nodes() == 7 and lists(*s.edges()) == [[3, 3, 0], [1, 4, 2]]
    assert s.edata[EID].tolist() == [0, 1, 2] and NID not in s.ndata
    assert s.ndata["h"] is g.ndata["h"]
    s = g.out_subgraph([3, 3], store_ids=False)  # a seed twice brings its edges twice, as DGL's
    assert lists(*s.edges()) == [[3, 3, 3, 3], [1, 4, 1, 4]] and EID not in s.edata
    assert s.edata["w"].tolist() == [0.0, 10.0, 0.0, 10.0]


def test_out_subgraph_over_relations():
    hg = three_relations(topograph)
    s = topograph.out_subgraph(hg, {"a": [1], "b": [2]}, relabel_nodes=True)
    assert {c: lists(*s.edges(etype=c)) for c in s.canonical_etypes} == {
        ("a", "x", "b"): [[0], [0]], ("a", "z", "a"): [[0], [1]], ("b", "y", "a"): [[1], [0]]}
    # relation by relation, its sources then its destinations: a gets 1 (x), 0 (z); b gets 0 (x), 2 (y)
    assert {t: v.tolist() for t, v in s.ndata[NID].items()} == {"a": [1, 0], "b": [0, 2]}
    s = topograph.out_subgraph(hg, {"b": [2]})
    assert [s.num_edges(c) for c in s.canonical_etypes] == [0, 0, 1]
    assert s.edges["y"].data[EID].tolist() == [1]


def test_out_subgraph_errors_and_batch():
    g, hg = simple_graph(topograph), three_relations(topograph)
    with pytest.raises(topograph.DGLError, match="id 7"):
        topograph.out_subgraph(g, [7])
    with pytest.raises(topograph.DGLError, match="id -1"):
        topograph.out_subgraph(g, [-1])
    with pytest.raises(topograph.DGLError, match="node types"):
        topograph.out_subgraph(hg, [0])
    with pytest.raises(topograph.DGLError, match="'c'"):
        topograph.out_subgraph(hg, {"c": [0]})
    bg = topograph.batch([g, g])
    s = topograph.out_subgraph(bg, [3, 10])  # as DGL's: one graph
    assert s.batch_size == 1 and s.num_nodes() == 14 and lists(*s.edges()) == [[3, 3, 10, 10], [1, 4, 8, 11]]


@pytest.mark.parametrize("name", list(GRAPHS))
@pytest.mark.parametrize("relabel", [False, True])
@pytest.mark.parametrize("idtype", [torch.int32, torch.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("verb", ["out_subgraph", "in_subgraph"])
def test_seed_subgraphs_match_dgl(name, relabel, idtype, verb):
    dgl = need_dgl()
    src, dst, n = make_edges(name)
    seeds = torch.tensor([n - 1, 0, n // 2], dtype=idtype)[: n]
    gd = dgl.graph((src.to(idtype), dst.to(idtype)), num_nodes=n, idtype=idtype)
    gt = topograph.graph((src.to(idtype), dst.to(idtype)), num_nodes=n)
    for g in (gd, gt):
        g.ndata["h"] = torch.arange(float(n))
        g.edata["w"] = torch.arange(float(src.numel()))
    sd = getattr(dgl, verb)(gd, seeds, relabel_nodes=relabel)
    st = getattr(topograph, verb)(gt, seeds, relabel_nodes=relabel)
    assert st.num_nodes() == sd.num_nodes() and lists(*st.edges()) == lists(*sd.edges())
    assert st.idtype == sd.idtype and st.edata[EID].dtype == sd.edata[EID].dtype
    for key in sd.edata:
        assert st.edata[key].tolist() == sd.edata[key].tolist()
    for key in sd.ndata:
        assert st.ndata[key].tolist() == sd.ndata[key].tolist()


@pytest.mark.parametrize("verb", ["out_subgraph", "in_subgraph"])
def test_seed_subgraphs_over_relations_match_dgl(verb):
    dgl = need_dgl()
    gd, gt = typed_graph(dgl), typed_graph(topograph)
    for seeds in ({"user": torch.tensor([2, 0])}, {"user": torch.tensor([1, 2, 1]), "game": torch.tensor([0, 1])}):
        for relabel in (False, True):
            sd = getattr(dgl, verb)(gd, seeds, relabel_nodes=relabel)
            st = getattr(topograph, verb)(gt, seeds, relabel_nodes=relabel)
            assert st.canonical_etypes == sd.canonical_etypes
            for c in sd.canonical_etypes:
                assert lists(*st.edges(etype=c)) == lists(*sd.edges(etype=c))
                assert st.edges[c].data[EID].tolist() == sd.edges[c].data[EID].tolist()
            for t in sd.ntypes:
                assert st.num_nodes(t) == sd.num_nodes(t)
                assert sorted(st.nodes[t].data) == sorted(sd.nodes[t].data)
                for key in sd.nodes[t].data:
                    assert st.nodes[t].data[key].tolist() == sd.nodes[t].data[key].tolist()


# --- node_type_subgraph
def test_node_type_subgraph_keeps_the_types_and_shares_features():
    hg = three_relations(topograph)
    hg.nodes["a"].data["h"] = torch.arange(3.0)
    s = topograph.node_type_subgraph(hg, ["b", "a"])  # the graph's order
    assert s.ntypes == ["a", "b"] and s.canonical_etypes == hg.canonical_etypes
    s = hg.node_type_subgraph(["a"])
    assert s.ntypes == ["a"] and s.canonical_etypes == [("a", "z", "a")] and lists(*s.edges()) == [[1], [0]]
    assert s.ndata["h"] is hg.nodes["a"].data["h"]
    s.ndata["new"] = torch.ones(3)  # the same frame, as DGL's
    assert hg.nodes["a"].data["new"].tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(topograph.DGLError, match="'c'"):
        topograph.node_type_subgraph(hg, ["c"])
    lone = topograph.heterograph({("a", "x", "b"): ([0], [0])})
    with pytest.raises(topograph.DGLError, match="no relation"):
        topograph.node_type_subgraph(lone, ["b"])


def test_node_type_subgraph_matches_dgl():
    dgl = need_dgl()
    gd, gt = typed_graph(dgl), typed_graph(topograph)
    for types in (["user"], ["game", "user"], ["user", "game", "tag"]):
        sd, st = dgl.node_type_subgraph(gd, types), topograph.node_type_subgraph(gt, types)
        assert st.ntypes == sd.ntypes and st.canonical_etypes == sd.canonical_etypes
        for c in sd.canonical_etypes:
            assert lists(*st.edges(etype=c)) == lists(*sd.edges(etype=c))
            assert sorted(st.edges[c].data) == sorted(sd.edges[c].data)
        for t in sd.ntypes:
            assert st.num_nodes(t) == sd.num_nodes(t) and sorted(st.nodes[t].data) == sorted(sd.nodes[t].data)


# --- line_graph, khop_graph
LOOPY = ([0, 0, 1, 2, 2, 3, 4, 4, 3, 1], [1, 1, 2, 2, 0, 4, 4, 1, 1, 3], 6)


def loopy(lib, idtype=torch.int64):
    u, v, n = LOOPY
    g = lib.graph((torch.tensor(u, dtype=idtype), torch.tensor(v, dtype=idtype)), num_nodes=n, idtype=idtype)
    g.ndata["h"] = torch.arange(float(n))
    g.edata["w"] = torch.arange(10.0)
    return g


def test_line_graph_by_hand():
    g = loopy(topograph)
    lg = topograph.line_graph(g)
    # e1 by id, then each edge leaving e1's destination by id, never e1 itself (the loops 3 and 6)
    assert lists(*lg.edges()) == [[0, 0, 1, 1, 2, 2, 3, 4, 4, 5, 5, 6, 7, 7, 8, 8, 9, 9],
                                  [2, 9, 2, 9, 3, 4, 4, 0, 1, 6, 7, 7, 2, 9, 2, 9, 5, 8]]
    assert lg.num_nodes() == 10 and len(lg.ndata) == 0
    lg = g.line_graph(backtracking=False, shared=True)  # 8: 3 -> 1 then 9: 1 -> 3 goes back; so does 9 -> 8
    assert lists(*lg.edges()) == [[0, 0, 1, 1, 2, 2, 3, 4, 4, 5, 5, 6, 7, 7, 8, 9],
                                  [2, 9, 2, 9, 3, 4, 4, 0, 1, 6, 7, 7, 2, 9, 2, 5]]
    assert lg.ndata["w"] is g.edata["w"]
    loops = topograph.graph(([0, 0], [0, 0]))
    assert lists(*topograph.line_graph(loops).edges()) == [[0, 1], [1, 0]]
    assert topograph.line_graph(loops, backtracking=False).num_edges() == 0
    with pytest.raises(topograph.DGLError, match="one node type"):
        topograph.line_graph(three_relations(topograph))


def test_khop_graph_by_hand():
    g = loopy(topograph)
    assert lists(*topograph.khop_graph(g, 0).edges()) == [list(range(6))] * 2
    one = topograph.khop_graph(g, 1)
    assert lists(*one.edges()) == [LOOPY[0], LOOPY[1]]  # g's edges, g's order
    two = topograph.khop_graph(g, 2)  # walks of two edges, sorted: 0 -> 1 twice, then 1 -> 2 / 1 -> 3
    assert lists(*two.edges()) == [[0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4],
                                   [2, 2, 3, 3, 0, 1, 2, 4, 0, 1, 1, 2, 1, 2, 3, 4, 1, 2, 3, 4]]
    assert two.ndata["h"] is g.ndata["h"] and "h" not in topograph.khop_graph(g, 2, copy_ndata=False).ndata
    adj = torch.zeros(6, 6, dtype=torch.int64)
    adj.index_put_((torch.tensor(LOOPY[0]), torch.tensor(LOOPY[1])), torch.tensor(1), accumulate=True)
    three = topograph.khop_graph(g, 3)
    counts = torch.zeros(6, 6, dtype=torch.int64)
    counts.index_put_(tuple(x.long() for x in three.edges()), torch.tensor(1), accumulate=True)
    assert torch.equal(counts, torch.linalg.matrix_power(adj.double(), 3).long())
    with pytest.raises(topograph.DGLError, match="k must be"):
        topograph.khop_graph(g, -1)


@pytest.mark.parametrize("idtype", [torch.int32, torch.int64], ids=["int32", "int64"])
def test_line_and_khop_graph_match_dgl(idtype):
    dgl = need_dgl()
    for name in list(GRAPHS) + ["loopy"]:
        if name == "loopy":
            gd, gt = loopy(dgl, idtype), loopy(topograph, idtype)
        else:
            src, dst, n = make_edges(name)
            gd = dgl.graph((src.to(idtype), dst.to(idtype)), num_nodes=n, idtype=idtype)
            gt = topograph.graph((src.to(idtype), dst.to(idtype)), num_nodes=n)
        for backtracking in (True, False):
            ld, lt = dgl.line_graph(gd, backtracking), topograph.line_graph(gt, backtracking)
            assert lt.num_nodes() == ld.num_nodes() and lists(*lt.edges()) == lists(*ld.edges())
            assert lt.idtype == ld.idtype
        for k in (0, 1, 2, 3):
            kd, kt = dgl.khop_graph(gd, k), topograph.khop_graph(gt, k)
            assert kt.num_nodes() == kd.num_nodes() and kt.idtype == kd.idtype
            if k < 2:  # g's edges as they are (k = 1), or a loop per node (k = 0)
                assert lists(*kt.edges()) == lists(*kd.edges())
            # k >= 2: DGL lists each source's edges in scipy's order; the sources' order and the edges are the same
            assert kt.edges()[0].tolist() == kd.edges()[0].tolist()
            assert sorted(zip(*lists(*kt.edges()))) == sorted(zip(*lists(*kd.edges())))


# --- knn_graph
def test_knn_graph_by_hand():
    x = torch.tensor([[0.0], [1.0], [3.0], [7.0]])
    g = topograph.knn_graph(x, 2)  # each point's nearest two, itself first; edges into it, point by point
    assert lists(*g.edges()) == [[0, 1, 1, 0, 2, 1, 3, 2], [0, 0, 1, 1, 2, 2, 3, 3]]
    assert g.idtype == torch.int64 and g.batch_size == 1
    g = topograph.knn_graph(x, 2, exclude_self=True)
    assert lists(*g.edges()) == [[1, 2, 0, 2, 1, 0, 2, 1], [0, 0, 1, 1, 2, 2, 3, 3]]
    b = topograph.knn_graph(torch.stack([x, x * -1]), 1)  # [B, N, D]: a batch of two graphs
    assert b.batch_size == 2 and b.batch_num_nodes().tolist() == [4, 4] and b.batch_num_edges().tolist() == [4, 4]
    assert lists(*b.edges()) == [list(range(8))] * 2
    s = topograph.segmented_knn_graph(x, 1, [1, 3], exclude_self=False)
    assert s.batch_num_nodes().tolist() == [1, 3] and lists(*s.edges()) == [[0, 1, 2, 3], [0, 1, 2, 3]]
    with pytest.warns(UserWarning, match="k = 4"):
        assert topograph.knn_graph(x, 9).num_edges() == 16
    with pytest.raises(topograph.DGLError, match="k = 0"):
        topograph.knn_graph(x, 0)
    with pytest.raises(topograph.DGLError, match="empty"):
        topograph.knn_graph(x[:0], 1)
    with pytest.raises(topograph.DGLError, match="'manhattan'"):
        topograph.knn_graph(x, 1, dist="manhattan")
    with pytest.raises(topograph.DGLError, match="'kd-tree'"):
        topograph.knn_graph(x, 1, algorithm="kd-tree")


def test_knn_graph_exclude_self_with_coincident_points():
    x = torch.zeros(4, 2)  # every distance 0: a point may miss itself among its k + 1
    g = topograph.knn_graph(x, 2, exclude_self=True)
    assert g.in_degrees().tolist() == [2, 2, 2, 2]
    u, v = g.edges()
    assert bool((u != v).all())


@pytest.mark.parametrize("dist", ["euclidean", "cosine"])
@pytest.mark.parametrize("exclude_self", [False, True])
def test_knn_graph_matches_dgl(dist, exclude_self):
    dgl = need_dgl()
    gen = torch.Generator().manual_seed(4)
    for x in (torch.randn(30, 5, generator=gen), torch.randn(3, 9, 4, generator=gen)):
        for k in (1, 4):
            gd = dgl.knn_graph(x, k, dist=dist, exclude_self=exclude_self)
            gt = topograph.knn_graph(x, k, dist=dist, exclude_self=exclude_self)
            assert lists(*gt.edges()) == lists(*gd.edges())
            assert gt.batch_num_nodes().tolist() == gd.batch_num_nodes().tolist()
            assert gt.batch_num_edges().tolist() == gd.batch_num_edges().tolist()
    x = torch.randn(12, 3, generator=gen)
    sd = dgl.segmented_knn_graph(x, 3, [5, 7], dist=dist, exclude_self=exclude_self)
    st = topograph.segmented_knn_graph(x, 3, [5, 7], dist=dist, exclude_self=exclude_self)
    assert lists(*st.edges()) == lists(*sd.edges())
    assert st.batch_num_edges().tolist() == sd.batch_num_edges().tolist()


# --- dgl.transforms callables
def test_transforms_by_hand():
    T = topograph.transforms
    g = topograph.graph(([0, 1, 1], [1, 1, 2]), num_nodes=3)
    g.edata["w"] = torch.tensor([1.0, 2.0, 3.0])
    s = T.AddSelfLoop()(g)  # the loop 1 -> 1 removed, then one per node after the edges
    assert lists(*s.edges()) == [[0, 1, 0, 1, 2], [1, 2, 0, 1, 2]] and s.edata["w"].tolist() == [1, 3, 1, 1, 1]
    s = T.AddSelfLoop(allow_duplicate=True, fill_data=0.0)(g)
    assert s.num_edges() == 6 and s.edata["w"].tolist() == [1, 2, 3, 0, 0, 0]
    s = T.AddSelfLoop(new_etypes=True)(g)
    assert s.canonical_etypes == [("_N", "_E", "_N"), ("_N", "self", "_N")]
    assert lists(*s.edges(etype="self")) == [[0, 1, 2]] * 2
    assert lists(*T.RemoveSelfLoop()(g).edges()) == [[0, 1], [1, 2]]
    r = T.AddReverse()(g)
    assert lists(*r.edges()) == [[0, 1, 1, 1, 1, 2], [1, 1, 2, 0, 1, 1]]
    assert r.edata["w"].tolist() == [1, 2, 3, 0, 0, 0]
    assert T.AddReverse(copy_edata=True)(g).edata["w"].tolist() == [1, 2, 3, 1, 2, 3]
    hg = topograph.heterograph({("u", "buys", "i"): ([0, 1], [1, 0])})
    hg.edata["w"] = torch.tensor([5.0, 6.0])
    r = T.AddReverse(copy_edata=True)(hg)
    assert r.canonical_etypes == [("i", "rev_buys", "u"), ("u", "buys", "i")]
    assert lists(*r.edges(etype="rev_buys")) == [[1, 0], [0, 1]] and r.edges["rev_buys"].data["w"].tolist() == [5, 6]
    m = topograph.graph(([0, 0, 1], [1, 1, 0]))
    m.edata["w"] = torch.tensor([1.0, 2.0, 3.0])
    s = T.ToSimple(aggregator="sum")(m)
    assert lists(*s.edges()) == [[0, 1], [1, 0]] and s.edata["w"].tolist() == [3, 3]
    assert s.edata["count"].tolist() == [2, 1]
    c = T.Compose([T.RemoveSelfLoop(), T.AddReverse(), T.ToSimple()])
    assert lists(*c(g).edges()) == [[0, 1, 1, 2], [1, 0, 2, 1]]
    assert repr(T.ToSimple()) == "ToSimple()" and repr(c).startswith("Compose([")
    assert T.LineGraph()(loopy(topograph)).ndata["w"].tolist() == list(range(10))
    assert T.KHopGraph(2)(loopy(topograph)).num_edges() == 20
    assert T.add_self_loop is topograph.add_self_loop and T.knn_graph is topograph.knn_graph


def test_transforms_match_dgl():
    dgl = need_dgl()
    import dgl.transforms as DT

    T = topograph.transforms
    cases = [(lambda M: M.AddSelfLoop(), None), (lambda M: M.AddSelfLoop(allow_duplicate=True, fill_data="sum"), None),
             (lambda M: M.AddSelfLoop(new_etypes=True), None), (lambda M: M.RemoveSelfLoop(), None),
             (lambda M: M.AddReverse(), None), (lambda M: M.AddReverse(copy_edata=True, sym_new_etype=True), None),
             (lambda M: M.ToSimple(aggregator="mean"), None),
             (lambda M: M.Compose([M.AddReverse(copy_edata=True), M.ToSimple(aggregator="sum")]), None)]
    for make, _ in cases:
        for build in (loopy, typed_graph):
            gd, gt = build(dgl), build(topograph)
            if build is typed_graph:
                if "ToSimple" in repr(make(DT)) or "Compose" in repr(make(DT)):
                    continue  # to_simple's edge features over several relations: covered in test_transform.py
            rd, rt = make(DT)(gd), make(T)(gt)
            assert rt.ntypes == rd.ntypes and rt.canonical_etypes == rd.canonical_etypes, repr(make(DT))
            for c in rd.canonical_etypes:
                assert lists(*rt.edges(etype=c)) == lists(*rd.edges(etype=c)), (repr(make(DT)), c)
                assert sorted(rt.edges[c].data) == sorted(rd.edges[c].data)
                for key in rd.edges[c].data:
                    torch.testing.assert_close(rt.edges[c].data[key].to(rd.edges[c].data[key].dtype),
                                               rd.edges[c].data[key])
            for t in rd.ntypes:
                assert sorted(rt.nodes[t].data) == sorted(rd.nodes[t].data)
