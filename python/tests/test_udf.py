"""User-defined message / reduce / apply functions in update_all and apply_edges (DGL's EdgeBatch and
NodeBatch), against the built-ins and the plain-PyTorch references, value and gradient, on the awkward graphs;
the mailbox's layout (degree buckets, messages by edge id); mixing UDFs with built-ins; blocks; errors."""
import pytest
import torch

import topograph
import topograph.function as fn
from conftest import build, ref_gsddmm, ref_gspmm
from test_ops import TOL


def u_mul_e(edges):
    return {"m": edges.src["h"] * edges.data["w"]}


def mailbox_sum(nodes):
    return {"out": nodes.mailbox["m"].sum(1)}


def test_udf_message_and_reduce_equal_the_reference(graph_name, idtype):
    g, src, dst, n = build(graph_name, idtype)
    x = torch.randn(n, 2, 3, requires_grad=True)
    w = torch.randn(g.num_edges(), 2, 1, requires_grad=True)
    g.ndata["h"], g.edata["w"] = x, w
    g.update_all(u_mul_e, mailbox_sum)
    if g.num_edges() == 0:  # the reducer never runs, and nothing is written (as in DGL)
        assert "out" not in g.ndata
        return
    out = g.ndata["out"]
    rx, rw = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    ref = ref_gspmm(src, dst, n, "mul", "sum", rx, rw)
    torch.testing.assert_close(out.double(), ref, **TOL)
    weight = torch.randn_like(ref)
    (out.double() * weight).sum().backward()
    (ref * weight).sum().backward()
    torch.testing.assert_close(x.grad.double(), rx.grad, **TOL)
    torch.testing.assert_close(w.grad.double(), rw.grad, **TOL)


def test_mailbox_holds_each_nodes_messages_by_edge_id_in_degree_buckets():
    g = topograph.graph(([3, 0, 1, 2, 4, 0], [1, 2, 1, 1, 2, 0]), num_nodes=5)
    g.ndata["h"] = torch.arange(5.0).view(5, 1)
    seen = []

    def reduce(nodes):
        seen.append((nodes.nodes().tolist(), tuple(nodes.mailbox["m"].shape)))
        return {"first": nodes.mailbox["m"][:, 0], "last": nodes.mailbox["m"][:, -1]}

    g.update_all(fn.copy_u("h", "m"), reduce)  # a built-in message, a UDF reducer
    assert sorted(seen) == [([0], (1, 1, 1)), ([1], (1, 3, 1)), ([2], (1, 2, 1))]
    # node 1's in-edges by id: 0 (from 3), 2 (from 1), 3 (from 2); node 2's: 1 (from 0), 4 (from 4)
    assert g.ndata["first"].view(-1).tolist() == [0.0, 3.0, 0.0, 0.0, 0.0]
    assert g.ndata["last"].view(-1).tolist() == [0.0, 2.0, 4.0, 0.0, 0.0]  # nodes 3, 4 have no in-edges: 0


def test_mixing_udfs_and_builtins_and_apply_node_func():
    g, src, dst, n = build("random", torch.int64)
    x = torch.randn(n, 4, requires_grad=True)
    g.ndata["h"] = x
    g.update_all(fn.copy_u("h", "m"), lambda nodes: {"mx": nodes.mailbox["m"].max(1).values})
    g.update_all(lambda edges: {"m": edges.src["h"]}, fn.max("m", "mx_builtin"))
    torch.testing.assert_close(g.ndata["mx"], g.ndata["mx_builtin"])
    g.update_all(fn.copy_u("h", "m"), fn.sum("m", "s"), lambda nodes: {"s2": nodes.data["s"] * 2 + nodes.data["h"]})
    torch.testing.assert_close(g.ndata["s2"], topograph.ops.copy_u_sum(g, x) * 2 + x, **TOL)
    g.ndata["s2"].sum().backward()
    assert x.grad is not None and x.grad.abs().sum() > 0


def test_apply_edges_udf_reads_src_dst_and_edges():
    g, src, dst, n = build("multi_loop_isolated", torch.int32)
    q, k = torch.randn(n, 2, 4), torch.randn(n, 2, 4)
    g.ndata["q"], g.ndata["k"] = q, k
    g.edata["w"] = torch.randn(g.num_edges(), 2, 1)

    def score(edges):
        u, v, eid = edges.edges()
        assert eid.tolist() == list(range(g.num_edges())) and len(edges) == g.num_edges()
        return {"s": (edges.src["k"] * edges.dst["q"]).sum(-1, keepdim=True) + edges.data["w"], "v": v}

    g.apply_edges(score)
    want = ref_gsddmm(src, dst, "dot", k.double(), q.double(), "u", "v") + g.edata["w"].double()
    torch.testing.assert_close(g.edata["s"].double(), want, **TOL)
    assert g.edata["v"].tolist() == dst.tolist()


def test_udfs_on_a_block_read_srcdata_and_write_dstdata():
    g, src, dst, n = build("random", torch.int64)
    block = topograph.to_block(g)
    x = torch.randn(block.num_src_nodes(), 3)
    block.srcdata["h"] = x
    block.update_all(lambda edges: {"m": edges.src["h"] * 2}, lambda nodes: {"h": nodes.mailbox["m"].mean(1)})
    assert block.dstdata["h"].shape == (block.num_dst_nodes(), 3)
    torch.testing.assert_close(block.dstdata["h"], topograph.ops.copy_u_mean(block, x) * 2, **TOL)
    assert torch.equal(block.srcdata["h"], x)  # the sides keep separate features


def test_udf_errors():
    g, *_ = build("multi_loop_isolated", torch.int64)
    g.ndata["h"] = torch.ones(g.num_nodes(), 2)
    with pytest.raises(TypeError, match="must return a dict"):
        g.update_all(fn.copy_u("h", "m"), lambda nodes: nodes.mailbox["m"].sum(1))
    with pytest.raises(ValueError, match="rows"):
        g.apply_edges(lambda edges: {"s": torch.ones(3)})
    with pytest.raises(KeyError, match="no feature 'nope'"):
        g.update_all(lambda edges: {"m": edges.src["nope"]}, fn.sum("m", "x"))
    with pytest.raises(ValueError, match="reads message 'x'"):
        g.update_all(lambda edges: {"m": edges.src["h"]}, fn.sum("x", "out"))
    with pytest.raises(TypeError, match="reduce function"):
        g.update_all(fn.copy_u("h", "m"), "sum")
