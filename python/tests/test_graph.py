"""Graph construction and DGL's structure queries against the edge lists they came from."""
import pytest
import torch

import topograph
from conftest import build


def test_homogeneous_graph_queries(graph_name, idtype):
    g, src, dst, n = build(graph_name, idtype)
    assert g.num_nodes() == n and g.num_edges() == src.numel()
    assert g.ntypes == ["_N"] and g.etypes == ["_E"] and g.canonical_etypes == [("_N", "_E", "_N")]
    assert g.idtype == idtype and g.device == torch.device("cpu")
    assert g.in_degrees().dtype == idtype
    assert g.in_degrees().tolist() == torch.bincount(dst, minlength=n).tolist()
    assert g.out_degrees().tolist() == torch.bincount(src, minlength=n).tolist()
    u, v = g.edges()
    assert u.dtype == idtype and u.tolist() == src.tolist() and v.tolist() == dst.tolist()
    assert g.edges(form="eid").tolist() == list(range(src.numel()))
    r = g.reverse()
    ru, rv = r.edges()
    assert ru.tolist() == dst.tolist() and rv.tolist() == src.tolist()
    assert r.in_degrees().tolist() == g.out_degrees().tolist()


def test_degrees_of_chosen_nodes_and_sorted_edges():
    g = topograph.graph(([2, 0, 0, 1], [1, 2, 1, 1]), num_nodes=4)
    assert g.in_degrees(1) == 3 and g.out_degrees(0) == 2
    assert g.in_degrees(torch.tensor([3, 1])).tolist() == [0, 3]
    u, v, eid = g.edges(form="all", order="srcdst")
    assert list(zip(u.tolist(), v.tolist(), eid.tolist())) == [(0, 1, 2), (0, 2, 1), (1, 1, 3), (2, 1, 0)]
    with pytest.raises(ValueError, match="out of range"):
        g.in_degrees(4)
    # The graph keeps its degrees; what it hands out is a copy, so writing into it changes nothing.
    d = g.in_degrees()
    d += 100
    assert g.in_degrees().tolist() == [0, 3, 1, 0]
    o = g.out_degrees()
    o.zero_()
    assert g.out_degrees().tolist() == [2, 1, 1, 0]


def test_num_nodes_defaults_to_the_largest_id_and_lists_give_int64():
    g = topograph.graph(([0, 3], [1, 1]))
    assert g.num_nodes() == 4 and g.idtype == torch.int64
    i32 = torch.tensor([0, 1], dtype=torch.int32)
    assert topograph.graph((i32, i32)).idtype == torch.int32
    assert topograph.graph(([0], [1]), idtype=torch.int32).idtype == torch.int32
    empty = topograph.graph(([], []), num_nodes=0)
    assert empty.num_nodes() == 0 and empty.num_edges() == 0


def test_heterograph_orders_types_by_name_as_dgl():
    hg = topograph.heterograph({
        ("user", "plays", "game"): ([0, 1, 1], [0, 0, 2]),
        ("developer", "develops", "game"): ([0], [2]),
        ("user", "follows", "user"): ([0, 2], [1, 1]),
    }, num_nodes_dict={"user": 4})
    assert hg.ntypes == ["developer", "game", "user"]
    assert hg.canonical_etypes == [("developer", "develops", "game"), ("user", "follows", "user"),
                                   ("user", "plays", "game")]
    assert hg.num_nodes("user") == 4 and hg.num_nodes("game") == 3 and hg.num_nodes("developer") == 1
    assert hg.num_nodes() == 8 and hg.num_edges() == 6 and hg.num_edges("plays") == 3
    assert hg.num_edges(("user", "follows", "user")) == 2
    assert hg.in_degrees(etype="plays").tolist() == [2, 0, 1]
    assert hg.out_degrees(etype="follows").tolist() == [1, 0, 1, 0]
    plays = hg["plays"]
    assert plays.canonical_etypes == [("user", "plays", "game")] and plays.num_edges() == 3
    assert plays.in_degrees().tolist() == [2, 0, 1]
    sub = topograph.edge_type_subgraph(hg, ["follows", ("developer", "develops", "game")])
    assert sub.canonical_etypes == [("user", "follows", "user"), ("developer", "develops", "game")]
    rev = topograph.reverse(hg)
    assert ("game", "plays", "user") in rev.canonical_etypes
    assert rev.in_degrees(etype="plays").tolist() == hg.out_degrees(etype="plays").tolist()
    with pytest.raises(ValueError, match="relations"):
        hg.in_degrees()  # three relations: DGL asks for etype too


