"""float64 computed in float64: the graph ops (gspmm, gsddmm, edge_softmax, sparse_attention, gat_attention) and what
DGL users build on them (update_all / apply_edges with dgl.function built-ins, nn.functional.edge_softmax, GraphConv,
GATConv) take float64 operands through _float64.py, plain torch over the COO; band_attention (and so
MultiScaleTransformer's band path) dense per sequence. Each test checks what float32
precision cannot pass: the value against a float64 reference to ~1e-10, torch.autograd.gradcheck with its default
(float64) tolerances, or gradgradcheck (double backward). The float64 value also matches the float32 kernels' within
float32 tolerance, and the kernels' semantics (broadcast shapes, max / min over NaN and ties, empty rows) hold."""
import pytest
import torch

import topograph
import topograph.function as fn
from conftest import build, ref_attention, ref_edge_softmax, ref_gsddmm, ref_gspmm

EXACT = dict(rtol=1e-10, atol=1e-12)  # float64 sums in another order; float32 is ~1e-7 off
F32 = dict(rtol=1e-5, atol=2e-5)  # the float32 kernels' result of the same values
SPMM_OPS = ["add", "sub", "mul", "div"]
REDUCERS = ["sum", "max", "min", "mean"]
SDDMM_OPS = ["add", "sub", "mul", "div", "dot"]
TARGETS = ["u", "v", "e"]
# (lhs, rhs) row shapes: equal, a per-head operand ([H, 1] against [H, D]), ranks apart ([D] against [H, 1] ->
# [H, D]), and 1-D features (the output squeezed back)
SHAPES = {"same": ((2, 3), (2, 3)), "heads": ((2, 3), (2, 1)), "rank": ((3,), (2, 1)), "1d": ((), ())}
# dot reduces the last dim, which must be equal: its broadcasts are over the other dims
DOT_SHAPES = {"same": ((2, 3), (2, 3)), "heads": ((2, 3), (1, 3)), "rank": ((3,), (2, 3)), "1d": ((), ())}


def bipartite():
    """One relation a -> b (4 sources, 3 destinations): a multi-edge 0 -> 0, destination 2 without in-edges."""
    src, dst = torch.tensor([0, 0, 3, 1, 2, 3]), torch.tensor([0, 0, 1, 1, 0, 1])
    g = topograph.heterograph({("a", "r", "b"): (src, dst)}, num_nodes_dict={"a": 4, "b": 3})
    return g, src, dst, 4, 3


def graph(name):
    """(g, src, dst, num_src, num_dst): 'loops' has a multi-edge, self loops, a node without in-edges and an
    isolated node (conftest's multi_loop_isolated)."""
    if name == "bipartite":
        return bipartite()
    g, src, dst, n = build("multi_loop_isolated", torch.int64)
    return g, src, dst, n, n


GRAPHS = ["loops", "bipartite"]


def feature(rows, shape, seed, positive=False):
    """float64 [rows, *shape] leaf, values away from 0 when positive (they divide)."""
    x = torch.randn((rows,) + tuple(shape), generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return (x.abs() + 0.5 if positive else x).requires_grad_()


def rows_of(target, num_src, num_dst, num_edges):
    return {"u": num_src, "v": num_dst, "e": num_edges}[target]


def with_edges(out, dst, num_dst):
    """out's rows of the destinations with in-edges (max / min give -inf / +inf to the others, as dgl.ops)."""
    return out[torch.bincount(dst, minlength=num_dst) > 0]


# --- gspmm
# a copy reads one operand: 'same' and '1d' cover its shapes
SPMM_CASES = [(op, shapes) for op in SPMM_OPS for shapes in SHAPES] + \
    [(op, shapes) for op in ("copy_lhs", "copy_rhs") for shapes in ("same", "1d")]


@pytest.mark.parametrize("reduce", REDUCERS)
@pytest.mark.parametrize("op,shapes", SPMM_CASES)
@pytest.mark.parametrize("name", GRAPHS)
def test_gspmm(name, op, shapes, reduce):
    g, src, dst, ns, nd = graph(name)
    ls, rs = SHAPES[shapes]
    u = feature(ns, ls, 1) if op != "copy_rhs" else None
    e = feature(src.numel(), rs, 2, positive=op == "div") if op != "copy_lhs" else None
    out = topograph.ops.gspmm(g, op, reduce, u, e)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, ref_gspmm(src, dst, nd, op, reduce, u, e), **EXACT)
    f32 = topograph.ops.gspmm(g, op, reduce, *(None if x is None else x.detach().float() for x in (u, e)))
    torch.testing.assert_close(out, f32.double(), **F32)

    inputs = tuple(x for x in (u, e) if x is not None)

    def f(*xs):
        it = iter(xs)
        a, b = (next(it) if x is not None else None for x in (u, e))
        return with_edges(topograph.ops.gspmm(g, op, reduce, a, b), dst, nd)

    assert torch.autograd.gradcheck(f, inputs)


