"""gspmm / gsddmm / edge_softmax against plain-PyTorch references (conftest.py), value and gradient, on
multi-edges, self loops, isolated nodes, edgeless graphs, int32 and int64 ids and DGL's feature shapes.

Topograph computes in float32; the references run in float64 on the same values, so values and gradients
must agree to float32 accuracy: rtol = atol = 1e-4 (sums over at most a few dozen edges)."""
import pytest
import torch

import topograph
from conftest import build, ref_edge_softmax, ref_gsddmm, ref_gspmm

TOL = dict(rtol=1e-4, atol=1e-4)

# (lhs row shape, rhs row shape): DGL's layouts. [N, H, D] with [E, H, 1]; [N, H] with [E, H]; [N, D] with
# [E, 1] (one weight per edge); [N, H, D] with [E, H, D]; 1-D [N] with [E].
SHAPES = {"NHD_EH1": ((3, 4), (3, 1)), "NHD_EHD": ((2, 3), (2, 3)), "NH_EH": ((2,), (2,)), "ND_E1": ((5,), (1,)),
          "1d": ((), ())}


def leaf(rows, row_shape, positive=False):
    x = torch.randn((rows,) + tuple(row_shape))
    if positive:  # divisors away from zero
        x = x.abs() + 0.5
    return x.requires_grad_()


def ref_of(x):
    return None if x is None else x.detach().double().requires_grad_()


def check(out, ref, inputs, refs):
    """Values, then gradients of sum(out * w) for a random w (the same w for both)."""
    assert out.dtype == torch.float32
    assert tuple(out.shape) == tuple(ref.shape)
    torch.testing.assert_close(out.double(), ref.detach(), **TOL)
    w = torch.randn(ref.shape, dtype=torch.float64)
    live = [(x, r) for x, r in zip(inputs, refs) if x is not None]
    (out.double() * w).sum().backward()
    if ref.requires_grad:
        (ref * w).sum().backward()
    for x, r in live:
        got = x.grad if x.grad is not None else torch.zeros_like(x)
        want = r.grad if r.grad is not None else torch.zeros_like(r)
        torch.testing.assert_close(got.double(), want, **TOL)


def one_d_ref(fn, *xs):
    """DGL's 1-D rule in the reference: [rows] operands become [rows, 1], the output is squeezed back."""
    if all(x is None or x.dim() == 1 for x in xs) and any(x is not None for x in xs):
        out = fn(*[None if x is None else x.unsqueeze(-1) for x in xs])
        return out.squeeze(-1)
    return fn(*xs)


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("reduce", ["sum", "max", "min", "mean"])
@pytest.mark.parametrize("op", ["copy_lhs", "copy_rhs", "add", "sub", "mul", "div"])
def test_gspmm(graph_name, idtype, op, reduce, shape):
    g, src, dst, n = build(graph_name, idtype)
    ushape, eshape = SHAPES[shape]
    u = None if op == "copy_rhs" else leaf(n, ushape)
    e = None if op == "copy_lhs" else leaf(src.numel(), eshape, positive=op == "div")
    out = topograph.ops.gspmm(g, op, reduce, u, e)
    ru, re = ref_of(u), ref_of(e)
    ref = one_d_ref(lambda a, b: ref_gspmm(src, dst, n, op, reduce, a, b), ru, re)
    check(out, ref, [u, e], [ru, re])


TARGET_PAIRS = [("u", "v"), ("v", "u"), ("u", "e"), ("e", "v"), ("v", "e"), ("u", "u")]


# dot reduces the last dim, so it takes the layouts whose last dims agree ([N, D] . [N, D] and 1-D).
OP_SHAPES = [(op, shape) for op in ["add", "sub", "mul", "div", "dot", "copy_lhs", "copy_rhs"] for shape in SHAPES
             if op != "dot" or SHAPES[shape][0][-1:] == SHAPES[shape][1][-1:]]


@pytest.mark.parametrize("op,shape", OP_SHAPES, ids=[f"{o}-{s}" for o, s in OP_SHAPES])
@pytest.mark.parametrize("targets", TARGET_PAIRS, ids=["".join(t) for t in TARGET_PAIRS])
def test_gsddmm(graph_name, idtype, op, targets, shape):
    lhs_shape, rhs_shape = SHAPES[shape]
    g, src, dst, n = build(graph_name, idtype)
    lt, rt = targets
    rows = {"u": n, "v": n, "e": src.numel()}
    lhs = None if op == "copy_rhs" else leaf(rows[lt], lhs_shape)
    rhs = None if op == "copy_lhs" else leaf(rows[rt], rhs_shape, positive=op == "div")
    out = topograph.ops.gsddmm(g, op, lhs, rhs, lt, rt)
    rl, rr = ref_of(lhs), ref_of(rhs)
    ref = one_d_ref(lambda a, b: ref_gsddmm(src, dst, op, a, b, lt, rt), rl, rr)
    check(out, ref, [lhs, rhs], [rl, rr])


@pytest.mark.parametrize("norm_by", ["dst", "src"])
@pytest.mark.parametrize("shape", [(), (1,), (4,), (3, 1)], ids=["E", "E1", "EH", "EH1"])
def test_edge_softmax(graph_name, idtype, shape, norm_by):
    g, src, dst, n = build(graph_name, idtype)
    x = leaf(src.numel(), shape)
    out = topograph.nn.functional.edge_softmax(g, x, norm_by=norm_by)
    rx = ref_of(x)
    ref = ref_edge_softmax(src, dst, rx, norm_by)
    check(out, ref, [x], [rx])


