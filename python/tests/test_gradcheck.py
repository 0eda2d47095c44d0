"""Finite differences: Topograph's kernels are float32 only (no double), so torch.autograd.gradcheck runs on
float32 with eps = 1e-2 and tolerance atol = rtol = 2e-2 (central differences of float32 sums of O(1) values:
truncation ~eps^2, rounding ~1e-7 / eps). The float64 references in test_ops.py check the gradients tightly;
this is the independent check that needs no reference."""
import pytest
import torch

import topograph
from conftest import build

pytestmark = pytest.mark.filterwarnings("ignore:Input #[0-9] requires gradient and is not a double")

FD = dict(eps=1e-2, atol=2e-2, rtol=2e-2, nondet_tol=0.0)


def inputs(*shapes, positive=False):
    gen = torch.Generator().manual_seed(7)
    xs = [torch.randn(s, generator=gen) for s in shapes]
    if positive:
        xs[-1] = xs[-1].abs() + 1.0
    return [x.requires_grad_() for x in xs]


@pytest.mark.parametrize("op,reduce", [("mul", "sum"), ("div", "mean"), ("add", "max"), ("sub", "min"),
                                       ("copy_lhs", "max"), ("copy_rhs", "sum")])
def test_gspmm_finite_differences(op, reduce):
    g, src, dst, n = build("multi_loop_isolated", torch.int64)
    u, e = inputs((n, 2, 3), (src.numel(), 2, 1), positive=op == "div")
    rows = g.in_degrees() > 0  # max / min give -inf / +inf on the others (dgl.ops): no finite differences there
    if op == "copy_lhs":
        fn, args = (lambda a: topograph.ops.gspmm(g, op, reduce, a, None)[rows]), (u,)
    elif op == "copy_rhs":
        fn, args = (lambda b: topograph.ops.gspmm(g, op, reduce, None, b)[rows]), (e,)
    else:
        fn, args = (lambda a, b: topograph.ops.gspmm(g, op, reduce, a, b)[rows]), (u, e)
    assert torch.autograd.gradcheck(fn, args, **FD)


@pytest.mark.parametrize("op,lt,rt", [("dot", "u", "v"), ("mul", "u", "e"), ("div", "e", "v"), ("sub", "v", "u"),
                                      ("add", "u", "u")])
def test_gsddmm_finite_differences(op, lt, rt):
    g, src, dst, n = build("multi_loop_isolated", torch.int64)
    rows = {"u": n, "v": n, "e": src.numel()}
    a, b = inputs((rows[lt], 2, 3), (rows[rt], 2, 3), positive=op == "div")
    assert torch.autograd.gradcheck(lambda x, y: topograph.ops.gsddmm(g, op, x, y, lt, rt), (a, b), **FD)


@pytest.mark.parametrize("norm_by", ["dst", "src"])
def test_edge_softmax_finite_differences(norm_by):
    g, src, dst, n = build("random", torch.int32)
    (x,) = inputs((src.numel(), 3))
    assert torch.autograd.gradcheck(lambda s: topograph.ops.edge_softmax(g, s, norm_by=norm_by), (x,), **FD)