@pytest.mark.parametrize("reduce", ["sum", "max", "mean"])
@pytest.mark.parametrize("op", ["mul", "div"])
def test_gspmm_double_backward(op, reduce):
    g, src, dst, ns, nd = graph("loops")
    u, e = feature(ns, (2, 3), 3), feature(src.numel(), (2, 1), 4, positive=True)
    assert torch.autograd.gradgradcheck(lambda a, b: with_edges(topograph.ops.gspmm(g, op, reduce, a, b), dst, nd),
                                        (u, e))


@pytest.mark.parametrize("reduce", ["max", "min"])
def test_gspmm_max_min_nan_ties_and_empty_rows_as_the_kernels(reduce):
    """A NaN message never wins; a destination whose messages are all NaN gets the identity (-inf / +inf) and no
    gradient; of tied messages the first edge gets the gradient; no in-edges: -inf / +inf (dgl.ops), 0 through
    gspmm_zero_empty (update_all). The float32 kernels' values and gradients, at float64 precision."""
    # edge i: src[i] -> dst[i]; dst 0 reads 3 and 2, dst 1 reads 1, NaN, 3 and 1 again (edges 0 and 5, tied),
    # dst 4 only NaN, dst 2, 3 and 5 nothing
    g = topograph.graph((torch.tensor([0, 1, 2, 2, 3, 0, 4]), torch.tensor([1, 1, 1, 0, 0, 1, 4])), num_nodes=6)
    u = torch.tensor([1.0, float("nan"), 3.0, 2.0, float("nan"), 0.1], dtype=torch.float64) + 1e-9  # not float32
    e = torch.tensor([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0], dtype=torch.float64)
    results = []
    for dtype in (torch.float64, torch.float32):
        a, b = (x.detach().to(dtype).requires_grad_() for x in (u, e))
        out = topograph.ops.gspmm(g, "mul", reduce, a, b)
        zero_empty = topograph.ops.gspmm_zero_empty(g, "mul", reduce, a, b)
        (out[:2] * torch.tensor([1.0, 2.0], dtype=dtype)).sum().backward()
        results.append((out, zero_empty, a.grad, b.grad))
    (out, zero_empty, du, de), (out32, zero_empty32, du32, de32) = results
    for mine, kernels in ((out, out32), (zero_empty, zero_empty32), (du, du32), (de, de32)):
        assert mine.dtype == torch.float64
        torch.testing.assert_close(mine, kernels.double(), equal_nan=True, **F32)
    identity = float("-inf") if reduce == "max" else float("inf")
    want = [3.0 + 1e-9, 3.0 + 1e-9] if reduce == "max" else [2.0 + 1e-9, 1.0 + 1e-9]
    assert out[:2].tolist() == want  # float64 precision: float32 drops the 1e-9
    assert out[4] == zero_empty[4] == identity  # every message NaN
    assert out[2] == identity and zero_empty[2] == 0  # no in-edges
    if reduce == "min":  # the tie on dst 1 (edges 0 and 5, weight 2): the first edge takes the gradient
        assert de[0] == 2 * (1.0 + 1e-9) and de[5] == 0


