"""What a fourth round of DGL-style scripts (hetero RGCN with HeteroGraphConv / HeteroLinear / HeteroEmbedding,
batch / unbatch and every readout, GAT variants with attention, GraphSAGE and link prediction on blocks, graph
transforms, local_scope and UDF message passing, save / load, the errors users hit, conv layers, heterograph
operations, datasets and dgl.transforms) needed: HeteroEmbedding.weight as a property, NodeBatch.ntype, and a
DGLError for g.nodes[unknown type].data (it read as an empty frame). Checked against DGL 2.1 where dgl imports
(those cases skip otherwise)."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)
import topograph.function as fn

import pytest
import torch

DGLError = topograph.DGLError


# --- HeteroEmbedding.weight
def test_hetero_embedding_weight_is_a_property():
    emb = topograph.nn.HeteroEmbedding({"user": 3, ("user", "buys", "item"): 2}, 4)
    tables = emb.weight  # DGL's scripts read emb.weight[ntype], no call
    assert sorted(map(str, tables)) == sorted(["user", str(("user", "buys", "item"))])
    assert tables["user"] is emb.embeds["user"].weight and tables[("user", "buys", "item")].shape == (2, 4)


def test_hetero_embedding_weight_matches_dgl():
    dgl = pytest.importorskip("dgl")
    ours, theirs = topograph.nn.HeteroEmbedding({"a": 3, "b": 2}, 4), dgl.nn.HeteroEmbedding({"a": 3, "b": 2}, 4)
    assert {k: tuple(v.shape) for k, v in ours.weight.items()} == {k: tuple(v.shape) for k, v in theirs.weight.items()}


# --- NodeBatch.ntype
def hetero():
    g = topograph.heterograph({("user", "plays", "game"): ([0, 1, 1], [0, 0, 1]),
                               ("user", "follows", "user"): ([0, 1], [1, 2])})
    g.nodes["user"].data["h"] = torch.tensor([[1.0], [2.0], [3.0]])
    g.nodes["game"].data["h"] = torch.tensor([[10.0], [20.0]])
    return g


def test_node_batch_names_its_node_type():
    seen = []

    def reduce(nodes):  # DGL's UDFs branch on nodes.ntype on heterographs
        seen.append(("reduce", nodes.ntype))
        return {"s": nodes.mailbox["m"].sum(1)}

    def apply(nodes):
        seen.append(("apply", nodes.ntype))
        return {"a": nodes.data["h"] * (2 if nodes.ntype == "game" else 3)}

    g = hetero()
    g.update_all(fn.copy_u("h", "m"), reduce, apply, etype="plays")
    assert g.nodes["game"].data["a"].tolist() == [[20.0], [40.0]]
    g.apply_nodes(apply, ntype="user")
    assert g.nodes["user"].data["a"].tolist() == [[3.0], [6.0], [9.0]]
    g.multi_update_all({"plays": (fn.copy_u("h", "m"), fn.sum("m", "z")),
                        "follows": (fn.copy_u("h", "m"), fn.sum("m", "z"))}, "sum", apply)
    g.update_all(fn.copy_u("h", "m"), fn.sum("m", "t"), apply)  # every relation at once
    g.pull(torch.tensor([1]), fn.copy_u("h", "m"), reduce, etype="plays")
    assert g.filter_nodes(lambda nodes: (nodes.data["h"] > 1).view(-1) & (nodes.ntype == "user"), ntype="user") \
        .tolist() == [1, 2]
    assert ("reduce", "game") in seen and ("apply", "game") in seen and ("apply", "user") in seen
    assert {t for _, t in seen} == {"game", "user"}
    homo = topograph.graph(([0, 1], [1, 2]))
    homo.ndata["h"] = torch.ones(3, 1)
    homo.update_all(fn.copy_u("h", "m"), reduce)
    assert seen[-1] == ("reduce", "_N")
    block = topograph.to_block(homo, torch.tensor([1, 2]))  # a block's destination side keeps the public name
    block.srcdata["h"] = torch.ones(block.num_src_nodes(), 1)
    block.update_all(fn.copy_u("h", "m"), reduce)
    assert seen[-1] == ("reduce", "_N")


def test_node_batch_ntype_matches_dgl():
    dgl = pytest.importorskip("dgl")
    names = {}
    for lib in (topograph, dgl):
        g = lib.heterograph({("user", "plays", "game"): ([0, 1, 1], [0, 0, 1])})
        g.nodes["user"].data["h"] = torch.ones(2, 1)
        seen = []
        g.update_all(lib.function.copy_u("h", "m"),
                     lambda nodes: seen.append(nodes.ntype) or {"s": nodes.mailbox["m"].sum(1)})
        g.apply_nodes(lambda nodes: seen.append(nodes.ntype) or {}, ntype="user")
        names[lib.__name__] = sorted(set(seen))
    assert names["topograph"] == names["dgl"] == ["game", "user"]


# --- g.nodes[unknown type]
def test_unknown_node_type_in_a_node_view_is_a_dgl_error():
    g = topograph.graph(([0, 1], [1, 2]))
    for call in (lambda: g.nodes["nope"].data, lambda: g.nodes[(torch.tensor([0]), "nope")].data,
                 lambda: g.srcnodes["nope"].data, lambda: g.dstnodes["nope"].data):
        with pytest.raises(DGLError, match="unknown (source |destination )?node type 'nope' \\(node types: _N\\)"):
            call()
    hg = hetero()
    with pytest.raises(DGLError, match="unknown node type 'usr' \\(node types: game, user\\)"):
        hg.nodes["usr"].data
    block = topograph.to_block(topograph.edge_type_subgraph(hg, ["plays"]), {"game": torch.tensor([0, 1])})
    with pytest.raises(DGLError, match="unknown destination node type 'shop' \\(node types: game, user\\)"):
        block.dstnodes["shop"].data
    assert len(block.dstnodes["user"].data[topograph.NID]) == 0  # a type without destinations is still a type
    assert block.srcnodes["user"].data[topograph.NID].tolist() == [0, 1] and "h" not in g.nodes["_N"].data


def test_unknown_node_type_matches_dgl():
    dgl = pytest.importorskip("dgl")
    for lib in (topograph, dgl):
        with pytest.raises(lib.DGLError):
            lib.graph(([0, 1], [1, 2])).nodes["nope"].data


# --- edge_softmax over a heterograph's relations
def two_into_user():
    return topograph.heterograph({("user", "follows", "user"): ([0, 1, 2, 1], [1, 2, 3, 3]),
                                  ("game", "liked-by", "user"): ([0, 1, 1], [3, 3, 0]),
                                  ("user", "plays", "game"): ([0, 1, 1], [0, 0, 1])})


def test_edge_softmax_over_relations_shares_each_nodes_softmax():
    g = two_into_user()
    gen = torch.Generator().manual_seed(0)
    logits = {c: torch.randn(g.num_edges(c), 2, generator=gen, requires_grad=True) for c in g.canonical_etypes}
    out = topograph.nn.functional.edge_softmax(g, logits)
    assert list(out) == g.canonical_etypes
    # user 3's in-edges: follows 2 and 3, liked-by 0 and 1: one softmax over the four
    f, lk = ("user", "follows", "user"), ("game", "liked-by", "user")
    four = torch.cat([logits[f][2:4], logits[lk][0:2]]).softmax(0)
    torch.testing.assert_close(torch.cat([out[f][2:4], out[lk][0:2]]), four)
    torch.testing.assert_close(out[lk][2], torch.ones(2))  # user 0's only in-edge
    p = ("user", "plays", "game")
    torch.testing.assert_close(out[p][:2], logits[p][:2].softmax(0))
    sum(o.pow(2).sum() for o in out.values()).backward()
    assert all(x.grad is not None and x.grad.shape == x.shape for x in logits.values())
    # by source: user 1's out-edges are follows 1 and 3 and plays 1 and 2
    by_src = topograph.nn.functional.edge_softmax(g, {c[1]: v.detach() for c, v in logits.items()}, norm_by="src")
    torch.testing.assert_close(torch.cat([by_src[f][[1, 3]], by_src[p][1:3]]),
                               torch.cat([logits[f][[1, 3]], logits[p][1:3]]).detach().softmax(0))
    with pytest.raises(DGLError, match="no tensor for relations \\[\\('user', 'plays', 'game'\\)\\]"):
        topograph.nn.functional.edge_softmax(g, {f: logits[f], lk: logits[lk]})
    with pytest.raises(DGLError, match="one row per edge \\(3\\), got \\(2, 2\\)"):
        topograph.nn.functional.edge_softmax(g, {**logits, p: torch.ones(2, 2)})


def test_edge_softmax_over_relations_matches_dgl():
    dgl = pytest.importorskip("dgl")
    ours = two_into_user()
    u, v = {}, {}
    for c in ours.canonical_etypes:
        u[c], v[c] = ours.edges(etype=c)
    theirs = dgl.heterograph({c: (u[c], v[c]) for c in ours.canonical_etypes})
    gen = torch.Generator().manual_seed(1)
    logits = {c: torch.randn(ours.num_edges(c), 3, 1, generator=gen) for c in ours.canonical_etypes}
    for norm_by in ("dst", "src"):
        a = topograph.nn.functional.edge_softmax(ours, logits, norm_by=norm_by)
        b = dgl.nn.functional.edge_softmax(theirs, logits, norm_by=norm_by)
        assert sorted(a) == sorted(b)
        for c in b:
            torch.testing.assert_close(a[c], b[c])


# --- adj_external's SciPy matrix
def test_adj_external_scipy_matrix_is_int64():
    pytest.importorskip("scipy")
    g = topograph.graph(([0, 1, 1], [1, 2, 2]))
    for fmt in ("coo", "csr", "csc"):
        m = g.adj_external(scipy_fmt=fmt)
        assert m.dtype == "int64" and m.toarray().tolist() == [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    assert g.adj_external(transpose=True, scipy_fmt="csr").toarray().tolist() == [[0, 0, 0], [1, 0, 0], [0, 2, 0]]
    assert g.adj_external().dtype == torch.float32  # the torch tensor stays float32, as DGL's


def test_adj_external_scipy_dtype_matches_dgl():
    dgl = pytest.importorskip("dgl")
    pytest.importorskip("scipy")
    u, v = [0, 1, 1, 3], [1, 2, 2, 0]
    for fmt in ("coo", "csr"):  # DGL 2.1 has no 'csc' here
        assert topograph.graph((u, v)).adj_external(scipy_fmt=fmt).dtype == dgl.graph((u, v)).adj_external(
            scipy_fmt=fmt).dtype
