"""The pooling layers (SumPooling ... Set2Set) against plain PyTorch per graph of a batch, and GINConv, SGConv,
APPNPConv and EdgeWeightNorm against their equations written densely here (an adjacency matrix with
multi-edges counted, in float64), values and gradients, on graphs with self loops, multi-edges and nodes
without in-edges, and their errors. tests/test_against_dgl.py holds them to DGL 2.1 with the same weights."""
import pytest
import torch

import topograph
from topograph.nn import (APPNPConv, AvgPooling, EdgeWeightNorm, GINConv, GlobalAttentionPooling, MaxPooling,
                          Set2Set, SGConv, SortPooling, SumPooling, WeightAndSum)

torch.manual_seed(0)
N = 7
SRC = torch.tensor([0, 0, 1, 2, 3, 4, 5, 6, 6, 2, 0])
DST = torch.tensor([1, 1, 2, 3, 4, 5, 6, 0, 2, 2, 0])  # a multi-edge 0->1, self loops on 0 and 2; every node reached
FD = dict(eps=1e-2, atol=2e-2, rtol=2e-2, nondet_tol=0.0)  # float32 finite differences, as test_gradcheck.py
TOL = dict(rtol=1e-5, atol=1e-5)

pytestmark = pytest.mark.filterwarnings("ignore:Input #[0-9] requires gradient and is not a double")


def graph(src=SRC, dst=DST, n=N):
    return topograph.graph((src, dst), num_nodes=n)


def adjacency(src=SRC, dst=DST, n=N, weight=None):
    """a[d, s] = the (weighted) edges s -> d, float64."""
    w = torch.ones(len(src), dtype=torch.float64) if weight is None else weight.double()
    return torch.zeros(n, n, dtype=torch.float64).index_put((dst, src), w, accumulate=True)


# --- pooling
SIZES = [3, 0, 1, 5, 0, 2]  # graphs of the batch: empty ones between, a single node


def pooling_batch(width=4, dtype=torch.float64):
    paths = [(torch.arange(max(n - 1, 0)), torch.arange(1, max(n, 1))) for n in SIZES]  # 0 -> 1 -> ... -> n-1
    graphs = [topograph.graph(edges, num_nodes=n) for edges, n in zip(paths, SIZES)]
    feat = torch.randn(sum(SIZES), width, dtype=dtype)
    return topograph.batch(graphs), feat, list(torch.split(feat, SIZES))


@pytest.mark.parametrize("layer,reduce", [(SumPooling, lambda x: x.sum(0)), (AvgPooling, lambda x: x.mean(0)),
                                          (MaxPooling, lambda x: x.amax(0))], ids=["sum", "avg", "max"])
def test_sum_avg_max_pooling_per_graph(layer, reduce):
    bg, feat, parts = pooling_batch()
    want = torch.stack([reduce(x) if x.shape[0] else torch.zeros(4, dtype=torch.float64) for x in parts])
    torch.testing.assert_close(layer()(bg, feat), want)
    torch.testing.assert_close(layer()(graph(), feat[:N]), reduce(feat[:N])[None])  # one graph: [1, D]
    assert torch.autograd.gradcheck(lambda f: layer()(bg, f), (feat.clone().requires_grad_(),))


def test_sort_pooling_per_graph():
    bg, feat, parts = pooling_batch()
    k = 3
    want = []
    for x in parts:
        x = x.sort(dim=-1).values
        top = x[x[:, -1].argsort(descending=True)][:k]
        want.append(torch.cat([top, torch.zeros(k - top.shape[0], 4, dtype=x.dtype)]).flatten())
    out = SortPooling(k)(bg, feat)
    assert out.shape == (len(SIZES), k * 4)
    torch.testing.assert_close(out, torch.stack(want))
    assert torch.autograd.gradcheck(lambda f: SortPooling(k)(bg, f), (feat.clone().requires_grad_(),))


def test_global_attention_pooling_per_graph():
    bg, feat, parts = pooling_batch()
    gate_nn = torch.nn.Linear(4, 1).double()
    feat_nn = torch.nn.Linear(4, 6).double()
    layer = GlobalAttentionPooling(gate_nn, feat_nn)
    out, gate = layer(bg, feat, get_attention=True)
    want = torch.stack([(torch.softmax(gate_nn(x), 0) * feat_nn(x)).sum(0) for x in parts])
    torch.testing.assert_close(out, want)
    torch.testing.assert_close(gate, torch.cat([torch.softmax(gate_nn(x), 0) for x in parts]))
    plain = GlobalAttentionPooling(gate_nn)  # no feat_nn: the features themselves
    torch.testing.assert_close(plain(bg, feat), torch.stack([(torch.softmax(gate_nn(x), 0) * x).sum(0)
                                                             for x in parts]))
    assert torch.autograd.gradcheck(lambda f: layer(bg, f), (feat.clone().requires_grad_(),))
    with pytest.raises(ValueError, match="gate_nn must give one score per node"):
        GlobalAttentionPooling(torch.nn.Linear(4, 2).double())(bg, feat)