# --- gsddmm
@pytest.mark.parametrize("shapes", list(SHAPES))
@pytest.mark.parametrize("rt", TARGETS)
@pytest.mark.parametrize("lt", TARGETS)
@pytest.mark.parametrize("op", SDDMM_OPS)
@pytest.mark.parametrize("name", GRAPHS)
def test_gsddmm(name, op, lt, rt, shapes):
    g, src, dst, ns, nd = graph(name)
    ls, rs = (DOT_SHAPES if op == "dot" else SHAPES)[shapes]
    lhs = feature(rows_of(lt, ns, nd, src.numel()), ls, 5)
    rhs = feature(rows_of(rt, ns, nd, src.numel()), rs, 6, positive=op == "div")
    out = topograph.ops.gsddmm(g, op, lhs, rhs, lt, rt)
    assert out.dtype == torch.float64
    if shapes == "1d":  # the reference on [rows, 1], squeezed back as gsddmm squeezes 1-D operands' result
        want = ref_gsddmm(src, dst, op, lhs.unsqueeze(-1), rhs.unsqueeze(-1), lt, rt).squeeze(-1)
    else:
        want = ref_gsddmm(src, dst, op, lhs, rhs, lt, rt)
    torch.testing.assert_close(out, want, **EXACT)
    f32 = topograph.ops.gsddmm(g, op, lhs.detach().float(), rhs.detach().float(), lt, rt)
    torch.testing.assert_close(out, f32.double(), **F32)
    assert torch.autograd.gradcheck(lambda a, b: topograph.ops.gsddmm(g, op, a, b, lt, rt), (lhs, rhs))


@pytest.mark.parametrize("op,target", [("copy_lhs", "u"), ("copy_lhs", "v"), ("copy_rhs", "e"), ("copy_rhs", "u")])
def test_gsddmm_copy(op, target):
    g, src, dst, ns, nd = graph("bipartite")
    x = feature(rows_of(target, ns, nd, src.numel()), (2, 3), 7)
    lhs, rhs = (x, None) if op == "copy_lhs" else (None, x)
    out = topograph.ops.gsddmm(g, op, lhs, rhs, target, target)
    torch.testing.assert_close(out, ref_gsddmm(src, dst, op, lhs, rhs, target, target), **EXACT)
    assert torch.autograd.gradgradcheck(lambda a: topograph.ops.gsddmm(g, op, *((a, None) if lhs is not None else
                                                                                (None, a)), target, target), (x,))


@pytest.mark.parametrize("op", ["dot", "div"])
def test_gsddmm_double_backward(op):
    g, src, dst, ns, nd = graph("loops")
    a, b = feature(ns, (2, 3), 8), feature(src.numel(), (2, 3), 9, positive=True)
    assert torch.autograd.gradgradcheck(lambda x, y: topograph.ops.gsddmm(g, op, x, y, "v", "e"), (a, b))


# --- edge_softmax
@pytest.mark.parametrize("shape", [(), (3,), (2, 1)])
@pytest.mark.parametrize("norm_by", ["dst", "src"])
@pytest.mark.parametrize("name", GRAPHS)
def test_edge_softmax(name, norm_by, shape):
    g, src, dst, ns, nd = graph(name)
    x = feature(src.numel(), shape, 10)
    out = topograph.ops.edge_softmax(g, x, norm_by=norm_by)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, ref_edge_softmax(src, dst, x, norm_by), **EXACT)
    torch.testing.assert_close(out, topograph.ops.edge_softmax(g, x.detach().float(), norm_by=norm_by).double(),
                               **F32)
    assert torch.autograd.gradcheck(lambda s: topograph.ops.edge_softmax(g, s, norm_by=norm_by), (x,))
    assert torch.autograd.gradgradcheck(lambda s: topograph.ops.edge_softmax(g, s, norm_by=norm_by), (x,))


def test_edge_softmax_of_some_edges_and_nn_functional():
    g, src, dst, ns, nd = graph("loops")
    eids = torch.tensor([0, 2, 3, 5, 7, 8])
    x = feature(eids.numel(), (2,), 11)
    out = topograph.nn.functional.edge_softmax(g, x, eids)
    torch.testing.assert_close(out, ref_edge_softmax(src[eids], dst[eids], x), **EXACT)
    assert torch.autograd.gradcheck(lambda s: topograph.nn.functional.edge_softmax(g, s, eids), (x,))


# --- the fused ops, composed in float64
@pytest.mark.parametrize("name", GRAPHS)
def test_sparse_attention(name):
    g, src, dst, ns, nd = graph(name)
    q, k, v = feature(nd, (2, 3), 12), feature(ns, (2, 3), 13), feature(ns, (2, 4), 14)
    out = topograph.ops.sparse_attention(g, q, k, v, scale=0.7)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, ref_attention(src, dst, nd, q, k, v, 0.7), **EXACT)
    f32 = topograph.ops.sparse_attention(g, q.detach().float(), k.detach().float(), v.detach().float(), scale=0.7)
    torch.testing.assert_close(out, f32.double(), **F32)
    assert torch.autograd.gradcheck(lambda a, b, c: topograph.ops.sparse_attention(g, a, b, c, 0.7), (q, k, v))