def test_batch_offsets_ids_and_counts():
    g1 = topograph.graph(([0, 1], [1, 2]), num_nodes=3)
    g2 = topograph.graph(([1], [0]), num_nodes=2)
    bg = topograph.batch([g1, g2])
    assert bg.batch_size == 2 and bg.num_nodes() == 5 and bg.num_edges() == 3
    u, v = bg.edges()
    assert u.tolist() == [0, 1, 4] and v.tolist() == [1, 2, 3]
    assert bg.batch_num_nodes().tolist() == [3, 2] and bg.batch_num_edges().tolist() == [2, 1]
    parts = topograph.unbatch(bg)
    assert [p.edges()[0].tolist() for p in parts] == [[0, 1], [1]]
    with pytest.raises(TypeError):
        topograph.batch([g1, "not a graph"])


def test_the_graph_copies_its_ids():
    u, v = torch.tensor([0, 1]), torch.tensor([1, 2])
    g = topograph.graph((u, v), num_nodes=3)
    u[0] = 2  # the caller's tensor changes; the immutable graph does not
    assert g.edges()[0].tolist() == [0, 1]
    out_u, _ = g.edges()
    out_u[1] = 0  # nor through what edges() returns
    assert g.edges()[0].tolist() == [0, 1]


def test_repr():
    # DGL 2.1's text, which tutorials print
    g = topograph.graph(([0], [1]))
    assert repr(g) == "Graph(num_nodes=2, num_edges=1,\n      ndata_schemes={}\n      edata_schemes={})"
    g.ndata["feat"] = torch.ones(2, 3)
    g.edata["w"] = torch.ones(1)
    assert repr(g) == ("Graph(num_nodes=2, num_edges=1,\n"
                       "      ndata_schemes={'feat': Scheme(shape=(3,), dtype=torch.float32)}\n"
                       "      edata_schemes={'w': Scheme(shape=(), dtype=torch.float32)})")
    h = topograph.heterograph({("user", "plays", "game"): ([0], [0]), ("user", "follows", "user"): ([0], [1])})
    assert repr(h) == ("Graph(num_nodes={'game': 1, 'user': 2},\n"
                       "      num_edges={('user', 'follows', 'user'): 1, ('user', 'plays', 'game'): 1},\n"
                       "      metagraph=[('user', 'user', 'follows'), ('user', 'game', 'plays')])")


def test_in_out_edges_neighbours_and_self_loops(idtype):
    g, src, dst, n = build("multi_loop_isolated", idtype)
    for v in range(n):
        mine = (dst == v).nonzero().flatten()  # by increasing edge id
        u, w, eid = g.in_edges(v, form="all")
        assert eid.tolist() == mine.tolist() and u.tolist() == src[mine].tolist() and set(w.tolist()) <= {v}
        assert g.predecessors(v).tolist() == src[mine].tolist()
        out = (src == v).nonzero().flatten()
        assert g.out_edges(v, form="eid").tolist() == out.tolist()
        assert g.successors(v).tolist() == dst[out].tolist()
    u, w = g.in_edges(torch.tensor([1, 0, 1]))  # grouped by node in the order given, repeats listed again
    d1, d0 = int((dst == 1).sum()), int((dst == 0).sum())
    assert w.tolist() == [1] * d1 + [0] * d0 + [1] * d1 and u.dtype == idtype
    with pytest.raises(ValueError):
        g.in_edges(n)  # out of range
    loops = topograph.add_self_loop(g)
    assert loops.num_edges() == g.num_edges() + n
    lu, lv = loops.edges()
    assert lu[-n:].tolist() == list(range(n)) and lv[-n:].tolist() == list(range(n))
    none = topograph.remove_self_loop(loops)
    nu, nv = none.edges()
    keep = src != dst
    assert nu.tolist() == src[keep].tolist() and nv.tolist() == dst[keep].tolist()


