"""What a third round of DGL-style scripts (graph queries, UDF message passing, heterographs, subgraphs and
transforms, positional encodings and save/load, readouts and pooling, conv layers on Cora, sampled node and link
mini-batches, dgl.sampling, dgl.ops, dgl.sparse, graph construction, a custom DGLDataset, more dgl.nn modules,
hetero mini-batches and the mistakes users make) needed: dgl.graph / dgl.heterograph / dgl.create_block in DGL's
('coo' | 'csr' | 'csc', arrays) forms, a list read as a list of edge pairs (a 2-edge list was read as (U, V)),
MetaPath2Vec.local_to_global_nid, and dgl.DGLError (not a bare ValueError) where DGL raises it: the core's
user-input errors, a conv layer's zero-in-degree check, readouts without a type, dgl.batch of unlike graphs.
Checked against DGL's documented results, and against DGL 2.1 where dgl imports (that case skips otherwise)."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import numpy as np
import pytest
import torch

DGLError = topograph.DGLError


def lists(u, v):
    return [u.tolist(), v.tolist()]


# --- graph data in DGL's sparse forms
def test_graph_takes_coo_csr_and_csc():
    g = topograph.graph(("coo", (torch.tensor([0, 1]), torch.tensor([1, 2]))), num_nodes=4)
    assert g.num_nodes() == 4 and lists(*g.edges()) == [[0, 1], [1, 2]]
    # DGL's docstring example: rows 2, 3, 4 hold one entry each; 5 nodes from the pointer's length
    g = topograph.graph(("csr", ([0, 0, 0, 1, 2, 3], [1, 2, 3], [])))
    assert g.num_nodes() == 5 and lists(*g.edges()) == [[2, 3, 4], [1, 2, 3]]
    # with edge ids: entry i is edge eids[i]
    g = topograph.graph(("csr", ([0, 0, 0, 1, 2, 3], [1, 2, 3], [2, 0, 1])))
    assert lists(*g.edges()) == [[3, 4, 2], [2, 3, 1]]
    # csc: column c's entries are the sources of its in-edges
    g = topograph.graph(("csc", ([0, 2, 3, 3], [1, 2, 0], torch.tensor([1, 2, 0]))))
    assert g.num_nodes() == 3 and lists(*g.edges()) == [[0, 1, 2], [1, 0, 0]]
    # int32 arrays keep int32; torch.tensor([]) (float32) stands for no edge ids, as in DGL
    i32 = dict(dtype=torch.int32)
    g = topograph.graph(("csr", (torch.tensor([0, 1, 2, 2], **i32), torch.tensor([1, 2], **i32), torch.tensor([]))))
    assert g.idtype == torch.int32 and g.num_nodes() == 3 and lists(*g.edges()) == [[0, 1], [1, 2]]
    g = topograph.graph(("csr", (np.array([0, 1, 1]), np.array([1]), np.array([], dtype=np.int64))))
    assert lists(*g.edges()) == [[0], [1]]


def test_heterograph_and_create_block_take_the_sparse_forms():
    hg = topograph.heterograph({("a", "r", "b"): ("csr", ([0, 1, 1, 3], [0, 2, 1], [])),
                                ("b", "s", "a"): ("coo", ([0], [2]))})
    assert hg.num_nodes("a") == 3 and hg.num_nodes("b") == 3
    assert lists(*hg.edges(etype="r")) == [[0, 2, 2], [0, 2, 1]] and lists(*hg.edges(etype="s")) == [[0], [2]]
    block = topograph.create_block(("csc", ([0, 1, 3], [2, 0, 1], [])))  # 2 destinations, sources up to 2
    assert block.num_src_nodes() == 3 and block.num_dst_nodes() == 2
    assert lists(*block.edges()) == [[2, 0, 1], [0, 1, 1]]


def test_sparse_forms_name_bad_arrays():
    cases = [
        (("csr", ([0, 1], [0])), "needs arrays = \\(indptr, indices, edge ids"),
        (("xyz", ([0], [1])), "unknown sparse format 'xyz'"),
        (("csr", ([0, 2], [0], [])), "indptr must start at 0, never decrease and end at len\\(indices\\) \\(1\\)"),
        (("csr", ([0, 2, 1], [0, 1], [])), "never decrease"),
        (("csr", ([0, 1, 2], [1, 0], [0, 0])), "a permutation of 0..1"),
        (("csr", ([0, 1, 2], [1, 0], [0])), "a permutation of 0..1"),
        # the pointer fixes its side's count, which must cover the graph's nodes (DGL fails in its core)
        (("csc", ([0, 2, 3], [1, 2, 0], [])), "the index pointer gives 2 destination nodes .* the graph has 3"),
    ]
    for data, message in cases:
        with pytest.raises(DGLError, match=message):
            topograph.graph(data)
    with pytest.raises(DGLError, match="gives 3 source nodes .* has 4"):
        topograph.graph(("csr", ([0, 1, 2, 2], [1, 2], [])), num_nodes=4)
    with pytest.raises(DGLError, match="heterograph \\('a', 'r', 'b'\\): the index pointer gives 3 source"):
        topograph.heterograph({("a", "r", "b"): ("csr", ([0, 1, 1, 3], [0, 2, 1], [])),
                               ("b", "s", "a"): ("coo", ([0], [4]))})


def test_graph_names_from_scipy_and_from_networkx():
    sp = pytest.importorskip("scipy.sparse")
    nx = pytest.importorskip("networkx")
    with pytest.raises(DGLError, match="no longer takes a SciPy sparse matrix: use dgl.from_scipy"):
        topograph.graph(sp.coo_matrix(np.eye(2)))
    with pytest.raises(DGLError, match="no longer takes a NetworkX graph: use dgl.from_networkx"):
        topograph.graph(nx.path_graph(3))


# --- a list is a list of edges
def test_a_list_is_a_list_of_edge_pairs():
    # two edges given as a list: DGL reads the edges 0 -> 1 and 2 -> 3, where (U, V) would be 0 -> 2, 1 -> 3
    assert lists(*topograph.graph([(0, 1), (2, 3)]).edges()) == [[0, 2], [1, 3]]
    assert lists(*topograph.graph([[0, 1], [2, 3]]).edges()) == [[0, 2], [1, 3]]
    assert lists(*topograph.graph([(0, 1), (1, 2), (2, 0)]).edges()) == [[0, 1, 2], [1, 2, 0]]
    assert lists(*topograph.graph([torch.tensor([0, 1]), torch.tensor([2, 3])]).edges()) == [[0, 2], [1, 3]]
    assert topograph.graph([], num_nodes=2).num_edges() == 0
    assert lists(*topograph.graph(([0, 1], [2, 3])).edges()) == [[0, 1], [2, 3]]  # a tuple stays (U, V)
    hg = topograph.heterograph({("a", "r", "b"): [(0, 1), (2, 3)]})
    assert lists(*hg.edges()) == [[0, 2], [1, 3]]
    assert lists(*topograph.DGLGraph([(0, 1), (1, 2)]).edges()) == [[0, 1], [1, 2]]  # DGL's old constructor
    with pytest.raises(DGLError, match="a list of \\(src, dst\\) edge pairs; for \\(src ids, dst ids\\) pass a tuple"):
        topograph.graph([[0, 1, 2], [1, 2, 0]])


def test_graph_data_forms_match_dgl():
    dgl = pytest.importorskip("dgl")
    forms = [("csr", ([0, 0, 0, 1, 2, 3], [1, 2, 3], [])), ("csr", ([0, 0, 0, 1, 2, 3], [1, 2, 3], [2, 0, 1])),
             ("csc", ([0, 2, 3, 3], [1, 2, 0], [1, 2, 0])), ("coo", ([0, 1], [1, 2])), [(0, 1), (2, 3)],
             [(0, 1), (1, 2), (2, 0)]]
    for data in forms:
        ours, theirs = topograph.graph(data), dgl.graph(data)
        assert ours.num_nodes() == theirs.num_nodes() and lists(*ours.edges()) == lists(*theirs.edges()), data


# --- MetaPath2Vec
def test_metapath2vec_maps_each_type_to_its_embedding_rows():
    g = topograph.heterograph({("user", "uc", "company"): ([0, 0, 2, 1, 3], [1, 2, 1, 3, 0]),
                               ("company", "cu", "user"): ([1, 2, 1, 3, 0], [0, 0, 2, 1, 3])},
                              num_nodes_dict={"company": 4, "user": 5})
    model = topograph.nn.MetaPath2Vec(g, ["uc", "cu"], window_size=1, emb_dim=8)
    # rows numbered type after type in g.ntypes order (company, then user), as DGL's to_homogeneous
    assert model.local_to_global_nid == {"company": [0, 1, 2, 3], "user": [4, 5, 6, 7, 8]}
    user_emb = model.node_embed(torch.LongTensor(model.local_to_global_nid["user"]))  # DGL's docstring use
    assert user_emb.shape == (5, 8) and torch.equal(user_emb, model.node_embed.weight[4:])


# --- DGLError where DGL raises it
def test_user_input_errors_are_dgl_errors():
    g = topograph.graph(([0, 1], [1, 2]))
    hg = topograph.heterograph({("a", "r", "b"): ([0], [1]), ("b", "s", "a"): ([1], [0])})
    core = {  # the core's topo::Error
        "num_nodes below an id": lambda: topograph.graph(([0, 5], [1, 2]), num_nodes=3),
        "unknown edge type": lambda: hg.edges(etype="nope"),
        "unknown node type": lambda: hg.num_nodes("nope"),
        "subgraph id out of range": lambda: g.subgraph([0, 7]),
        "successors id out of range": lambda: g.successors(10),
        "seed out of range": lambda: topograph.sampling.sample_neighbors(g, [9], 1),
    }
    for name, call in core.items():
        with pytest.raises(DGLError):
            call()
        with pytest.raises(ValueError):  # still a ValueError, for code that catches that
            call()
    with pytest.raises(DGLError, match="GraphConv: some destination has no in-edge"):
        topograph.nn.GraphConv(2, 2)(g, torch.ones(3, 2))
    with pytest.raises(DGLError, match="GATConv: some destination has no in-edge"):
        topograph.nn.GATConv(2, 2, 1)(g, torch.ones(3, 2))
    with pytest.raises(DGLError, match="readout_nodes: the graph has node types \\['a', 'b'\\]: name one"):
        topograph.mean_nodes(hg, "x")
    g1, g2 = topograph.graph(([0], [1])), topograph.graph(([0], [1]))
    g1.ndata["x"] = torch.ones(2, 1)
    with pytest.raises(DGLError, match="batch: graph 1's nodes\\['_N'\\].data has features \\[\\]"):
        topograph.batch([g1, g2])