def test_sparse_attention_across_two_relations():
    """One softmax over both relations into tok, the sources stacked by type (sent, then tok): as the kernel."""
    ring_src, ring_dst = torch.tensor([1, 2, 3, 4, 0, 0]), torch.tensor([0, 1, 2, 3, 4, 4])
    sent_src, sent_dst = torch.tensor([0, 0, 1, 1]), torch.tensor([0, 1, 2, 4])
    hg = topograph.heterograph({("tok", "ring", "tok"): (ring_src, ring_dst),
                                ("sent", "to_tok", "tok"): (sent_src, sent_dst)})
    q, kt, ks = feature(5, (2, 3), 15), feature(5, (2, 3), 16), feature(2, (2, 3), 17)
    vt, vs = feature(5, (2, 2), 18), feature(2, (2, 2), 19)

    def f(q, kt, ks, vt, vs):
        return topograph.ops.sparse_attention(hg, q, {"tok": kt, "sent": ks}, {"tok": vt, "sent": vs})

    out = f(q, kt, ks, vt, vs)
    ref = ref_attention(torch.cat([sent_src, ring_src + 2]), torch.cat([sent_dst, ring_dst]), 5, q,
                        torch.cat([ks, kt]), torch.cat([vs, vt]), 3 ** -0.5)
    torch.testing.assert_close(out, ref, **EXACT)
    torch.testing.assert_close(out, f(*(x.detach().float() for x in (q, kt, ks, vt, vs))).double(), **F32)
    assert torch.autograd.gradcheck(f, (q, kt, ks, vt, vs))


@pytest.mark.parametrize("score_shape", [(2, 1), (2,)])
def test_gat_attention(score_shape):
    g, src, dst, ns, nd = graph("bipartite")
    el, er, z = feature(ns, score_shape, 20), feature(nd, score_shape, 21), feature(ns, (2, 3), 22)

    def composed(el, er, z):  # leaky_relu(u_add_v) -> edge_softmax -> u_mul_e_sum, in the reference ops
        s = torch.nn.functional.leaky_relu(ref_gsddmm(src, dst, "add", el.reshape(ns, 2, 1), er.reshape(nd, 2, 1),
                                                      "u", "v"), 0.2)
        return ref_gspmm(src, dst, nd, "mul", "sum", z, ref_edge_softmax(src, dst, s))

    out = topograph.ops.gat_attention(g, el, er, z, 0.2)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, composed(el, er, z), **EXACT)
    torch.testing.assert_close(out, topograph.ops.gat_attention(g, el.detach().float(), er.detach().float(),
                                                                z.detach().float(), 0.2).double(), **F32)
    assert torch.autograd.gradcheck(lambda a, b, c: topograph.ops.gat_attention(g, a, b, c, 0.2), (el, er, z))


def test_mixed_dtypes_promote_to_float64():
    """float32 node features times float64 edge weights: computed in float64, each gradient in its input's dtype."""
    g, src, dst, ns, nd = graph("loops")
    u = feature(ns, (2, 3), 23).detach().float().requires_grad_()
    e = feature(src.numel(), (2, 1), 24)
    out = topograph.ops.u_mul_e_sum(g, u, e)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, ref_gspmm(src, dst, nd, "mul", "sum", u.double(), e), **EXACT)
    out.sum().backward()
    assert u.grad.dtype == torch.float32 and e.grad.dtype == torch.float64


# --- DGL-level: update_all / apply_edges with built-ins, and the layers
@pytest.mark.parametrize("message,reducer", [("copy_u", "sum"), ("u_mul_e", "max"), ("e_sub_v", "min"),
                                             ("u_dot_v", "mean"), ("e_div_u", "sum"), ("copy_e", "max")])