def test_formats_are_built_on_use_and_copy_u_sum_builds_no_edge_ids():
    import topograph.function as fn

    g = topograph.graph((torch.tensor([0, 1, 2, 3]), torch.tensor([1, 2, 3, 0])))
    assert g.formats() == {"created": ["coo"], "not created": ["csr", "csc"]}
    g.ndata["h"] = torch.randn(4, 3, requires_grad=True)
    g.update_all(fn.copy_u("h", "m"), fn.sum("m", "h2"))
    g.ndata["h2"].sum().backward()  # forward by destination (CSC), backward by source (CSR)
    assert g.formats() == {"created": ["coo", "csr", "csc"], "not created": []}
    assert g._g.built_formats(0) == (True, True, False, False)  # neither with edge ids
    assert g.formats("csc") is g
    with pytest.raises(ValueError, match="unknown format"):
        g.formats(["csx"])
    g.create_formats_()
    assert g._g.built_formats(0) == (True, True, True, True)


def test_feature_rows_of_some_nodes_and_edges_as_dgl():
    """g.nodes[ids].data / g.edges[eids].data (DGL's NodeDataView / EdgeDataView over ids): reading gives those
    rows, writing sets them out of place, a new name starts as zeros elsewhere; ids were read as a node type."""
    g = topograph.graph((torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0])))
    g.ndata["x"] = torch.arange(6.0).reshape(3, 2)
    assert g.nodes[torch.tensor([0, 2])].data["x"].tolist() == [[0.0, 1.0], [4.0, 5.0]]
    assert g.nodes[1].data["x"].tolist() == [[2.0, 3.0]] and g.nodes[:].data["x"].shape == (3, 2)
    before = g.ndata["x"]
    g.nodes[[1]].data["x"] = torch.tensor([[9.0, 9.0]])
    assert g.ndata["x"].tolist() == [[0.0, 1.0], [9.0, 9.0], [4.0, 5.0]] and before[1].tolist() == [2.0, 3.0]
    g.nodes[[0, 2]].data["y"] = torch.ones(2)
    assert g.ndata["y"].tolist() == [1.0, 0.0, 1.0]
    g.edata["w"] = torch.tensor([1.0, 2.0, 3.0])
    assert g.edges[[2, 0]].data["w"].tolist() == [3.0, 1.0]
    assert g.edges[(torch.tensor([1]), torch.tensor([2]))].data["w"].tolist() == [2.0]  # the edge 1 -> 2
    g.edges[[1]].data["w"] = torch.tensor([7.0])
    assert g.edata["w"].tolist() == [1.0, 7.0, 3.0]
    hg = topograph.heterograph({("u", "r", "v"): ([0, 1], [1, 0])})
    hg.nodes["u"].data["h"] = torch.tensor([[1.0], [2.0]])
    assert hg.nodes[([1], "u")].data["h"].tolist() == [[2.0]]
    with pytest.raises(topograph.DGLError, match=r"id 5 out of range \[0, 3\)"):
        g.nodes[[5]].data["x"]
    with pytest.raises(topograph.DGLError, match="expected a tensor of 1 rows"):
        g.nodes[[0]].data["x"] = torch.ones(2, 2)
    with pytest.raises(topograph.DGLError, match="the feature is torch.float32"):
        g.nodes[[0]].data["x"] = torch.ones(1, 3)
    with pytest.raises(topograph.DGLError, match="not supported"):
        del g.nodes[[0]].data["x"]
    with pytest.raises(topograph.DGLError, match="full slice"):
        g.nodes[0:2]