def test_weight_and_sum_per_graph():
    bg, feat, parts = pooling_batch()
    layer = WeightAndSum(4).double()
    assert [n for n, _ in layer.named_parameters()] == ["atom_weighting.0.weight", "atom_weighting.0.bias"]
    weigh = layer.atom_weighting
    torch.testing.assert_close(layer(bg, feat), torch.stack([(torch.sigmoid(weigh[0](x)) * x).sum(0) for x in parts]))
    assert torch.autograd.gradcheck(lambda f: layer(bg, f), (feat.clone().requires_grad_(),))


def test_set2set_per_graph():
    bg, feat, parts = pooling_batch()
    layer = Set2Set(4, n_iters=3, n_layers=2).double()
    assert [n for n, _ in layer.named_parameters()][:2] == ["lstm.weight_ih_l0", "lstm.weight_hh_l0"]

    def one_graph(x):  # the equations for one graph, with the layer's LSTM on a batch of one
        state = (torch.zeros(2, 1, 4, dtype=x.dtype), torch.zeros(2, 1, 4, dtype=x.dtype))
        q_star = torch.zeros(1, 8, dtype=x.dtype)
        for _ in range(3):
            q, state = layer.lstm(q_star.unsqueeze(0), state)
            q = q.view(1, 4)
            alpha = torch.softmax((x * q).sum(-1, keepdim=True), 0)
            q_star = torch.cat([q, (alpha * x).sum(0, keepdim=True)], -1)
        return q_star[0]

    out = layer(bg, feat)
    assert out.shape == (len(SIZES), 8)
    torch.testing.assert_close(out, torch.stack([one_graph(x) for x in parts]))
    assert torch.autograd.gradcheck(lambda f: layer(bg, f), (feat.clone().requires_grad_(),))
    with pytest.raises(ValueError, match="feat must be \\[N, 4\\]"):
        layer(bg, feat[:, :3])


def test_pooling_errors():
    bg, feat, _ = pooling_batch()
    for layer in (SumPooling(), AvgPooling(), MaxPooling(), SortPooling(2)):
        with pytest.raises(ValueError, match=f"feat has {feat.shape[0] - 1} rows, the graph has {feat.shape[0]} nodes"):
            layer(bg, feat[1:])
    hg = topograph.heterograph({("a", "r", "b"): ([0], [1])})
    with pytest.raises(ValueError, match="node types"):
        SumPooling()(hg, torch.ones(3, 2))


# --- convolutions
@pytest.mark.parametrize("aggregator", ["sum", "mean", "max"])
@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "edge_weight"])
def test_gin_conv_is_its_equation(aggregator, weighted):
    src, dst = SRC[SRC != 3], DST[SRC != 3]  # node 4 loses its only in-edge: its neighbourhood is empty
    g = graph(src, dst)
    apply_func = torch.nn.Linear(5, 3)
    layer = GINConv(apply_func, aggregator, init_eps=0.25, learn_eps=True, activation=torch.relu)
    x = torch.randn(N, 5, requires_grad=True)
    ew = (torch.rand(len(src)) + 0.5).requires_grad_() if weighted else None
    out = layer(g, x, edge_weight=ew)

    x64 = x.detach().double().requires_grad_()
    ew64 = ew.detach().double().requires_grad_() if weighted else None
    eps64 = layer.eps.detach().double().requires_grad_()
    msg = x64[src] * (ew64.view(-1, 1) if weighted else 1)  # [E, 5]
    if aggregator == "max":
        neigh = torch.stack([msg[dst == d].amax(0) if (dst == d).any() else torch.zeros(5, dtype=torch.float64)
                             for d in range(N)])
    else:
        neigh = torch.zeros(N, 5, dtype=torch.float64).index_add(0, dst, msg)
        if aggregator == "mean":
            neigh = neigh / torch.bincount(dst, minlength=N).clamp(min=1).view(-1, 1)
    want = torch.relu(torch.nn.functional.linear((1 + eps64) * x64 + neigh, apply_func.weight.double(),
                                                 apply_func.bias.double()))
    torch.testing.assert_close(out.double(), want, **TOL)
    assert bool((neigh[4] == 0).all())  # the empty neighbourhood really is in the test
    upstream = torch.randn(N, 3)
    grads = torch.autograd.grad((out * upstream).sum(), [x, layer.eps] + ([ew] if weighted else []))
    grads64 = torch.autograd.grad((want * upstream.double()).sum(), [x64, eps64] + ([ew64] if weighted else []))
    for a, b in zip(grads, grads64):
        torch.testing.assert_close(a.double(), b, **TOL)