def test_update_all_builtins(message, reducer):
    g, src, dst, ns, nd = graph("loops")
    h, w = feature(ns, (2, 3), 25, positive=True), feature(src.numel(), (2, 3), 26, positive=True)
    parts = message.split("_")
    fields = {"u": "h", "v": "h", "e": "w"}
    msg = getattr(fn, message)(fields[parts[-1]], "m") if parts[0] == "copy" else \
        getattr(fn, message)(fields[parts[0]], fields[parts[2]], "m")

    def f(h, w):
        with g.local_scope():
            g.ndata["h"], g.edata["w"] = h, w
            g.update_all(msg, getattr(fn, reducer)("m", "out"))
            return g.ndata["out"]

    operand = {"u": h, "v": h, "e": w}
    m = ref_gsddmm(src, dst, "copy_lhs", operand[parts[-1]], None, parts[-1], parts[-1]) if parts[0] == "copy" \
        else ref_gsddmm(src, dst, parts[1], operand[parts[0]], operand[parts[2]], parts[0], parts[2])
    want = ref_gspmm(src, dst, nd, "copy_rhs", reducer, None, m)
    want = want.masked_fill(~want.isfinite(), 0.0)  # update_all: 0 for a node without in-edges, under max too
    out = f(h, w)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, want, **EXACT)
    assert torch.autograd.gradcheck(f, (h, w))


@pytest.mark.parametrize("message", ["u_add_v", "e_mul_u", "v_dot_u", "copy_u"])
def test_apply_edges_builtins(message):
    g, src, dst, ns, nd = graph("bipartite")
    h_src, h_dst, w = feature(ns, (3,), 27), feature(nd, (3,), 28), feature(src.numel(), (3,), 29)
    parts = message.split("_")
    fields = {"u": "h", "v": "h", "e": "w"}
    msg = getattr(fn, message)("h", "m") if parts[0] == "copy" else \
        getattr(fn, message)(fields[parts[0]], fields[parts[2]], "m")

    def f(h_src, h_dst, w):
        with g.local_scope():
            g.srcdata["h"], g.dstdata["h"], g.edata["w"] = h_src, h_dst, w
            g.apply_edges(msg)
            return g.edata["m"]

    operand = {"u": h_src, "v": h_dst, "e": w}
    want = ref_gsddmm(src, dst, "copy_lhs", h_src, None, "u", "u") if parts[0] == "copy" else \
        ref_gsddmm(src, dst, parts[1], operand[parts[0]], operand[parts[2]], parts[0], parts[2])
    out = f(h_src, h_dst, w)
    torch.testing.assert_close(out, want, **EXACT)
    assert torch.autograd.gradcheck(f, (h_src, h_dst, w))


def tiny_graph():
    """5 nodes with self loops (the layers refuse nodes without in-edges), a multi-edge 0 -> 1."""
    src, dst = torch.tensor([0, 0, 1, 2, 3, 4, 2]), torch.tensor([1, 1, 2, 3, 4, 0, 0])
    return topograph.add_self_loop(topograph.graph((src, dst), num_nodes=5))


@pytest.mark.parametrize("norm", ["both", "right", "left", "none"])
def test_graph_conv(norm):
    g = tiny_graph()
    torch.manual_seed(0)
    conv = topograph.nn.GraphConv(3, 2, norm=norm, bias=True).double()
    with torch.no_grad():
        conv.bias.normal_()
    x = feature(5, (3,), 30)
    src, dst = (t.long() for t in g.edges())
    adj = torch.zeros(5, 5, dtype=torch.float64).index_put_((dst, src), torch.ones(src.numel(), dtype=torch.float64),
                                                            accumulate=True)  # [dst, src], multi-edges counted
    out_deg, in_deg = adj.sum(0), adj.sum(1)
    power = {"both": (-0.5, -0.5), "left": (-1.0, 0.0), "right": (0.0, -1.0), "none": (0.0, 0.0)}[norm]
    left, right = out_deg.pow(power[0]), in_deg.pow(power[1])  # the sources' and the destinations' factors
    want = right[:, None] * (adj @ (left[:, None] * x)) @ conv.weight + conv.bias
    out = conv(g, x)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, want, **EXACT)
    assert torch.autograd.gradcheck(lambda a, w: topograph.nn.GraphConv(3, 2, norm=norm, weight=False).double()(
        g, a, weight=w), (x, conv.weight.detach().clone().requires_grad_()))


