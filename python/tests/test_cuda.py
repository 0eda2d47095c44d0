"""CUDA tensors through the package: every op on a graph moved to the GPU against the same op on the CPU
(value and gradient), zero copy for CUDA tensors, and the encoders trained a step on the GPU. Runs where the
build has the CUDA backend and torch sees a GPU (scripts/gpu_check.sh runs it on a lent device); skipped
elsewhere, as the C++ suite's `gpu` label is."""
import copy

import pytest
import torch

import topograph
from conftest import GRAPHS, make_edges
from topograph import builders
from topograph.models import MultiScaleTransformer, StarTransformer

pytestmark = pytest.mark.skipif(not (topograph.built_with_cuda and torch.cuda.is_available()),
                                reason="needs a CUDA build of topograph and a GPU")

TOL = dict(rtol=1e-4, atol=1e-5)
CUDA = torch.device("cuda")


def both(name, idtype=torch.int64):
    src, dst, n = make_edges(name)
    g = topograph.graph((src.to(idtype), dst.to(idtype)), num_nodes=n)
    return g, g.to(CUDA)


def check(f, *shapes, positive_last=False):
    """f on CPU leaves and on their CUDA copies: outputs and input gradients agree."""
    base = [torch.randn(s) for s in shapes]
    if positive_last:
        base[-1] = base[-1].abs() + 0.5
    xc = [b.clone().requires_grad_() for b in base]
    xg = [b.to(CUDA).requires_grad_() for b in base]
    oc, og = f("cpu", *xc), f("cuda", *xg)
    assert og.device.type == "cuda"
    torch.testing.assert_close(og.cpu(), oc, **TOL)
    w = torch.randn(oc.shape)
    w = w.masked_fill(~torch.isfinite(oc), 0)  # max/min of an empty row: no gradient to compare
    (oc.nan_to_num(posinf=0, neginf=0) * w).sum().backward()
    (og.nan_to_num(posinf=0, neginf=0) * w.to(CUDA)).sum().backward()
    for a, b in zip(xg, xc):
        assert (a.grad is None) == (b.grad is None)  # an operand the op does not read gets none
        if b.grad is not None:
            torch.testing.assert_close(a.grad.cpu(), b.grad, **TOL)


def test_zero_copy_for_cuda_tensors():
    x = torch.randn(5, 3, device=CUDA)
    seen = topograph._C._roundtrip(x)
    assert seen.device == x.device and seen.data_ptr() == x.data_ptr()
    seen.add_(1)  # the same memory both ways
    assert torch.equal(seen, x)