def test_gin_conv_defaults_block_and_finite_differences():
    layer = GINConv()  # sum, eps 0 as a buffer, no apply_func: (1 + 0) x + sum of in-neighbours
    assert [n for n, _ in layer.named_buffers()] == ["eps"] and not list(layer.parameters())
    x = torch.randn(N, 4)
    want = x.double() + adjacency() @ x.double()
    torch.testing.assert_close(layer(graph(), x).double(), want, **TOL)
    seeds = torch.tensor([2, 0, 5])
    block = topograph.to_block(topograph.in_subgraph(graph(), seeds), seeds)
    torch.testing.assert_close(layer(block, x[block.srcdata[topograph.NID]]).double(), want[seeds], **TOL)
    torch.testing.assert_close(layer(graph(), (x, x)).double(), want, **TOL)  # a (source, destination) pair
    learn = GINConv(aggregator_type="mean", learn_eps=True)
    assert torch.autograd.gradcheck(lambda f: learn(graph(), f), (x.clone().requires_grad_(),), **FD)


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "edge_weight"])
def test_sg_conv_is_its_equation(k, weighted):
    layer = SGConv(5, 3, k=k)
    x = torch.randn(N, 5, requires_grad=True)
    ew = (torch.rand(len(SRC)) + 0.5).requires_grad_() if weighted else None
    out = layer(graph(), x, edge_weight=ew)
    x64 = x.detach().double().requires_grad_()
    h = x64
    if weighted:
        ew64 = ew.detach().double().requires_grad_()
        out_sum = torch.zeros(N, dtype=torch.float64).index_add(0, SRC, ew64)
        in_sum = torch.zeros(N, dtype=torch.float64).index_add(0, DST, ew64)
        a = adjacency(weight=ew64 / (out_sum[SRC] * in_sum[DST]).sqrt())
        for _ in range(k):
            h = a @ h
    else:
        norm = adjacency().sum(1).clamp(min=1).pow(-0.5).view(-1, 1)  # in-degrees on both sides, as DGL
        for _ in range(k):
            h = norm * (adjacency() @ (norm * h))
    want = torch.nn.functional.linear(h, layer.fc.weight.double(), layer.fc.bias.double())
    torch.testing.assert_close(out.double(), want, **TOL)
    upstream = torch.randn(N, 3)
    leaves, leaves64 = ([x, ew], [x64, ew64]) if weighted else ([x], [x64])
    for a, b in zip(torch.autograd.grad((out * upstream).sum(), leaves),
                    torch.autograd.grad((want * upstream.double()).sum(), leaves64)):
        torch.testing.assert_close(a.double(), b, **TOL)


def test_sg_conv_cache_norm_and_errors():
    layer = SGConv(4, 2, k=2, cached=True, norm=torch.nn.LayerNorm(4))
    x = torch.randn(N, 4)
    first = layer(graph(), x)
    torch.testing.assert_close(layer(graph(), torch.zeros(N, 4)), first)  # the propagated features were kept
    assert bool((layer.fc.bias == 0).all())  # DGL's initialisation: zero bias
    no_in = graph(torch.tensor([0, 1]), torch.tensor([1, 2]), 4)  # nodes 0 and 3 without in-edges
    with pytest.raises(ValueError, match="no in-edge"):
        SGConv(4, 2)(no_in, torch.randn(4, 4))
    lenient = SGConv(4, 2, allow_zero_in_degree=True)
    lenient(no_in, torch.randn(4, 4))
    strict = SGConv(4, 2)
    strict.set_allow_zero_in_degree(True)
    strict(no_in, torch.randn(4, 4))
    with pytest.raises(ValueError, match="edge_weight must have one row per edge"):
        SGConv(4, 2)(graph(), x, edge_weight=torch.ones(3))
    block = topograph.to_block(graph(), torch.arange(N))
    with pytest.raises(ValueError, match="not a block"):
        SGConv(4, 2, allow_zero_in_degree=True)(block, x)


