"""topograph.ops.sparse_attention (the fused kernel) against the unfused plain-PyTorch reference, value and
gradient (float64 reference, rtol = atol = 1e-4), over one relation and over a block of two relations."""
import pytest
import torch

import topograph
from conftest import build, ref_attention
from test_ops import TOL, check, leaf, ref_of


@pytest.mark.parametrize("heads,dk,dv", [(1, 1, 1), (3, 8, 5), (2, 33, 4)])
def test_attention_over_one_relation(graph_name, idtype, heads, dk, dv):
    g, src, dst, n = build(graph_name, idtype)
    q, k, v = leaf(n, (heads, dk)), leaf(n, (heads, dk)), leaf(n, (heads, dv))
    out = topograph.ops.sparse_attention(g, q, k, v)
    rq, rk, rv = ref_of(q), ref_of(k), ref_of(v)
    check(out, ref_attention(src, dst, n, rq, rk, rv, dk ** -0.5), [q, k, v], [rq, rk, rv])


def test_attention_equals_the_unfused_topograph_ops():
    g, src, dst, n = build("random", torch.int64)
    q, k, v = torch.randn(n, 2, 4), torch.randn(n, 2, 4), torch.randn(n, 2, 3)
    a = topograph.ops.edge_softmax(g, topograph.ops.v_dot_u(g, q, k) * 0.3)
    torch.testing.assert_close(topograph.ops.sparse_attention(g, q, k, v, scale=0.3),
                               topograph.ops.u_mul_e_sum(g, v, a), **TOL)


def test_one_softmax_across_two_relations():
    # tokens attend to their ring neighbours (tok -> tok) and to their sentence node (sent -> tok) at once
    n_tok, n_sent = 7, 2
    ring_src = torch.tensor([(i + d) % n_tok for i in range(n_tok) for d in (-1, 1)])
    ring_dst = torch.tensor([i for i in range(n_tok) for _ in (-1, 1)])
    sent_src = torch.tensor([0, 0, 0, 1, 1, 1, 1])
    sent_dst = torch.arange(n_tok)
    hg = topograph.heterograph({("tok", "ring", "tok"): (ring_src, ring_dst),
                                ("sent", "to_tok", "tok"): (sent_src, sent_dst)})
    q = leaf(n_tok, (2, 4))
    k = {"tok": leaf(n_tok, (2, 4)), "sent": leaf(n_sent, (2, 4))}
    v = {"tok": leaf(n_tok, (2, 3)), "sent": leaf(n_sent, (2, 3))}
    out = topograph.ops.sparse_attention(hg, q, k, v)
    # the block numbers sources type by type in the graph's order: sent (0..1), then tok (2..8)
    assert hg.ntypes == ["sent", "tok"]
    src = torch.cat([sent_src, ring_src + n_sent])
    dst = torch.cat([sent_dst, ring_dst])
    rq, rk, rv = ref_of(q), {t: ref_of(x) for t, x in k.items()}, {t: ref_of(x) for t, x in v.items()}
    ref = ref_attention(src, dst, n_tok, rq, torch.cat([rk["sent"], rk["tok"]]), torch.cat([rv["sent"], rv["tok"]]),
                        0.5)
    check(out, ref, [q, k["sent"], k["tok"], v["sent"], v["tok"]], [rq, rk["sent"], rk["tok"], rv["sent"], rv["tok"]])


def test_attention_errors():
    g, src, dst, n = build("random", torch.int64)
    with pytest.raises(ValueError, match="q must be"):
        topograph.ops.sparse_attention(g, torch.ones(n, 4), torch.ones(n, 4), torch.ones(n, 4))
    with pytest.raises(ValueError):
        topograph.ops.sparse_attention(g, torch.ones(n, 2, 4), torch.ones(n, 2, 3), torch.ones(n, 2, 4))
    two = topograph.heterograph({("a", "r", "b"): ([0], [0]), ("a", "s", "a"): ([0], [0])})
    with pytest.raises(ValueError, match="ends in"):
        topograph.ops.sparse_attention(two, torch.ones(1, 1, 2), torch.ones(1, 1, 2), torch.ones(1, 1, 2))
    hg = topograph.heterograph({("t", "r", "t"): ([0], [1]), ("s", "x", "t"): ([0], [1])})
    with pytest.raises(ValueError, match="no rows for source type"):
        topograph.ops.sparse_attention(hg, torch.ones(2, 1, 2), {"t": torch.ones(2, 1, 2)}, {"t": torch.ones(2, 1, 2)})


def test_graph_multi_head_attention_module_against_a_dense_reference():
    torch.manual_seed(1)
    g, src, dst, n = build("multi_loop_isolated", torch.int64)
    layer = topograph.nn.GraphMultiHeadAttention(12, 3)
    x = torch.randn(n, 12, requires_grad=True)
    out = layer(g, x)
    assert out.shape == (n, 12)
    # the same equations in plain torch, float64, on the layer's own weights
    xd = x.detach().double().requires_grad_()
    lin = {name: (getattr(layer, name).weight.detach().double(), getattr(layer, name).bias.detach().double())
           for name in "qkvo"}
    proj = {name: xd @ w.t() + b for name, (w, b) in lin.items() if name != "o"}
    heads = ref_attention(src, dst, n, *(proj[p].view(n, 3, 4) for p in "qkv"), 4 ** -0.5)
    ref = heads.reshape(n, 12) @ lin["o"][0].t() + lin["o"][1]
    torch.testing.assert_close(out.double(), ref, **TOL)
    w = torch.randn(n, 12, dtype=torch.float64)
    (out.double() * w).sum().backward()
    (ref * w).sum().backward()
    torch.testing.assert_close(x.grad.double(), xd.grad, **TOL)
    assert all(p.grad is not None for p in layer.parameters())


def test_graph_multi_head_attention_over_two_node_types():
    hg = topograph.heterograph({("tok", "ring", "tok"): ([0, 1, 2, 1], [1, 2, 0, 0]),
                                ("sent", "to_tok", "tok"): ([0, 0, 0], [0, 1, 2])})
    layer = topograph.nn.GraphMultiHeadAttention(8, 2)
    tok, sent = torch.randn(3, 8), torch.randn(1, 8)
    out = layer(hg, tok, {"tok": tok, "sent": sent})
    assert out.shape == (3, 8)
    with pytest.raises(ValueError, match="equal heads"):
        topograph.nn.GraphMultiHeadAttention(10, 3)
