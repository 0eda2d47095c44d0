"""TAGConv, ChebConv, EdgeConv, GatedGraphConv and NNConv (nn/conv_extra.py): DGL's parameter names (a DGL
state_dict loads), outputs against dense / per-edge torch references written here (so it runs without DGL),
and, where dgl imports (PYTHONPATH=bench/peers/.venv/lib/python3.11/site-packages), outputs and gradients
(inputs' and parameters') equal to dgl.nn's with DGL's own weights loaded."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

TOL = dict(rtol=1e-4, atol=1e-5)
SRC = [0, 0, 1, 2, 2, 3, 4, 4, 3, 1, 5]
DST = [1, 1, 2, 2, 0, 4, 4, 1, 1, 3, 0]
N = 6  # node 5 has no in-edge


def need_dgl():
    return pytest.importorskip("dgl")


def graph(lib=topograph, loops=False):
    src, dst = torch.tensor(SRC), torch.tensor(DST)
    if loops:
        src, dst = torch.cat([src, torch.arange(N)]), torch.cat([dst, torch.arange(N)])
    return lib.graph((src, dst), num_nodes=N)


def adjacency(g):
    """A[d, s]: the number of edges s -> d."""
    u, v = (x.long() for x in g.edges())
    return torch.zeros(g.num_nodes(), g.num_nodes()).index_put_((v, u), torch.tensor(1.0), accumulate=True)


def normalised(g):
    a = adjacency(g)
    norm = a.sum(1).clamp(min=1).pow(-0.5)
    return norm[:, None] * a * norm[None, :]


def test_parameter_names_are_dgls():
    nn = topograph.nn
    assert sorted(dict(nn.TAGConv(3, 4).named_parameters())) == ["lin.bias", "lin.weight"]
    assert sorted(nn.ChebConv(3, 4, 2).state_dict()) == ["linear.bias", "linear.weight"]
    assert sorted(nn.EdgeConv(3, 4, batch_norm=True).state_dict()) == [
        "bn.bias", "bn.num_batches_tracked", "bn.running_mean", "bn.running_var", "bn.weight", "phi.bias",
        "phi.weight", "theta.bias", "theta.weight"]
    assert sorted(nn.GatedGraphConv(3, 4, 2, 2).state_dict()) == [
        "gru.bias_hh", "gru.bias_ih", "gru.weight_hh", "gru.weight_ih", "linears.0.bias", "linears.0.weight",
        "linears.1.bias", "linears.1.weight"]
    assert sorted(nn.NNConv(3, 4, torch.nn.Linear(2, 12), residual=True).state_dict()) == [
        "bias", "edge_func.bias", "edge_func.weight", "res_fc.weight"]
    assert sorted(nn.NNConv(3, 3, torch.nn.Linear(2, 9), residual=True, bias=False).state_dict()) == [
        "edge_func.bias", "edge_func.weight"]


def test_tag_and_cheb_conv_by_dense_reference():
    torch.manual_seed(0)
    g, x = graph(loops=True), torch.randn(N, 3)
    a = normalised(g)
    tag = topograph.nn.TAGConv(3, 4, k=2)
    torch.testing.assert_close(tag(g, x), tag.lin(torch.cat([x, a @ x, a @ a @ x], -1)), **TOL)
    w = torch.rand(g.num_edges()) + 0.5
    wn = topograph.nn.EdgeWeightNorm("both")(g, w)
    u, v = (t.long() for t in g.edges())
    aw = torch.zeros(N, N).index_put_((v, u), wn, accumulate=True)
    torch.testing.assert_close(tag(g, x, edge_weight=w), tag.lin(torch.cat([x, aw @ x, aw @ aw @ x], -1)), **TOL)
    cheb = topograph.nn.ChebConv(3, 4, k=3)
    lam = 1.5
    re = 2.0 / lam
    lap = lambda y: -re * (a @ y) + y * (re - 1)  # noqa: E731 (2 L / lambda_max - I, L = I - A)
    x1 = lap(x)
    x2 = 2 * lap(x1) - x
    torch.testing.assert_close(cheb(g, x, lambda_max=[lam]), torch.relu(cheb.linear(torch.cat([x, x1, x2], 1))), **TOL)
    with pytest.warns(UserWarning, match="lambda_max"):
        cheb(g, x)
    bg = topograph.batch([g, g])  # one lambda_max per graph
    out = cheb(bg, torch.cat([x, x]), lambda_max=torch.tensor([lam, 2.0]))
    torch.testing.assert_close(out[:N], cheb(g, x, lambda_max=[lam]), **TOL)
    torch.testing.assert_close(out[N:], cheb(g, x, lambda_max=[2.0]), **TOL)


def test_edge_conv_by_reference():
    torch.manual_seed(1)
    g, x = graph(), torch.randn(N, 3)
    conv = topograph.nn.EdgeConv(3, 4, allow_zero_in_degree=True)
    out = conv(g, x)
    for d in range(N):
        srcs = [s for s, t in zip(SRC, DST) if t == d]
        want = torch.stack([conv.theta(x[d] - x[s]) + conv.phi(x[d]) for s in srcs]).max(0).values if srcs else \
            torch.zeros(4)
        torch.testing.assert_close(out[d], want, **TOL)
    with pytest.raises(topograph.DGLError, match="no in-edge"):
        topograph.nn.EdgeConv(3, 4)(g, x)


def test_gated_graph_conv_by_reference():
    torch.manual_seed(2)
    g, x = graph(), torch.randn(N, 3)
    types = torch.tensor([0, 1, 1, 0, 2, 2, 0, 1, 1, 2, 0])
    conv = topograph.nn.GatedGraphConv(3, 5, n_steps=2, n_etypes=3)
    h = torch.cat([x, torch.zeros(N, 2)], 1)
    for _ in range(2):
        a = torch.zeros(N, 5)
        for e, (s, d) in enumerate(zip(SRC, DST)):
            a[d] += conv.linears[int(types[e])](h[s])
        h = conv.gru(a, h)
    torch.testing.assert_close(conv(g, x, types), h, **TOL)
    one = topograph.nn.GatedGraphConv(3, 3, n_steps=1, n_etypes=1)
    torch.testing.assert_close(one(g, x), one.gru(adjacency(g) @ one.linears[0](x), x), **TOL)
    with pytest.raises(topograph.DGLError, match=r"out of range \[0, 3\)"):
        conv(g, x, torch.full((g.num_edges(),), 3))
    with pytest.raises(topograph.DGLError, match="etypes"):
        conv(g, x)
    with pytest.raises(topograph.DGLError, match="no less than"):
        topograph.nn.GatedGraphConv(4, 3, 1, 1)


@pytest.mark.parametrize("aggregator", ["sum", "mean", "max"])
def test_nn_conv_by_reference(aggregator):
    torch.manual_seed(3)
    g, x, e = graph(), torch.randn(N, 3), torch.randn(len(SRC), 2)
    conv = topograph.nn.NNConv(3, 4, torch.nn.Linear(2, 12), aggregator, residual=True)
    with torch.no_grad():
        conv.bias.uniform_()
    w = conv.edge_func(e).view(-1, 3, 4)
    out = conv(g, x, e)
    reduce = {"sum": lambda m: m.sum(0), "mean": lambda m: m.mean(0), "max": lambda m: m.max(0).values}[aggregator]
    for d in range(N):
        es = [i for i, t in enumerate(DST) if t == d]
        neigh = reduce(torch.stack([x[SRC[i]].unsqueeze(-1) * w[i] for i in es])).sum(0) if es else torch.zeros(4)
        torch.testing.assert_close(out[d], neigh + conv.res_fc(x[d]) + conv.bias, **TOL)
    with pytest.raises(KeyError):
        topograph.nn.NNConv(3, 4, torch.nn.Linear(2, 12), "lstm")


def _compare(md, mt, fd, ft, inputs):
    """mt loads md's state_dict (DGL's weights); outputs and every gradient agree."""
    mt.load_state_dict(md.state_dict())
    xd = [x.clone().requires_grad_(x.is_floating_point()) for x in inputs]
    xt = [x.clone().requires_grad_(x.is_floating_point()) for x in inputs]
    od, ot = fd(md, *xd), ft(mt, *xt)
    torch.testing.assert_close(ot, od, **TOL)
    w = torch.randn(od.shape)
    (od * w).sum().backward()
    (ot * w).sum().backward()
    for a, b in zip(xt, xd):
        if b.grad is not None:
            torch.testing.assert_close(a.grad, b.grad, **TOL)
    pd = dict(md.named_parameters())
    for name, p in mt.named_parameters():
        torch.testing.assert_close(p.grad, pd[name].grad, **TOL)


def test_layers_match_dgl():
    dgl = need_dgl()
    import dgl.nn.pytorch as dnn

    torch.manual_seed(5)
    gd, gt = graph(dgl, loops=True), graph(topograph, loops=True)
    zd, zt = graph(dgl), graph(topograph)  # node 5 without in-edges
    E, Z = gt.num_edges(), zt.num_edges()
    x = torch.randn(N, 3)
    for k in (1, 2, 3):
        _compare(dnn.TAGConv(3, 4, k=k, activation=torch.tanh), topograph.nn.TAGConv(3, 4, k=k, activation=torch.tanh),
                 lambda m, h: m(gd, h), lambda m, h: m(gt, h), [x])
        _compare(dnn.TAGConv(3, 4, k=k, bias=False), topograph.nn.TAGConv(3, 4, k=k, bias=False),
                 lambda m, h, w: m(gd, h, edge_weight=w), lambda m, h, w: m(gt, h, edge_weight=w),
                 [x, torch.rand(E) + 0.1])
        _compare(dnn.ChebConv(3, 4, k), topograph.nn.ChebConv(3, 4, k), lambda m, h: m(gd, h, lambda_max=[1.7]),
                 lambda m, h: m(gt, h, lambda_max=[1.7]), [x])
    _compare(dnn.EdgeConv(3, 4), topograph.nn.EdgeConv(3, 4), lambda m, h: m(gd, h), lambda m, h: m(gt, h), [x])
    _compare(dnn.EdgeConv(3, 4, batch_norm=True, allow_zero_in_degree=True),
             topograph.nn.EdgeConv(3, 4, batch_norm=True, allow_zero_in_degree=True),
             lambda m, h: m(zd, h), lambda m, h: m(zt, h), [x])
    # a block of each: its sources and edges in each library's order, so inputs are gathered from the parent's
    # (DGL's in_subgraph lists edges seed by seed, topograph's by id: the same edges)
    seeds = torch.tensor([1, 4, 0])
    nid, eid = topograph.NID, topograph.EID
    blocks = []
    for lib, g in ((dgl, gd), (topograph, gt)):
        sub = lib.in_subgraph(g, seeds)
        block = lib.to_block(sub, seeds)
        blocks.append((block, block.srcdata[nid].long(), sub.edata[eid][block.edata[eid].long()].long()))
    (bd, src_d, eid_d), (bt, src_t, eid_t) = blocks
    _compare(dnn.EdgeConv(3, 2), topograph.nn.EdgeConv(3, 2), lambda m, h: m(bd, h[src_d]),
             lambda m, h: m(bt, h[src_t]), [x])
    types = torch.randint(0, 3, (Z,))
    _compare(dnn.GatedGraphConv(3, 5, 3, 3), topograph.nn.GatedGraphConv(3, 5, 3, 3),
             lambda m, h, t: m(zd, h, t), lambda m, h, t: m(zt, h, t), [x, types])
    _compare(dnn.GatedGraphConv(3, 3, 2, 1), topograph.nn.GatedGraphConv(3, 3, 2, 1),
             lambda m, h: m(zd, h), lambda m, h: m(zt, h), [x])
    for aggregator in ("sum", "mean", "max"):
        for residual, out in ((False, 4), (True, 4), (True, 3)):
            fd, ft = torch.nn.Linear(2, 3 * out), torch.nn.Linear(2, 3 * out)
            _compare(dnn.NNConv(3, out, fd, aggregator, residual=residual),
                     topograph.nn.NNConv(3, out, ft, aggregator, residual=residual),
                     lambda m, h, e: m(zd, h, e), lambda m, h, e: m(zt, h, e), [x, torch.randn(Z, 2)])
    fd, ft = torch.nn.Linear(2, 6), torch.nn.Linear(2, 6)
    _compare(dnn.NNConv(3, 2, fd, "mean", residual=True), topograph.nn.NNConv(3, 2, ft, "mean", residual=True),
             lambda m, h, e: m(bd, h[src_d], e[eid_d]), lambda m, h, e: m(bt, h[src_t], e[eid_t]),
             [x, torch.randn(E, 2)])
