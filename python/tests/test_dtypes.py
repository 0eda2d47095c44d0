"""float64, float16 and bfloat16 features, as DGL takes them: every built-in message and reducer, edge_softmax,
the ops with operands of mixed dtypes, the sparse products and GraphConv / GATConv / SAGEConv. The result has the
input's dtype (torch's promotion of the operands' dtypes), values match a float32 computation of the same inputs
(the kernels are float32; float64 is computed in float64, test_float64.py checks it to float64 precision),
gradients come back in each input's dtype and match torch's autograd of a float64 dense reference within the
dtype's tolerance. Integer features stay a TypeError naming the feature."""
import pytest
import torch

import topograph
import topograph.function as fn
from conftest import build, ref_edge_softmax, ref_gsddmm, ref_gspmm

DTYPES = [torch.float64, torch.float16, torch.bfloat16]
IDS = ["float64", "float16", "bfloat16"]
# (rtol, atol) of a result in that dtype against the float64 reference and the float32 run: float32's for float64
TOL = {torch.float64: (1e-5, 1e-5), torch.float32: (1e-5, 1e-5), torch.float16: (4e-3, 4e-3),
       torch.bfloat16: (3e-2, 3e-2)}
MESSAGES = ["copy_u", "copy_e", "copy_v", "u_add_e", "u_sub_e", "u_mul_e", "u_div_e", "e_mul_u", "e_add_u",
            "u_add_v", "v_sub_u", "u_mul_v", "u_div_v", "e_sub_v", "v_div_e", "u_dot_v", "e_dot_u"]
REDUCERS = ["sum", "max", "min", "mean"]


def _parts(message):
    """(lhs target, op, rhs target or None) of a built-in's name."""
    if message.startswith("copy_"):
        return message[-1], "copy_lhs", None
    lhs, op, rhs = message.split("_")
    return lhs, op, rhs


def _inputs(g, dtype, seed=0):
    """Node features 'h' [N, 2, 3] and edge features 'w' [E, 2, 3] in dtype, away from 0 (they divide), with
    float64 copies of the same values for the references."""
    gen = torch.Generator().manual_seed(seed)
    sign = lambda n: torch.randint(0, 2, (n, 2, 3), generator=gen) * 2 - 1  # noqa: E731
    h = (torch.rand(g.num_nodes(), 2, 3, generator=gen) + 0.5) * sign(g.num_nodes())
    w = (torch.rand(g.num_edges(), 2, 3, generator=gen) + 0.5) * sign(g.num_edges())
    h, w = h.to(dtype), w.to(dtype)
    return h.requires_grad_(), w.requires_grad_()


def _messages(src, dst, message, h, w):
    lhs, op, rhs = _parts(message)
    operand = {"u": h, "v": h, "e": w}
    return ref_gsddmm(src, dst, op, operand[lhs], operand[rhs] if rhs else None, lhs, rhs or lhs)


def _extreme(src, dst, n, reducer, msg):
    """Per destination (and column), the first edge whose message is the max (min): [n, ...], E where none."""
    best = ref_gspmm(src, dst, n, "copy_rhs", reducer, None, msg.detach())
    E = msg.shape[0]
    hit = msg.detach() == best.index_select(0, dst)
    edge = torch.arange(E).view((-1,) + (1,) * (msg.dim() - 1)).expand(msg.shape)
    index = dst.view((-1,) + (1,) * (msg.dim() - 1)).expand(msg.shape)
    return torch.full(best.shape, E).scatter_reduce(0, index, torch.where(hit, edge, E), "amin"), hit, index


def _reference(src, dst, n, message, reducer, h, w):
    """DGL's update_all from the float64 references: the messages (gsddmm), reduced per destination, 0 for a
    destination without in-edges; max / min pass the gradient to the first message holding the extreme."""
    msg = _messages(src, dst, message, h, w)
    if reducer in ("sum", "mean"):
        return ref_gspmm(src, dst, n, "copy_rhs", reducer, None, msg)
    first, *_ = _extreme(src, dst, n, reducer, msg)
    padded = torch.cat([msg, msg.new_zeros((1,) + msg.shape[1:])])  # row E: 0, for a node without in-edges
    return padded.gather(0, first)


