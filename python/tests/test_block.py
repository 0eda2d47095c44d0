"""topograph.to_block as dgl.to_block: DGL's documented examples, the node and edge order, and every op on a
block against the same op on the graph it came from (value and gradient), the features it carries over."""
import pytest
import torch

import topograph
import topograph.function as fn
from conftest import build
from test_ops import TOL

NID, EID = topograph.NID, topograph.EID


def test_dgl_documented_example():
    # dgl.to_block's docstring: destinations exactly as given, sources = destinations then in-neighbours
    g = topograph.graph(([1, 2], [2, 3]))
    block = topograph.to_block(g, torch.tensor([3, 2]))
    assert block.is_block and not g.is_block
    assert block.dstdata[NID].tolist() == [3, 2]
    assert block.srcdata[NID].tolist() == [3, 2, 1]
    assert block.num_src_nodes() == 3 and block.num_dst_nodes() == 2 and block.num_edges() == 2
    # edges keep the graph's order, as DGL 2.1's do (its docstring still shows the by-destination order of older
    # releases: EID [1, 0])
    assert block.edata[EID].tolist() == [0, 1]
    src, dst = block.edges(order="eid")
    induced_src, induced_dst = block.srcdata[NID], block.dstdata[NID]
    assert induced_src[src].tolist() == [1, 2] and induced_dst[dst].tolist() == [2, 3]
    assert block.ntypes == ["_N"] and block.srctypes == ["_N"] and block.dsttypes == ["_N"]
    assert block.canonical_etypes == [("_N", "_E", "_N")]
    assert repr(block) == "Block(num_src_nodes=3, num_dst_nodes=2, num_edges=2)"
    with pytest.raises(ValueError, match="not among dst_nodes"):
        topograph.to_block(g, torch.tensor([2]))  # node 3 has an in-edge


def test_dgl_documented_heterograph_example():
    g = topograph.heterograph({("A", "_E", "B"): ([1, 2], [2, 3])})
    block = topograph.to_block(g, {"B": torch.tensor([3, 2])})
    assert block.num_dst_nodes("A") == 0 and block.num_dst_nodes("B") == 2
    assert block.dstnodes["B"].data[NID].tolist() == [3, 2]
    assert block.srcnodes["B"].data[NID].tolist() == [3, 2]  # the destinations lead the sources
    assert block.srcnodes["A"].data[NID].tolist() == [1, 2]  # then every in-neighbour, by edge id
    assert block.canonical_etypes == [("A", "_E", "B")]
    with pytest.raises(ValueError, match="give dst_nodes as"):
        topograph.to_block(g, torch.tensor([3, 2]))


def test_default_destinations_and_sources_without_them():
    g = topograph.graph(([4, 0, 4, 2], [1, 3, 3, 1]), num_nodes=6)
    block = topograph.to_block(g)  # every node with an in-edge, sorted
    assert block.dstdata[NID].tolist() == [1, 3]
    assert block.srcdata[NID].tolist() == [1, 3, 4, 0, 2]  # then in-neighbours by edge id
    assert block.edata[EID].tolist() == [0, 1, 2, 3]
    no_dst = topograph.to_block(g, include_dst_in_src=False)
    assert no_dst.srcdata[NID].tolist() == [4, 0, 2]
    assert no_dst.num_src_nodes() == 3 and no_dst.in_degrees().tolist() == [2, 2]


def test_order_over_several_relations_and_features_carried_over():
    g = topograph.heterograph({("user", "follows", "user"): ([0, 2, 3], [1, 1, 2]),
                               ("game", "liked_by", "user"): ([1, 0, 1], [2, 1, 1])}, num_nodes_dict={"user": 5})
    g.nodes["user"].data["h"] = torch.arange(5.0).view(5, 1)
    g.edges["follows"].data["w"] = torch.tensor([10.0, 20.0, 30.0])
    block = topograph.to_block(g, {"user": torch.tensor([2, 1])})
    assert block.srcnodes["user"].data[NID].tolist() == [2, 1, 0, 3]  # edges 0 -> 1, 2 -> 1, 3 -> 2
    assert block.srcnodes["game"].data[NID].tolist() == [1, 0]
    assert block.edges["follows"].data[EID].tolist() == [0, 1, 2]
    assert block.edges[("game", "liked_by", "user")].data[EID].tolist() == [0, 1, 2]
    assert block.srcnodes["user"].data["h"].view(-1).tolist() == [2.0, 1.0, 0.0, 3.0]
    assert block.dstnodes["user"].data["h"].view(-1).tolist() == [2.0, 1.0]
    assert block.edges["follows"].data["w"].tolist() == [10.0, 20.0, 30.0]
    with pytest.raises(ValueError, match="srcnodes"):
        block.ndata
    # two source types: DGL's HeteroNodeDataView, {ntype: tensor} over the types holding the feature
    assert sorted(block.srcdata[NID]) == ["game", "user"]
    assert block.srcdata["h"]["user"].view(-1).tolist() == [2.0, 1.0, 0.0, 3.0]
    with pytest.raises(topograph.DGLError, match="several node types"):
        block.srcdata["x"] = torch.zeros(4)  # which type's?