@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "edge_weight"])
@pytest.mark.parametrize("row_shape", [(4,), (2, 3)], ids=str)
def test_appnp_conv_is_its_equation(weighted, row_shape):
    src, dst = SRC[SRC != 3], DST[SRC != 3]  # node 4 without in-edges, node 3 without out-edges
    g = graph(src, dst)
    layer = APPNPConv(k=3, alpha=0.2)
    x = torch.randn((N,) + row_shape, requires_grad=True)
    ew = (torch.rand(len(src)) + 0.5).requires_grad_() if weighted else None
    out = layer(g, x, edge_weight=ew)
    x64 = x.detach().double().requires_grad_()
    flat = x64.reshape(N, -1)
    if weighted:
        ew64 = ew.detach().double().requires_grad_()
        out_sum = torch.zeros(N, dtype=torch.float64).index_add(0, src, ew64)
        in_sum = torch.zeros(N, dtype=torch.float64).index_add(0, dst, ew64)
        prop = adjacency(src, dst, weight=ew64 / (out_sum[src] * in_sum[dst]).sqrt())
    else:
        a = adjacency(src, dst)
        prop = a.sum(1).clamp(min=1).pow(-0.5).view(-1, 1) * a * a.sum(0).clamp(min=1).pow(-0.5).view(1, -1)
    h = flat
    for _ in range(3):
        h = 0.8 * (prop @ h) + 0.2 * flat
    want = h.reshape((N,) + row_shape)
    torch.testing.assert_close(out.double(), want, **TOL)
    upstream = torch.randn(out.shape)
    leaves, leaves64 = ([x, ew], [x64, ew64]) if weighted else ([x], [x64])
    for a, b in zip(torch.autograd.grad((out * upstream).sum(), leaves),
                    torch.autograd.grad((want * upstream.double()).sum(), leaves64)):
        torch.testing.assert_close(a.double(), b, **TOL)


def test_appnp_edge_drop_follows_torch_seed_and_training():
    layer = APPNPConv(k=2, alpha=0.1, edge_drop=0.5)
    x = torch.randn(N, 3)
    layer.eval()
    expect = APPNPConv(k=2, alpha=0.1)(graph(), x)
    torch.testing.assert_close(layer(graph(), x), expect)  # eval: every edge kept
    layer.train()
    torch.manual_seed(3)
    a = layer(graph(), x)
    torch.manual_seed(3)
    torch.testing.assert_close(layer(graph(), x), a)
    assert not torch.allclose(a, expect)


def test_edge_weight_norm():
    block_seeds = torch.tensor([1, 2])
    w = torch.rand(len(SRC), dtype=torch.float64) + 0.1
    out_sum = torch.zeros(N, dtype=torch.float64).index_add(0, SRC, w)
    in_sum = torch.zeros(N, dtype=torch.float64).index_add(0, DST, w)
    torch.testing.assert_close(EdgeWeightNorm()(graph(), w), w / (out_sum[SRC] * in_sum[DST]).sqrt())
    torch.testing.assert_close(EdgeWeightNorm("right", eps=0.5)(graph(), w), w / (in_sum[DST] + 0.5))
    assert torch.equal(EdgeWeightNorm("none")(graph(), w), w)
    assert torch.autograd.gradcheck(lambda v: EdgeWeightNorm()(graph(), v), (w.clone().requires_grad_(),))
    # a block counts its sources' out-edges among the block's edges only
    block = topograph.to_block(topograph.in_subgraph(graph(), block_seeds), block_seeds)
    bw = w[block.edata[topograph.EID].long()]
    bu, bv = (t.long() for t in block.all_edges())
    b_out = torch.zeros(block.num_src_nodes(), dtype=torch.float64).index_add(0, bu, bw)
    b_in = torch.zeros(block.num_dst_nodes(), dtype=torch.float64).index_add(0, bv, bw)
    torch.testing.assert_close(EdgeWeightNorm()(block, bw), bw / (b_out[bu] * b_in[bv]).sqrt())
    with pytest.raises(ValueError, match="every edge weight must be > 0"):
        EdgeWeightNorm()(graph(), w - 1.0)
    with pytest.raises(ValueError, match="one scalar per edge"):
        EdgeWeightNorm()(graph(), w.view(-1, 1))
    with pytest.raises(ValueError, match="norm must be"):
        EdgeWeightNorm("left")


def test_conv_errors_name_the_problem():
    with pytest.raises(ValueError, match="aggregator_type must be"):
        GINConv(aggregator_type="lstm")
    with pytest.raises(ValueError, match="edge_weight must have one row per edge \\(11\\)"):
        GINConv()(graph(), torch.randn(N, 2), edge_weight=torch.ones(10))
    with pytest.raises(ValueError, match="not a block"):
        APPNPConv(1, 0.1)(topograph.to_block(graph(), torch.arange(N)), torch.randn(N, 2))