def _tied(src, dst, n, message, reducer, h, w) -> bool:
    """Whether a destination's max (min) is reached by two messages read from different rows (so the first one's
    gradient goes elsewhere than the other's; tied multi-edges between the same nodes read the same rows)."""
    lhs, _, rhs = _parts(message)
    reads = {lhs, rhs}
    key = (src * (n + 1) if "u" in reads else 0) + (dst if "v" in reads else 0)
    key = key * (src.numel() + 1) + (torch.arange(src.numel()) if "e" in reads else 0)
    msg = _messages(src, dst, message, h.double(), w.double())
    for rounded in (msg, msg.float(), msg.to(h.dtype)):  # a message the kernels see rounded may tie there
        _, hit, index = _extreme(src, dst, n, reducer, rounded)
        keys = torch.as_tensor(key).view((-1,) + (1,) * (msg.dim() - 1)).expand(msg.shape)
        shape = (n,) + tuple(msg.shape[1:])
        low = torch.full(shape, 2**62).scatter_reduce(0, index, torch.where(hit, keys, 2**62), "amin")
        high = torch.full(shape, -1).scatter_reduce(0, index, torch.where(hit, keys, -1), "amax")
        if bool(((high >= 0) & (low != high)).any()):
            return True
    return False


def _close(got, want, dtype, scale=1.0):
    rtol, atol = TOL[dtype]
    torch.testing.assert_close(got.double(), want.double(), rtol=rtol, atol=atol * scale)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("reducer", REDUCERS)
@pytest.mark.parametrize("message", MESSAGES)
def test_builtin_message_and_reducer(message, reducer, dtype):
    g, src, dst, n = build("multi_loop_isolated", torch.int64)
    lhs, op, rhs = _parts(message)
    for seed in range(50):  # max / min: no ties (DGL's gradient goes to one of them, torch's splits it)
        h, w = _inputs(g, dtype, seed)
        if reducer in ("sum", "mean") or not _tied(src, dst, n, message, reducer, h.detach(), w.detach()):
            break
    else:
        pytest.fail("no seed without ties")
    g.ndata["h"], g.edata["w"] = h, w
    fields = {"u": "h", "v": "h", "e": "w"}
    builtin = getattr(fn, message)(fields[lhs], "m") if rhs is None else \
        getattr(fn, message)(fields[lhs], fields[rhs], "m")
    g.update_all(builtin, getattr(fn, reducer)("m", "out"))
    out = g.ndata["out"]
    assert out.dtype == dtype  # DGL's: the features' dtype

    # the value: a float32 run of the same inputs (the kernels' precision; a message that reads the destination
    # is formed first, in dtype, as DGL forms it)
    scale = 4.0 if op in ("dot", "div") else 1.0  # sums of products / quotients up to ~3: a few ulps wider
    g32, *_ = build("multi_loop_isolated", torch.int64)
    g32.ndata["h"], g32.edata["w"] = h.detach().float(), w.detach().float()
    g32.update_all(builtin, getattr(fn, reducer)("m", "out"))
    _close(out, g32.ndata["out"], dtype, scale)

    # against float64 autograd of the dense reference on the same values
    h64, w64 = h.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    want = _reference(src, dst, n, message, reducer, h64, w64)
    _close(out, want, dtype, scale)

    cotangent = torch.randn(out.shape, generator=torch.Generator().manual_seed(1)).to(dtype)
    out.backward(cotangent)
    want.backward(cotangent.double())
    for mine, ref in ((h, h64), (w, w64)):
        if ref.grad is None:  # the message does not read it
            assert mine.grad is None or mine.grad.abs().sum() == 0
            continue
        assert mine.grad is not None and mine.grad.dtype == dtype
        _close(mine.grad, ref.grad, dtype, 8.0 if op in ("dot", "div") else 2.0)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("message", ["u_mul_v", "e_add_v", "u_dot_v", "copy_e"])
def test_apply_edges_builtin(message, dtype):
    g, src, dst, n = build("random", torch.int32)
    h, w = _inputs(g, dtype, seed=2)
    g.ndata["h"], g.edata["w"] = h, w
    lhs, op, rhs = _parts(message)
    fields = {"u": "h", "v": "h", "e": "w"}
    g.apply_edges(getattr(fn, message)(fields[lhs], "m") if rhs is None else
                  getattr(fn, message)(fields[lhs], fields[rhs], "m"))
    out = g.edata["m"]
    assert out.dtype == dtype
    h64, w64 = h.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    operand = {"u": h64, "v": h64, "e": w64}
    want = ref_gsddmm(src.long(), dst.long(), op, operand[lhs], operand[rhs] if rhs else None, lhs, rhs or lhs)
    _close(out, want, dtype, 4.0)
    if op == "copy_lhs" and lhs == "e":
        return  # copy_e is the feature itself
    cotangent = torch.randn(out.shape, generator=torch.Generator().manual_seed(1)).to(dtype)
    out.backward(cotangent)
    want.backward(cotangent.double())
    assert h.grad.dtype == dtype
    _close(h.grad, h64.grad, dtype, 8.0)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("norm_by", ["dst", "src"])