def _block_of(graph_name, idtype, seed=0):
    """A graph of the test set and a block of it whose destinations are every node with an in-edge plus some
    without, in a shuffled order."""
    g, src, dst, n = build(graph_name, idtype)
    gen = torch.Generator().manual_seed(seed)
    keep = torch.bincount(dst, minlength=n) > 0
    keep |= torch.rand(n, generator=gen) < 0.5
    dst_nodes = torch.nonzero(keep).view(-1)
    dst_nodes = dst_nodes[torch.randperm(dst_nodes.numel(), generator=gen)]
    return g, topograph.to_block(g, dst_nodes.to(idtype)), n


# Each case: the op on a graph -> [dst rows, ...] or [edges, ...], given node features x [n, 2, 3] (rows of the
# graph's nodes, or of the block's source / destination sides) and edge features w [E, 2, 1] by edge id.
NODE_OPS = {
    "copy_u_sum": lambda g, xs, xd, w: topograph.ops.copy_u_sum(g, xs),
    "copy_u_max": lambda g, xs, xd, w: topograph.ops.copy_u_max(g, xs),
    "copy_e_min": lambda g, xs, xd, w: topograph.ops.copy_e_min(g, w),
    "u_mul_e_sum": lambda g, xs, xd, w: topograph.ops.u_mul_e_sum(g, xs, w),
    "u_sub_e_mean": lambda g, xs, xd, w: topograph.ops.u_sub_e_mean(g, xs, w),
    "sparse_attention": lambda g, xs, xd, w: topograph.ops.sparse_attention(g, xd, xs, xs * 2),
}
EDGE_OPS = {
    "u_dot_v": lambda g, xs, xd, w: topograph.ops.u_dot_v(g, xs, xd),
    "v_sub_u": lambda g, xs, xd, w: topograph.ops.v_sub_u(g, xd, xs),
    "e_mul_u": lambda g, xs, xd, w: topograph.ops.e_mul_u(g, w, xs),
    "copy_v": lambda g, xs, xd, w: topograph.ops.copy_v(g, xd),
    "edge_softmax_dst": lambda g, xs, xd, w: topograph.ops.edge_softmax(g, w),
    "edge_softmax_src": lambda g, xs, xd, w: topograph.ops.edge_softmax(g, w, norm_by="src"),
}


@pytest.mark.parametrize("op", list(NODE_OPS) + list(EDGE_OPS))
def test_every_op_on_a_block_equals_it_on_the_graph(graph_name, idtype, op):
    g, block, n = _block_of(graph_name, idtype)
    src_nid, dst_nid, eid = (t.long() for t in (block.srcdata[NID], block.dstdata[NID], block.edata[EID]))
    x = torch.randn(n, 2, 3, requires_grad=True)
    w = torch.randn(g.num_edges(), 2, 1, requires_grad=True)
    f = {**NODE_OPS, **EDGE_OPS}[op]
    on_graph = f(g, x, x, w)
    on_block = f(block, x[src_nid], x[dst_nid], w[eid])
    want = on_graph[dst_nid] if op in NODE_OPS else on_graph[eid]
    torch.testing.assert_close(on_block, want, **TOL)
    # the gradients reaching x and w through the block are those of the graph's rows it reads
    weight = torch.randn_like(want)
    grads_block = torch.autograd.grad((torch.nan_to_num(on_block, posinf=0, neginf=0) * weight).sum(), [x, w],
                                      allow_unused=True)
    grads_graph = torch.autograd.grad((torch.nan_to_num(want, posinf=0, neginf=0) * weight).sum(), [x, w],
                                      allow_unused=True)
    for gb, gg in zip(grads_block, grads_graph):
        if gg is None:
            assert gb is None or gb.abs().sum() == 0
        else:
            torch.testing.assert_close(gb, gg, **TOL)