def test_dgl_shorthands_match_the_general_ops(idtype):
    g, src, dst, n = build("multi_loop_isolated", idtype)
    E = src.numel()
    x, y, w = torch.randn(n, 2, 3), torch.randn(n, 2, 3), torch.randn(E, 2, 1)
    ops = topograph.ops
    torch.testing.assert_close(ops.copy_u_sum(g, x), ops.gspmm(g, "copy_lhs", "sum", x, None))
    torch.testing.assert_close(ops.copy_u_max(g, x), ops.gspmm(g, "copy_lhs", "max", x, None))
    torch.testing.assert_close(ops.copy_u_mean(g, x), ops.gspmm(g, "copy_lhs", "mean", x, None))
    torch.testing.assert_close(ops.copy_e_sum(g, w), ops.gspmm(g, "copy_rhs", "sum", None, w))
    torch.testing.assert_close(ops.u_mul_e_sum(g, x, w), ops.gspmm(g, "mul", "sum", x, w))
    torch.testing.assert_close(ops.u_add_v(g, x, y), ops.gsddmm(g, "add", x, y, "u", "v"))
    torch.testing.assert_close(ops.u_dot_v(g, x, y), ops.gsddmm(g, "dot", x, y, "u", "v"))
    torch.testing.assert_close(ops.u_mul_v(g, x, y), ops.gsddmm(g, "mul", x, y, "u", "v"))
    torch.testing.assert_close(ops.e_div_v(g, w, y), ops.gsddmm(g, "div", w, y, "e", "v"))
    torch.testing.assert_close(ops.copy_u(g, x), x[src])
    torch.testing.assert_close(ops.copy_v(g, y), y[dst])
    assert ops.u_dot_v(g, x, y).shape == (E, 2, 1)
    # every name dgl.ops defines for these families
    for name in ["u_sub_e_min", "u_div_e_mean", "copy_e_max", "v_sub_u", "e_dot_u", "v_div_e", "e_add_u"]:
        assert callable(getattr(ops, name)), name
    assert topograph.ops.edge_softmax is topograph.nn.functional.edge_softmax


def test_noncontiguous_inputs_are_made_contiguous_and_match():
    g, src, dst, n = build("random", torch.int64)
    E = src.numel()
    base_u = torch.randn(4, n, 3)  # u = base_u.transpose(0, 1): [n, 4, 3], non-contiguous
    u = base_u.transpose(0, 1).requires_grad_()
    u.retain_grad()
    wide = torch.randn(E, 4, 2)
    e = wide[:, :, :1]  # [E, 4, 1] with stride 2 in the last dim
    assert not u.is_contiguous() and not e.is_contiguous()
    e.requires_grad_()
    out = topograph.ops.u_mul_e_sum(g, u, e)
    ru, re = ref_of(u), ref_of(e)
    check(out, ref_gspmm(src, dst, n, "mul", "sum", ru, re), [u, e], [ru, re])
    s = torch.randn(3, E).t()  # [E, 3] non-contiguous
    torch.testing.assert_close(topograph.ops.edge_softmax(g, s).double(), ref_edge_softmax(src, dst, s.double()), **TOL)


def test_ops_on_one_relation_of_a_heterograph():
    hg = topograph.heterograph({
        ("user", "plays", "game"): (torch.tensor([0, 1, 1, 3]), torch.tensor([0, 0, 2, 2])),
        ("user", "follows", "user"): (torch.tensor([0, 1, 2]), torch.tensor([1, 2, 2])),
    }, num_nodes_dict={"user": 5, "game": 4})
    x = torch.randn(5, 2, requires_grad=True)
    plays = hg["plays"]
    out = topograph.ops.copy_u_sum(plays, x)
    assert out.shape == (4, 2)  # one row per game, game 1 and 3 without players
    src, dst = torch.tensor([0, 1, 1, 3]), torch.tensor([0, 0, 2, 2])
    rx = ref_of(x)
    check(out, ref_gspmm(src, dst, 4, "copy_lhs", "sum", rx, None), [x], [rx])
    same = topograph.edge_type_subgraph(hg, [("user", "plays", "game")])
    torch.testing.assert_close(topograph.ops.copy_u_sum(same, x.detach()), out.detach())
    # the reverse relation sends games' features back to the users
    back = topograph.ops.copy_u_sum(plays.reverse(), torch.ones(4, 1))
    assert back.squeeze(-1).tolist() == [1.0, 2.0, 0.0, 1.0, 0.0]
    with pytest.raises(ValueError, match="relations"):
        topograph.ops.copy_u_sum(hg, x)  # two relations: the op needs one


def test_ops_on_a_batch_equal_the_ops_per_graph():
    g1, s1, d1, n1 = build("multi_loop_isolated", torch.int64)
    g2, s2, d2, n2 = build("random", torch.int64)
    bg = topograph.batch([g1, g2])
    x1, x2 = torch.randn(n1, 3), torch.randn(n2, 3)
    out = topograph.ops.copy_u_mean(bg, torch.cat([x1, x2]))
    torch.testing.assert_close(out, torch.cat([topograph.ops.copy_u_mean(g1, x1), topograph.ops.copy_u_mean(g2, x2)]))
    logits = torch.randn(bg.num_edges(), 2)
    sm = topograph.ops.edge_softmax(bg, logits)
    e1 = g1.num_edges()
    torch.testing.assert_close(sm[:e1], topograph.ops.edge_softmax(g1, logits[:e1]))
    torch.testing.assert_close(sm[e1:], topograph.ops.edge_softmax(g2, logits[e1:]))


def test_without_grad_mode_no_tape_is_recorded():
    g, src, dst, n = build("random", torch.int32)
    x = torch.randn(n, 3, requires_grad=True)
    with torch.no_grad():
        out = topograph.ops.copy_u_sum(g, x)
    assert out.grad_fn is None and not out.requires_grad
    out2 = topograph.ops.copy_u_sum(g, x)
    assert out2.grad_fn is not None