def test_edge_softmax(dtype, norm_by):
    g, src, dst, n = build("random", torch.int64)
    logits = torch.randn(g.num_edges(), 2, 1, generator=torch.Generator().manual_seed(4)).to(dtype)
    logits.requires_grad_()
    out = topograph.ops.edge_softmax(g, logits, norm_by=norm_by)
    assert out.dtype == dtype
    x64 = logits.detach().double().requires_grad_()
    want = ref_edge_softmax(src, dst, x64, norm_by)
    _close(out, want, dtype)
    cotangent = torch.randn(out.shape, generator=torch.Generator().manual_seed(5)).to(dtype)
    out.backward(cotangent)
    want.backward(cotangent.double())
    assert logits.grad.dtype == dtype
    _close(logits.grad, x64.grad, dtype, 2.0)
    # dgl.nn.functional's edge_softmax is the same op
    again = topograph.nn.functional.edge_softmax(g, logits.detach(), norm_by=norm_by)
    assert again.dtype == dtype and torch.equal(again, out.detach())


@pytest.mark.parametrize("node, edge, result", [
    (torch.float32, torch.float64, torch.float64),
    (torch.float64, torch.float32, torch.float64),
    (torch.bfloat16, torch.float32, torch.float32),
    (torch.float16, torch.bfloat16, torch.float32),
    (torch.float16, torch.float16, torch.float16),
])
def test_mixed_dtypes_promote_as_torch(node, edge, result):
    """Operands of different dtypes give torch.result_type's dtype (DGL raises there); each gradient comes back
    in its own operand's dtype."""
    g, src, dst, n = build("multi_loop_isolated", torch.int64)
    h, w = _inputs(g, torch.float32, seed=6)
    h, w = h.detach().to(node).requires_grad_(), w.detach().to(edge).requires_grad_()
    assert torch.result_type(h, w) == result
    for out, reference in ((topograph.ops.u_mul_e_sum(g, h, w), lambda a, b: ref_gspmm(src, dst, n, "mul", "sum", a, b)),
                           (topograph.ops.u_add_v(g, h, h.detach().to(edge)), None),
                           (topograph.ops.gsddmm(g, "mul", h, w, "u", "e"), None)):
        assert out.dtype == result
    out = topograph.ops.u_mul_e_sum(g, h, w)
    h64, w64 = h.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    want = ref_gspmm(src, dst, n, "mul", "sum", h64, w64)
    _close(out, want, result)
    out.backward(torch.ones_like(out))
    want.backward(torch.ones_like(want))
    assert h.grad.dtype == node and w.grad.dtype == edge
    _close(h.grad, h64.grad, node)
    _close(w.grad, w64.grad, edge)
    # through update_all too
    g.ndata["h"], g.edata["w"] = h.detach(), w.detach()
    g.update_all(fn.u_mul_e("h", "w", "m"), fn.sum("m", "out"))
    assert g.ndata["out"].dtype == result


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_sparse_products(dtype):
    import topograph.sparse as dglsp

    g, src, dst, n = build("random", torch.int64)
    val = (torch.rand(src.numel(), generator=torch.Generator().manual_seed(7)) + 0.5).to(dtype).requires_grad_()
    A = dglsp.spmatrix(torch.stack([dst, src]), val, shape=(n, n))
    X = torch.randn(n, 3, generator=torch.Generator().manual_seed(8)).to(dtype).requires_grad_()
    out = dglsp.spmm(A, X)
    assert out.dtype == dtype
    val64, X64 = val.detach().double().requires_grad_(), X.detach().double().requires_grad_()
    want = torch.zeros(n, 3, dtype=torch.float64).index_add(0, dst, val64.view(-1, 1) * X64[src])
    _close(out, want, dtype, 8.0)
    out.sum().backward()
    want.sum().backward()
    assert val.grad.dtype == dtype and X.grad.dtype == dtype
    _close(X.grad, X64.grad, dtype, 8.0)
    _close(val.grad, val64.grad, dtype, 8.0)
    assert dglsp.softmax(A).val.dtype == dtype
    assert dglsp.sddmm(A, X, X.detach().T.contiguous()).val.dtype == dtype