def test_update_all_on_a_block_reads_srcdata_and_writes_dstdata():
    g, block, n = _block_of("random", torch.int64)
    x = torch.randn(n, 4)
    g.ndata["h"] = x
    block = topograph.to_block(g, block.dstdata[NID])  # carries h over
    assert torch.equal(block.srcdata["h"], x[block.srcdata[NID]])
    block.update_all(fn.copy_u("h", "m"), fn.mean("m", "h_neigh"))
    assert block.dstdata["h_neigh"].shape == (block.num_dst_nodes(), 4)
    g.update_all(fn.copy_u("h", "m"), fn.mean("m", "h_neigh"))
    torch.testing.assert_close(block.dstdata["h_neigh"], g.ndata["h_neigh"][block.dstdata[NID]], **TOL)
    assert "h_neigh" not in block.srcdata  # the sides keep separate features
    block.apply_edges(fn.u_dot_v("h", "h_neigh", "s"))
    assert block.edata["s"].shape == (block.num_edges(), 1)


def test_attention_over_a_block_of_several_relations_takes_public_type_names():
    g = topograph.heterograph({("tok", "ring", "tok"): ([0, 1, 2, 3, 1], [1, 2, 3, 0, 0]),
                               ("sent", "to_tok", "tok"): ([0, 0, 1, 1], [0, 1, 2, 3])})
    order = torch.tensor([2, 0, 3, 1])  # every token has an in-edge: all are destinations, in this order
    block = topograph.to_block(g, {"tok": order})
    q = torch.randn(4, 2, 4)
    tok_rows, sent_rows = block.srcnodes["tok"].data[NID], block.srcnodes["sent"].data[NID]
    k_tok, k_sent = torch.randn(4, 2, 4), torch.randn(2, 2, 4)
    out = topograph.ops.sparse_attention(block, q, {"tok": k_tok[tok_rows], "sent": k_sent[sent_rows]},
                                         {"tok": k_tok[tok_rows], "sent": k_sent[sent_rows]})
    q_all = torch.zeros(4, 2, 4).index_copy(0, order, q)
    want = topograph.ops.sparse_attention(g, q_all, {"tok": k_tok, "sent": k_sent}, {"tok": k_tok, "sent": k_sent})
    torch.testing.assert_close(out, want[order], **TOL)
    layer = topograph.nn.GraphMultiHeadAttention(8, 2)
    h = torch.randn(block.num_src_nodes("tok"), 8)
    assert layer(block["ring"], h[:block.num_dst_nodes("tok")], h).shape == (4, 8)


def test_to_block_errors():
    g = topograph.graph(([0, 1], [1, 2]), num_nodes=4)
    with pytest.raises(ValueError, match="out of range"):
        topograph.to_block(g, torch.tensor([1, 2, 4]))
    with pytest.raises(ValueError, match="twice"):
        topograph.to_block(g, torch.tensor([1, 2, 1]))
    with pytest.raises(TypeError, match="integer"):
        topograph.to_block(g, torch.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match="already a block"):
        topograph.to_block(topograph.to_block(g))
    with pytest.raises(ValueError, match="node type"):
        topograph.to_block(topograph.heterograph({("a", "r", "b"): ([0], [0])}), {"c": torch.tensor([0])})
    with pytest.raises(NotImplementedError):
        topograph.to_block(g).reverse()


def test_src_nodes_fix_the_source_numbering():
    # sources exactly as given: the destinations first, then the in-neighbours in the caller's order, plus a
    # source without edges (as a sampler that keeps a frontier's order hands them over)
    g = topograph.graph(([1, 2, 0], [2, 3, 3]), num_nodes=5)
    x = torch.randn(5, 3, requires_grad=True)
    g.ndata["x"] = x
    block = topograph.to_block(g, torch.tensor([3, 2]), src_nodes=torch.tensor([3, 2, 0, 4, 1]))
    assert block.srcdata[NID].tolist() == [3, 2, 0, 4, 1] and block.dstdata[NID].tolist() == [3, 2]
    src, dst = block.edges(order="eid")
    assert block.srcdata[NID][src].tolist() == [1, 2, 0] and block.dstdata[NID][dst].tolist() == [2, 3, 3]
    assert torch.equal(block.srcdata["x"], x.detach()[[3, 2, 0, 4, 1]])
    out = topograph.ops.copy_u_sum(block, block.srcdata["x"])
    assert torch.allclose(out, torch.stack([x[2] + x[0], x[1]]).detach(), **TOL)
    # without the destinations among the sources, and over two node types
    assert topograph.to_block(g, torch.tensor([3, 2]), include_dst_in_src=False,
                              src_nodes=torch.tensor([1, 0, 2])).srcdata[NID].tolist() == [1, 0, 2]
    h = topograph.heterograph({("A", "r", "B"): ([1, 2], [0, 0]), ("B", "s", "B"): ([1], [0])})
    block = topograph.to_block(h, {"B": torch.tensor([0])}, src_nodes={"A": torch.tensor([2, 0, 1]),
                                                                      "B": torch.tensor([0, 1])})
    assert block.srcnodes["A"].data[NID].tolist() == [2, 0, 1] and block.num_src_nodes("B") == 2
    assert block.num_edges(etype="r") == 2 and block.num_edges(etype="s") == 1


