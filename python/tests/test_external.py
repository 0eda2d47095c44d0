"""Graphs to and from SciPy and NetworkX, and the adjacency matrix in external formats (_external.py): edge ids
in DGL's order (a matrix's COO order, a NetworkX graph's edge order or its id attribute), features carried, the
matrices against a dense reference, clean errors."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import networkx as nx  # the package's test requirements (python/requirements-dev.txt)
import numpy as np
import pytest
import scipy.sparse as sp
import torch


def test_from_scipy_takes_the_entries_in_coo_order_with_their_values():
    m = sp.random(7, 7, density=0.35, format="csr", random_state=3)
    g = topograph.from_scipy(m, eweight_name="w")
    coo = m.tocoo()  # a CSR matrix's COO order: row by row
    assert g.num_nodes() == 7 and g.num_edges() == m.nnz
    assert g.edges()[0].tolist() == coo.row.tolist() and g.edges()[1].tolist() == coo.col.tolist()
    assert torch.equal(g.edata["w"], torch.as_tensor(coo.data))
    c = sp.coo_matrix(([1.0, 2.0, 3.0], ([2, 0, 2], [1, 1, 1])), shape=(3, 3))  # COO order kept, repeats too
    h = topograph.from_scipy(c, idtype=torch.int32)
    assert h.idtype == torch.int32 and h.edges()[0].tolist() == [2, 0, 2] and h.num_edges() == 3
    with pytest.raises(topograph.DGLError, match=r"must be square \(N x N\), got shape \(3, 4\)"):
        topograph.from_scipy(sp.random(3, 4, density=0.5, format="coo"))
    with pytest.raises(TypeError, match="expected a SciPy sparse matrix, got ndarray"):
        topograph.from_scipy(np.eye(3))
    b = topograph.bipartite_from_scipy(sp.random(3, 5, density=0.4, format="csc", random_state=1), "user", "rates",
                                       "item", eweight_name="r")
    assert b.canonical_etypes == [("user", "rates", "item")] and (b.num_nodes("user"), b.num_nodes("item")) == (3, 5)
    assert b.num_edges() == b.edata["r"].shape[0] == 6


def test_from_networkx_relabels_sorted_and_carries_attributes():
    kg = nx.karate_club_graph()  # undirected: each of its 78 edges both ways
    g = topograph.from_networkx(kg)
    assert g.num_nodes() == 34 and g.num_edges() == 156
    directed = nx.convert_node_labels_to_integers(kg, ordering="sorted").to_directed()  # relabelled first, as DGL
    assert list(zip(*(t.tolist() for t in g.edges()))) == [(u, v) for u, v in directed.edges()]
    d = nx.DiGraph()
    d.add_node("c", x=[3.0, 0.0])
    d.add_node("a", x=[1.0, 0.0])
    d.add_node("b", x=[2.0, 0.0])
    d.add_edge("c", "a", w=5.0, eid=1)
    d.add_edge("a", "b", w=7.0, eid=0)
    g = topograph.from_networkx(d, node_attrs=["x"], edge_attrs=["w"], edge_id_attr_name="eid")
    assert g.ndata["x"][:, 0].tolist() == [1.0, 2.0, 3.0]  # a, b, c: sorted labels
    assert g.edges()[0].tolist() == [0, 2] and g.edges()[1].tolist() == [1, 0] and g.edata["w"].tolist() == [7.0, 5.0]
    with pytest.raises(topograph.DGLError, match="has no attribute 'y'"):
        topograph.from_networkx(d, node_attrs=["y"])
    d.add_edge("b", "c", w=1.0, eid=0)
    with pytest.raises(topograph.DGLError, match="must number the 3 edges 0..2, each once"):
        topograph.from_networkx(d, edge_id_attr_name="eid")
    with pytest.raises(TypeError, match="expected a NetworkX graph"):
        topograph.from_networkx([(0, 1)])


def test_to_networkx_round_trips_edges_ids_and_features():
    g = topograph.graph(([0, 1, 1, 3, 1], [1, 2, 2, 0, 2]), num_nodes=5)  # parallel edges kept
    g.ndata["h"] = torch.arange(10.0).reshape(5, 2)
    g.edata["w"] = torch.tensor([0.5, 1.5, 2.5, 3.5, 4.5])
    m = topograph.to_networkx(g, node_attrs=["h"], edge_attrs=["w"])
    assert isinstance(m, nx.MultiDiGraph) and m.number_of_nodes() == 5 and m.number_of_edges() == 5
    assert torch.equal(m.nodes[3]["h"], g.ndata["h"][3])
    back = topograph.from_networkx(m, edge_attrs=["w"], edge_id_attr_name="id")
    assert [t.tolist() for t in back.edges()] == [t.tolist() for t in g.edges()]
    assert torch.equal(back.edata["w"], g.edata["w"])
    h = topograph.heterograph({("u", "f", "u"): ([0], [1]), ("u", "g", "v"): ([0], [0])})
    with pytest.raises(topograph.DGLError, match="only a graph of one node type and one relation"):
        topograph.to_networkx(h)


def test_adjacency_as_tensors_and_external_matrices():
    g = topograph.heterograph({("u", "f", "u"): ([2, 0, 2, 1], [0, 1, 0, 3]), ("u", "r", "v"): ([1, 0], [2, 2])},
                              {"u": 4, "v": 3})
    u, v = g.edges(etype="f")
    dense = torch.zeros(4, 4)
    dense.index_put_((u, v), torch.ones(4), accumulate=True)
    assert torch.equal(g.adj_external(etype="f").to_dense(), dense)
    assert torch.equal(g.adj_external(transpose=True, etype="f").to_dense(), dense.T)
    for fmt in ("coo", "csr", "csc"):
        m = g.adj_external(scipy_fmt=fmt, etype="f")
        assert m.format == fmt and np.array_equal(m.toarray(), dense.numpy())
    assert g.adj_external(ctx="cpu", scipy_fmt=None, etype=("u", "r", "v")).shape == (4, 3)
    assert [t.tolist() for t in g.adj_tensors("coo", etype="f")] == [u.tolist(), v.tolist()]
    indptr, indices, eids = g.adj_tensors("csr", etype="f")
    assert indptr.tolist() == [0, 1, 2, 4, 4] and indices.tolist() == [1, 3, 0, 0] and eids.tolist() == [1, 3, 0, 2]
    indptr, indices, eids = g.adj_tensors("csc", etype="r")  # columns of v: its 3 nodes
    assert indptr.tolist() == [0, 0, 0, 2] and indices.tolist() == [1, 0] and eids.tolist() == [0, 1]
    with pytest.raises(topograph.DGLError, match="fmt must be 'coo', 'csr' or 'csc', got 'dense'"):
        g.adj_tensors("dense", etype="f")
    with pytest.raises(topograph.DGLError, match="scipy_fmt must be None, 'coo', 'csr' or 'csc', got 'lil'"):
        g.adj_external(scipy_fmt="lil", etype="f")
    assert torch.equal(g.adj(etype="f").to_dense(), dense)  # DGL 2's: a topograph.sparse SparseMatrix
    assert g.adjacency_matrix(etype="r").shape == (4, 3)


def test_bipartite_from_networkx():
    """Sides from the 'bipartite' attribute, each numbered in sorted order; edges in NetworkX's order or by
    their id attribute; attributes copied; a node without a side or an edge the wrong way named; DGL 2.1's
    graph where it imports."""
    def build():
        m = nx.DiGraph()
        m.add_nodes_from([("b", {"bipartite": 0, "x": 2.0}), ("a", {"bipartite": 0, "x": 1.0}),
                          (10, {"bipartite": 1, "y": 5.0}), (3, {"bipartite": 1, "y": 6.0})])
        m.add_edge("a", 10, w=0.5, eid=1)
        m.add_edge("b", 3, w=1.5, eid=0)
        m.add_edge("b", 10, w=2.5, eid=2)
        return m

    g = topograph.bipartite_from_networkx(build(), "user", "buys", "item", u_attrs=["x"], e_attrs=["w"],
                                          v_attrs=["y"])
    assert g.canonical_etypes == [("user", "buys", "item")] and g.num_nodes("user") == 2
    assert [t.tolist() for t in g.edges()] == [[1, 1, 0], [0, 1, 1]]  # NetworkX order; a=0, b=1; 3=0, 10=1
    assert g.nodes["user"].data["x"].tolist() == [1.0, 2.0] and g.nodes["item"].data["y"].tolist() == [6.0, 5.0]
    by_id = topograph.bipartite_from_networkx(build(), "user", "buys", "item", e_attrs=["w"], edge_id_attr_name="eid")
    assert by_id.edata["w"].tolist() == [1.5, 0.5, 2.5]
    bad = build()
    bad.add_node("c")
    with pytest.raises(topograph.DGLError, match="'bipartite' 0 or 1"):
        topograph.bipartite_from_networkx(bad, "u", "e", "v")
    wrong = build()
    wrong.add_edge(3, "a")
    with pytest.raises(topograph.DGLError, match="does not go from"):
        topograph.bipartite_from_networkx(wrong, "u", "e", "v")
    try:
        import dgl
    except ImportError:
        return
    d = dgl.bipartite_from_networkx(build(), "user", "buys", "item", u_attrs=["x"], e_attrs=["w"], v_attrs=["y"])
    assert [t.tolist() for t in d.edges()] == [t.tolist() for t in g.edges()]
    assert d.edata["w"].tolist() == g.edata["w"].tolist()