@pytest.mark.parametrize("get_attention", [False, True])
def test_gat_conv(get_attention):
    """The fused path (gat_attention) and the composed one (get_attention: u_add_v, edge_softmax, u_mul_e_sum)."""
    g = tiny_graph()
    torch.manual_seed(0)
    conv = topograph.nn.GATConv(3, 2, num_heads=2).double().eval()
    x = feature(5, (3,), 31)

    def f(a):
        out = conv(g, a, get_attention=get_attention)
        return out[0] if get_attention else out

    z = conv.fc(x).view(5, 2, 2)
    src, dst = (t.long() for t in g.edges())
    el, er = (z * conv.attn_l).sum(-1, keepdim=True), (z * conv.attn_r).sum(-1, keepdim=True)
    scores = torch.nn.functional.leaky_relu(ref_gsddmm(src, dst, "add", el, er, "u", "v"), 0.2)
    want = ref_gspmm(src, dst, 5, "mul", "sum", z, ref_edge_softmax(src, dst, scores)) + conv.bias.view(1, 2, 2)
    out = f(x)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, want, **EXACT)
    assert torch.autograd.gradcheck(f, (x,))


# band_attention (packed sequences, no graph): (lengths, radius as given); a length-1 sequence, sequences shorter
# than their radius (full attention), radius 0 (each position itself only), and every form of the radius
BAND_CASES = {
    "full": ([1, 7, 12, 2], None),
    "zero": ([1, 7, 12, 2], 0),
    "one_int": ([1, 7, 12, 2], 2),
    "longer_than_sequences": ([3, 1, 2], 9),
    "per_sequence": ([1, 7, 12, 2], [0, 3, 1, 40]),
    "per_head": ([1, 7, 12, 2], torch.tensor([[0, 2, 20]])),
    "per_sequence_and_head": ([5, 1, 9], torch.tensor([[0, 1, 7], [3, 0, 0], [1, 4, 2]])),
}


def band_radii(radius, lengths, heads):
    """The [B, H] radii of test_band_attention's reference (None: full)."""
    if radius is None:
        return None
    r = torch.as_tensor(radius)
    return (r.view(-1, 1) if r.dim() == 1 else r.view(-1, heads) if r.dim() == 2 else r).expand(len(lengths), heads)


@pytest.mark.parametrize("case", list(BAND_CASES))
def test_band_attention_values(case):
    from test_band_attention import ref_band_attention
    lengths, radius = BAND_CASES[case]
    q, k, v = (feature(sum(lengths), (3, d), seed) for d, seed in ((4, 40), (4, 41), (5, 42)))
    out = topograph.ops.band_attention(q, k, v, lengths, radius, scale=0.7)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, ref_band_attention(q, k, v, lengths, band_radii(radius, lengths, 3), 0.7),
                               **EXACT)
    f32 = topograph.ops.band_attention(q.float(), k.float(), v.float(), lengths, radius, scale=0.7)
    torch.testing.assert_close(out, f32.double(), rtol=1e-5, atol=1e-5)


def test_band_attention_gradcheck_and_gradgradcheck():
    lengths, radius = [1, 3, 4], torch.tensor([[0, 1], [2, 0], [1, 5]])
    q, k, v = (feature(8, (2, d), seed) for d, seed in ((3, 43), (3, 44), (2, 45)))

    def f(a, b, c):
        return topograph.ops.band_attention(a, b, c, lengths, radius)

    assert torch.autograd.gradcheck(f, (q, k, v))
    assert torch.autograd.gradgradcheck(f, (q, k, v))


def test_multiscale_transformer_double():
    """The band path (band_attention) in float64 agrees with its float32 forward and, to 1e-10, with the graph path
    (sparse_attention over the window graphs) on the same parameters in float64."""
    torch.manual_seed(0)
    model = topograph.models.MultiScaleTransformer(16, 4, 2, scales="1,3,N/2", vocab_size=30).eval()
    graph_model = topograph.models.MultiScaleTransformer(16, 4, 2, scales="1,3,N/2", vocab_size=30, band=False).eval()
    graph_model.load_state_dict(model.state_dict())
    ids, lengths = torch.randint(0, 30, (13,)), [6, 1, 4, 2]
    f32 = model(ids, lengths)
    model.double()
    out = model(ids, lengths)
    want = graph_model.double()(ids, lengths)
    for a, b, c in zip(out, f32, want, strict=True):
        assert a.dtype == torch.float64
        torch.testing.assert_close(a, b.double(), **F32)
        torch.testing.assert_close(a, c, **EXACT)