# --- nn layers: model.double() and CPU autocast to bfloat16
def _layers():
    torch.manual_seed(11)
    return {"GraphConv": topograph.nn.GraphConv(4, 3, norm="both"),
            "GATConv": topograph.nn.GATConv(4, 3, num_heads=2),
            "SAGEConv": topograph.nn.SAGEConv(4, 3, "mean"),
            "SAGEConv_pool": topograph.nn.SAGEConv(4, 3, "pool"),
            "GatedGraphConv": topograph.nn.GatedGraphConv(4, 4, 2, 2)}


def _run(name, layer, g, x):
    if name == "GatedGraphConv":  # typed: a linear per edge type
        return layer(g, x, torch.arange(g.num_edges()) % 2)
    return layer(g, x)


@pytest.mark.parametrize("name", ["GraphConv", "GATConv", "SAGEConv", "SAGEConv_pool", "GatedGraphConv"])
def test_layer_in_float64(name):
    g, *_ = build("multi_loop_isolated", torch.int64)
    g = topograph.add_self_loop(g)  # GraphConv / GATConv refuse nodes without in-edges
    layer32 = _layers()[name]
    layer64 = _layers()[name].double()
    layer64.load_state_dict({k: v.double() for k, v in layer32.state_dict().items()})
    x = torch.randn(g.num_nodes(), 4, generator=torch.Generator().manual_seed(12))
    x32, x64 = x.clone().requires_grad_(), x.double().requires_grad_()
    out32, out64 = _run(name, layer32, g, x32), _run(name, layer64, g, x64)
    assert out64.dtype == torch.float64
    torch.testing.assert_close(out64, out32.double(), rtol=1e-4, atol=1e-5)
    out32.square().sum().backward()
    out64.square().sum().backward()
    assert x64.grad.dtype == torch.float64
    torch.testing.assert_close(x64.grad, x32.grad.double(), rtol=1e-4, atol=1e-5)
    for (k, p32), p64 in zip(layer32.named_parameters(), layer64.parameters()):
        assert p64.grad is not None and p64.grad.dtype == torch.float64, k
        torch.testing.assert_close(p64.grad, p32.grad.double(), rtol=1e-4, atol=1e-5, msg=k)


@pytest.mark.parametrize("name", ["GraphConv", "GATConv", "SAGEConv", "SAGEConv_pool", "GatedGraphConv"])
def test_layer_under_cpu_autocast_bfloat16(name):
    """torch.autocast('cpu', torch.bfloat16): the layers' Linears give bfloat16 features, which the ops take
    (they raised TypeError), alone or with the layers' float32 norms and weights; the output is the float32
    layer's within bfloat16's precision and backward reaches every (float32) parameter."""
    g, *_ = build("multi_loop_isolated", torch.int64)
    g = topograph.add_self_loop(g)
    layer = _layers()[name]
    x = torch.randn(g.num_nodes(), 4, generator=torch.Generator().manual_seed(13))
    want = _run(name, layer, g, x)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = _run(name, layer, g, x)
    assert out.dtype in (torch.bfloat16, torch.float32)
    torch.testing.assert_close(out.float(), want, rtol=5e-2, atol=5e-2)
    out.float().square().sum().backward()
    for k, p in layer.named_parameters():
        assert p.grad is not None and p.grad.dtype == torch.float32 and bool(torch.isfinite(p.grad).all()), k


# --- integer features stay an error, naming the feature
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool])
def test_integer_features_are_type_errors(dtype):
    g, src, dst, n = build("multi_loop_isolated", torch.int64)
    g.ndata["h"], g.edata["w"] = torch.ones(n, 2, dtype=dtype), torch.ones(src.numel(), 2)
    with pytest.raises(TypeError, match=rf"source node feature 'h'.*{str(dtype)[6:]}"):
        g.update_all(fn.copy_u("h", "m"), fn.sum("m", "out"))
    g.ndata["h"], g.edata["w"] = torch.ones(n, 2), torch.ones(src.numel(), 2, dtype=dtype)
    with pytest.raises(TypeError, match=r"edge feature 'w'"):
        g.update_all(fn.u_mul_e("h", "w", "m"), fn.sum("m", "out"))
    with pytest.raises(TypeError, match=r"edge feature 'w'"):
        g.apply_edges(fn.e_add_v("w", "h", "m"))
    with pytest.raises(TypeError, match=rf"rhs_data.*float16, bfloat16, float32 or float64.*{str(dtype)[6:]}"):
        topograph.ops.u_mul_e_sum(g, torch.ones(n, 2), torch.ones(src.numel(), 2, dtype=dtype))
    with pytest.raises(TypeError, match="edge_softmax: logits"):
        topograph.ops.edge_softmax(g, torch.ones(src.numel(), 2, dtype=dtype))