@pytest.mark.parametrize("name", [n for n in GRAPHS if n != "no_edges"])
@pytest.mark.parametrize("idtype", [torch.int32, torch.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("reduce", ["sum", "max", "min", "mean"])
@pytest.mark.parametrize("op", ["copy_lhs", "copy_rhs", "mul", "add", "div"])
def test_gspmm_on_cuda_equals_cpu(name, idtype, op, reduce):
    gc, gg = both(name, idtype)
    graphs = {"cpu": gc, "cuda": gg}
    shapes = [(gc.num_nodes(), 2, 3), (gc.num_edges(), 2, 1)]
    check(lambda d, u, e: topograph.ops.gspmm(graphs[d], op, reduce, u if op != "copy_rhs" else None,
                                              e if op != "copy_lhs" else None), *shapes, positive_last=op == "div")


@pytest.mark.parametrize("op", ["add", "mul", "dot", "sub"])
@pytest.mark.parametrize("targets", [("u", "v"), ("u", "e"), ("v", "u"), ("e", "v")])
def test_gsddmm_and_edge_softmax_on_cuda_equal_cpu(op, targets):
    gc, gg = both("random")
    graphs = {"cpu": gc, "cuda": gg}
    rows = {"u": gc.num_nodes(), "v": gc.num_nodes(), "e": gc.num_edges()}
    check(lambda d, a, b: topograph.ops.gsddmm(graphs[d], op, a, b, *targets),
          (rows[targets[0]], 2, 4), (rows[targets[1]], 2, 4))
    check(lambda d, s: topograph.ops.edge_softmax(graphs[d], s), (gc.num_edges(), 3, 1))


def test_sparse_attention_over_a_star_block_and_band_attention_on_cuda():
    lens = [1, 4, 9]
    g = topograph.heterograph({("sat", "ring", "sat"): builders.ring(lens),
                               ("relay", "from_relay", "sat"): builders.from_one(lens)},
                              num_nodes_dict={"sat": sum(lens), "relay": len(lens)})
    graphs = {"cpu": g, "cuda": g.to(CUDA)}
    n, b = sum(lens), len(lens)
    check(lambda d, q, ks, kr, vs, vr: topograph.ops.sparse_attention(graphs[d], q, {"sat": ks, "relay": kr},
                                                                      {"sat": vs, "relay": vr}),
          (n, 2, 8), (n, 2, 8), (b, 2, 8), (n, 2, 8), (b, 2, 8))
    radius = torch.tensor([[0, 2], [1, 3], [4, 1]])
    check(lambda d, q, k, v: topograph.ops.band_attention(q, k, v, lens, radius), (n, 2, 8), (n, 2, 8), (n, 2, 6))


@pytest.mark.parametrize("model", [lambda: StarTransformer(16, 2, 2, vocab_size=30),
                                   lambda: MultiScaleTransformer(16, 2, 2, scales="1,N/2", vocab_size=30),
                                   lambda: MultiScaleTransformer(16, 2, 2, scales="1,N/2", vocab_size=30, band=False)],
                         ids=["star", "multiscale", "multiscale-graphs"])
def test_encoders_forward_backward_and_adam_step_on_cuda(model):
    torch.manual_seed(0)
    cpu = model()
    gpu = copy.deepcopy(cpu).to(CUDA)
    lengths = [3, 7, 1]
    tokens = torch.randint(0, 30, (sum(lengths),))
    outs = []
    for m, device in ((cpu, torch.device("cpu")), (gpu, CUDA)):
        h, s = m(tokens.to(device), lengths)
        (h.pow(2).mean() + s.mean()).backward()
        outs.append((h.detach().cpu(), s.detach().cpu()))
    torch.testing.assert_close(outs[1][0], outs[0][0], **TOL)
    torch.testing.assert_close(outs[1][1], outs[0][1], **TOL)
    before = outs[0][0]
    # Gradients within rounding of the model's gradient scale: some are zero in exact arithmetic (a key bias
    # under softmax) and come out as ~1e-10 noise on either device.
    scale = max(p.grad.abs().max().item() for p in cpu.parameters())
    for (name, pc), pg in zip(cpu.named_parameters(), gpu.parameters()):
        torch.testing.assert_close(pg.grad.cpu(), pc.grad, rtol=1e-3, atol=1e-5 * scale, msg=lambda m: f"{name}: {m}")
    # One Adam step from the same gradients (its first step is lr * g / (|g| + eps): the noise above would
    # become steps of up to lr), then a second forward: the encoders must read the updated CUDA parameters.
    for pc, pg in zip(cpu.parameters(), gpu.parameters()):
        pg.grad.copy_(pc.grad)
    outs = []
    for m, device in ((cpu, torch.device("cpu")), (gpu, CUDA)):
        torch.optim.Adam(m.parameters(), lr=1e-2).step()
        with torch.no_grad():
            h, s = m(tokens.to(device), lengths)
        outs.append((h.cpu(), s.cpu(), [p.detach().cpu() for p in m.parameters()]))
    for a, b in zip(outs[1][2], outs[0][2]):
        torch.testing.assert_close(a, b, **TOL)
    assert not torch.allclose(outs[0][0], before)  # the step moved the output
    torch.testing.assert_close(outs[1][0], outs[0][0], **TOL)
    torch.testing.assert_close(outs[1][1], outs[0][1], **TOL)


def test_message_passing_on_a_cuda_graph_and_device_mismatch_errors():
    import topograph.function as fn
    gc, gg = both("multi_loop_isolated")
    x = torch.randn(gc.num_nodes(), 4)
    gg.ndata["h"] = x.to(CUDA)
    gg.update_all(fn.copy_u("h", "m"), fn.mean("m", "o"))
    gc.ndata["h"] = x
    gc.update_all(fn.copy_u("h", "m"), fn.mean("m", "o"))
    torch.testing.assert_close(gg.ndata["o"].cpu(), gc.ndata["o"], **TOL)
    assert gc.to(CUDA).ndata["h"].device.type == "cuda"  # features move with the graph
    with pytest.raises(ValueError):
        topograph.ops.copy_u_sum(gc, x.to(CUDA))  # a CPU graph with a CUDA tensor


def test_sparse_matrix_products_on_cuda_equal_cpu():
    """topograph.sparse's kernel-backed products (bsddmm, softmax, bspmm, spmm) and the torch-side ones (spspmm,
    sums) on a CUDA matrix against the CPU one, values and gradients."""
    import topograph.sparse as sp

    src, dst, n = make_edges("multi_loop_isolated")
    indices = torch.stack([torch.as_tensor(dst), torch.as_tensor(src)])
    nnz = indices.shape[1]

    def mha(device, val, q, k, v):
        a = sp.spmatrix(indices.to(device), val, (n, n))
        return sp.bspmm(sp.bsddmm(a, q, k.transpose(1, 0)).softmax(), v)

    def gcn(device, val, x):
        a = sp.spmatrix(indices.to(device), val, (n, n))
        d = sp.diag(a.sum(1).abs() + 1) ** -0.5  # randn values: keep the root real
        return (d @ (a + sp.identity(a.shape, device=device)) @ d) @ x

    check(mha, (nnz, 2), (n, 3, 2), (n, 3, 2), (n, 3, 2))
    check(gcn, (nnz,), (n, 4))


@pytest.mark.parametrize("layer", ["DotGatConv", "AGNNConv", "EdgeGATConv", "GMMConv", "PNAConv", "HGTConv"])
def test_new_layers_on_cuda_equal_cpu(layer):
    """The layers added beside DGL's (nn/attention_conv.py, conv_extra.py, pna.py): the same module (weights
    copied) on a CUDA graph against the CPU one, output and input gradient."""
    g_cpu, g_cuda = both("multi_loop_isolated")
    g_cpu, g_cuda = topograph.add_self_loop(g_cpu), topograph.add_self_loop(g_cuda)
    n, e = g_cpu.num_nodes(), g_cpu.num_edges()
    torch.manual_seed(0)
    make = {"DotGatConv": lambda: topograph.nn.DotGatConv(4, 3, 2),
            "AGNNConv": lambda: topograph.nn.AGNNConv(),
            "EdgeGATConv": lambda: topograph.nn.EdgeGATConv(4, 2, 3, 2),
            "GMMConv": lambda: topograph.nn.GMMConv(4, 3, 2, 2),
            "PNAConv": lambda: topograph.nn.PNAConv(4, 4, ["mean", "max", "sum"], ["identity", "amplification"], 1.0),
            "HGTConv": lambda: topograph.nn.HGTConv(4, 2, 2, 2, 2, dropout=0.0)}[layer]
    module = make().eval()
    modules = {"cpu": module, "cuda": copy.deepcopy(module).to(CUDA)}
    graphs = {"cpu": g_cpu, "cuda": g_cuda}
    edge = torch.randn(e, 2)
    types = torch.arange(n) % 2, torch.arange(e) % 2

    def run(device, x):
        g, m = graphs[device], modules[device]
        if layer in ("EdgeGATConv", "GMMConv"):
            return m(g, x, edge.to(device))
        if layer == "HGTConv":
            return m(g, x, types[0].to(device), types[1].to(device))
        return m(g, x)

    check(run, (n, 4))