def test_src_nodes_errors():
    g = topograph.graph(([1, 2], [2, 3]), num_nodes=5)
    dst = torch.tensor([3, 2])
    with pytest.raises(ValueError, match="node 1 of type '_N' is the source of an edge"):
        topograph.to_block(g, dst, src_nodes=torch.tensor([3, 2]))
    with pytest.raises(ValueError, match="must start with the destination nodes"):
        topograph.to_block(g, dst, src_nodes=torch.tensor([2, 3, 1]))
    with pytest.raises(ValueError, match="src_nodes of type '_N' name a node twice"):
        topograph.to_block(g, dst, src_nodes=torch.tensor([3, 2, 1, 1]))
    with pytest.raises(ValueError, match="source node 7 of type '_N' out of range"):
        topograph.to_block(g, dst, src_nodes=torch.tensor([3, 2, 1, 7]))
    with pytest.raises(ValueError, match="give src_nodes as"):
        topograph.to_block(topograph.heterograph({("A", "r", "B"): ([0], [0])}), src_nodes=torch.tensor([0]))


def test_create_block_and_block_to_graph():
    """dgl.create_block / dgl.block_to_graph: counts given or inferred, several relations, features carried,
    a conv runs on the block; held to DGL 2.1 where dgl imports."""
    u, v = torch.tensor([0, 1, 2]), torch.tensor([1, 0, 0])
    b = topograph.create_block((u, v), num_src_nodes=4, num_dst_nodes=2)
    assert b.is_block and (b.num_src_nodes(), b.num_dst_nodes(), b.num_edges()) == (4, 2, 3)
    assert [t.tolist() for t in b.edges()] == [u.tolist(), v.tolist()]
    assert (topograph.create_block((u, v)).num_src_nodes(), topograph.create_block((u, v)).num_dst_nodes()) == (3, 2)
    data = {("A", "r", "B"): (torch.tensor([0, 2]), torch.tensor([1, 0])), ("A", "s", "A"): (torch.tensor([1]),
                                                                                               torch.tensor([0]))}
    h = topograph.create_block(data, num_src_nodes={"A": 3}, num_dst_nodes={"A": 1, "B": 2})
    assert h.srctypes == ["A"] and h.dsttypes == ["A", "B"] and h.num_dst_nodes("B") == 2
    with pytest.raises(Exception, match="5"):  # a destination id outside its count is named
        topograph.create_block((u, torch.tensor([1, 0, 5])), num_src_nodes=4, num_dst_nodes=2)
    b.srcdata["x"], b.dstdata["y"], b.edata["w"] = torch.arange(4.0), torch.ones(2), torch.arange(3.0)
    g = topograph.block_to_graph(b)
    assert sorted(g.ntypes) == ["_N_dst", "_N_src"] and g.canonical_etypes == [("_N_src", "_E", "_N_dst")]
    assert torch.equal(g.nodes["_N_src"].data["x"], torch.arange(4.0)) and torch.equal(g.edata["w"], torch.arange(3.0))
    conv = topograph.nn.GraphConv(3, 2, allow_zero_in_degree=True)
    assert conv(b, torch.randn(4, 3)).shape == (2, 2)
    try:
        import dgl
    except ImportError:
        return
    d = dgl.create_block((u, v), num_src_nodes=4, num_dst_nodes=2)
    d.srcdata["x"], d.dstdata["y"], d.edata["w"] = torch.arange(4.0), torch.ones(2), torch.arange(3.0)
    x = torch.randn(4, 3)
    dconv = dgl.nn.GraphConv(3, 2, allow_zero_in_degree=True)
    conv.load_state_dict(dconv.state_dict())
    torch.testing.assert_close(conv(b, x), dconv(d, x))
    dh = dgl.create_block(data, num_src_nodes={"A": 3}, num_dst_nodes={"A": 1, "B": 2})
    assert (dh.srctypes, dh.dsttypes) == (h.srctypes, h.dsttypes)
    dg = dgl.block_to_graph(d)
    assert sorted(dg.ntypes) == sorted(g.ntypes) and dg.canonical_etypes == g.canonical_etypes
    assert sorted(dgl.block_to_graph(dh).canonical_etypes) == sorted(topograph.block_to_graph(h).canonical_etypes)
