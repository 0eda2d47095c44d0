"""ndata / edata, update_all and apply_edges with dgl.function's built-ins, lowered onto the ops: each result
equals the op (or the gsddmm -> gspmm pair) DGL would run, and gradients reach the stored features."""
import pytest
import torch

import topograph
import topograph.function as fn
from conftest import build, ref_gsddmm, ref_gspmm


@pytest.fixture
def g():
    graph, *_ = build("multi_loop_isolated", torch.int64)
    return graph


def test_update_all_lowers_to_one_gspmm(g):
    x, w = torch.randn(g.num_nodes(), 2, 3), torch.randn(g.num_edges(), 2, 1)
    g.ndata["h"], g.edata["w"] = x, w
    g.update_all(fn.copy_u("h", "m"), fn.sum("m", "s"))
    torch.testing.assert_close(g.ndata["s"], topograph.ops.copy_u_sum(g, x))
    g.update_all(fn.u_mul_e("h", "w", "m"), fn.max("m", "mx"))  # 0 without in-edges (DGL's update_all)
    torch.testing.assert_close(g.ndata["mx"], topograph.ops.gspmm_zero_empty(g, "mul", "max", x, w))
    assert g.ndata["mx"][5].abs().sum() == 0 and g.in_degrees(5) == 0
    g.update_all(fn.e_mul_u("w", "h", "m"), fn.mean("m", "mean"))  # commutative: swapped onto u_mul_e
    torch.testing.assert_close(g.ndata["mean"], topograph.ops.u_mul_e_mean(g, x, w))
    g.update_all(fn.copy_e("w", "m"), fn.min("m", "wmin"))
    torch.testing.assert_close(g.ndata["wmin"], topograph.ops.gspmm_zero_empty(g, "copy_rhs", "min", None, w))


def test_messages_that_read_the_destination_or_dot_go_through_gsddmm():
    graph, src, dst, n = build("random", torch.int32)
    q, k = torch.randn(n, 2, 4), torch.randn(n, 2, 4)
    graph.ndata["q"], graph.ndata["k"] = q, k
    graph.update_all(fn.u_dot_v("k", "q", "s"), fn.sum("s", "out"))
    want = ref_gspmm(src.long(), dst.long(), n, "copy_rhs", "sum", None,
                     ref_gsddmm(src.long(), dst.long(), "dot", k.double(), q.double(), "u", "v"))
    torch.testing.assert_close(graph.ndata["out"].double(), want, rtol=1e-4, atol=1e-4)
    graph.update_all(fn.copy_v("q", "m"), fn.sum("m", "vq"))  # each destination gets its own q, in-degree times
    deg = graph.in_degrees().to(torch.float32).view(-1, 1, 1)
    torch.testing.assert_close(graph.ndata["vq"], q * deg)


def test_apply_edges_and_gradients_through_stored_features(g):
    x = torch.randn(g.num_nodes(), 3, requires_grad=True)
    y = torch.randn(g.num_nodes(), 3, requires_grad=True)
    g.ndata["x"], g.ndata["y"] = x, y
    g.apply_edges(fn.u_add_v("x", "y", "e"))
    torch.testing.assert_close(g.edata["e"], topograph.ops.u_add_v(g, x, y))
    g.edata["a"] = topograph.nn.functional.edge_softmax(g, g.edata["e"])
    g.update_all(fn.u_mul_e("x", "a", "m"), fn.sum("m", "h"))
    g.ndata["h"].sum().backward()
    assert x.grad is not None and y.grad is not None and x.grad.shape == x.shape


def test_local_scope_drops_new_features_and_restores_replaced_ones(g):
    x = torch.randn(g.num_nodes(), 2)
    g.ndata["h"] = x
    with g.local_scope():
        g.ndata["h"] = x * 2
        g.ndata["tmp"] = x
        g.update_all(fn.copy_u("h", "m"), fn.sum("m", "s"))
    assert set(g.ndata) == {"h"} and g.ndata["h"] is x


def test_bipartite_src_and_dst_data():
    hg = topograph.heterograph({("user", "plays", "game"): ([0, 1, 2, 2], [0, 0, 1, 2])})
    hg.srcdata["h"] = torch.ones(3, 2)
    hg.update_all(fn.copy_u("h", "m"), fn.sum("m", "n"))
    assert hg.dstdata["n"][:, 0].tolist() == [2.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="node types"):
        hg.ndata  # two node types: name the side (srcdata / dstdata)


def test_message_passing_errors(g):
    with pytest.raises(ValueError, match=r"expected a tensor of 6 rows, got \(5, 2\)"):
        g.ndata["h"] = torch.ones(5, 2)
    with pytest.raises(KeyError, match="no feature 'nope'"):
        g.update_all(fn.copy_u("nope", "m"), fn.sum("m", "h"))
    g.ndata["h"] = torch.ones(6, 2)
    with pytest.raises(ValueError, match="reads message 'x'"):
        g.update_all(fn.copy_u("h", "m"), fn.sum("x", "h"))
    with pytest.raises(TypeError, match="must return a dict"):
        g.update_all(lambda edges: edges.src["h"], fn.sum("m", "h"))
    hg = topograph.heterograph({("a", "r", "a"): ([0], [1]), ("a", "s", "a"): ([1], [0])})
    with pytest.raises(NotImplementedError, match="one relation"):
        hg.update_all(fn.copy_u("h", "m"), fn.sum("m", "h"))
