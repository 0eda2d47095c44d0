"""DotGatConv, AGNNConv, EGATConv, HGTConv (nn/attention_conv.py), GCN2Conv, GMMConv (nn/conv_extra.py),
Sequential, JumpingKnowledge, LabelPropagation (nn/utils.py), EdgePredictor (nn/link.py), HeteroLinear and
HeteroEmbedding (nn/hetero.py): outputs against dense torch references written here (so it runs without DGL),
the fused path against the one that returns the attention, and, where dgl imports, outputs and gradients
(inputs' and parameters') equal to dgl.nn's with DGL's weights loaded (test_conv_extra._compare)."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

from test_conv_extra import N, TOL, _compare, adjacency, graph, need_dgl, normalised


def dense_softmax(scores, a):
    """Softmax of scores [N_dst, N_src, ...] over the sources with an edge (a [N_dst, N_src] edge counts: a
    multi-edge counts as often as it occurs)."""
    shape = a.shape + (1,) * (scores.dim() - 2)
    w = torch.exp(scores - scores.amax(1, keepdim=True)) * a.view(shape)
    return w / w.sum(1, keepdim=True).clamp(min=1e-30)


def test_dot_gat_conv_by_dense_reference():
    torch.manual_seed(0)
    g = graph(loops=True)
    a = adjacency(g)
    layer = topograph.nn.DotGatConv(5, 4, num_heads=3)
    x = torch.randn(N, 5)
    z = layer.fc(x).view(N, 3, 4)
    scores = torch.einsum("dhk,shk->dsh", z, z) / 2.0  # sqrt(4)
    ref = torch.einsum("dsh,shk->dhk", dense_softmax(scores, a), z)
    out = layer(g, x)
    torch.testing.assert_close(out, ref, **TOL)
    out2, att = layer(g, x, get_attention=True)
    torch.testing.assert_close(out2, ref, **TOL)
    assert att.shape == (g.num_edges(), 3, 1)
    with pytest.raises(ValueError, match="no in-edge"):
        layer(graph(), x)
    bipartite = topograph.nn.DotGatConv((5, 2), 4, num_heads=2, allow_zero_in_degree=True)
    assert set(dict(bipartite.named_parameters())) == {"fc_src.weight", "fc_dst.weight"}
    assert bipartite(g, (x, torch.randn(N, 2))).shape == (N, 2, 4)


@pytest.mark.parametrize("shape", [(7,), (2, 7)], ids=["matrix", "heads"])
def test_agnn_conv_by_dense_reference(shape):
    torch.manual_seed(1)
    g = graph(loops=True)
    a = adjacency(g)
    layer = topograph.nn.AGNNConv(init_beta=0.7)
    x = torch.randn((N,) + shape, requires_grad=True)
    unit = torch.nn.functional.normalize(x, dim=-1)
    cos = torch.einsum("d...k,s...k->ds...", unit, unit)
    ref = torch.einsum("ds...,s...k->d...k", dense_softmax(layer.beta * cos, a), x)
    out = layer(g, x)
    torch.testing.assert_close(out, ref, **TOL)
    w = torch.randn(ref.shape)
    g_out = torch.autograd.grad((out * w).sum(), [x, layer.beta])
    g_ref = torch.autograd.grad((ref * w).sum(), [x, layer.beta])
    for got, want in zip(g_out, g_ref):
        torch.testing.assert_close(got, want, **TOL)
    assert "beta" in dict(topograph.nn.AGNNConv(learn_beta=False).named_buffers())


@pytest.mark.parametrize("project", [True, False])
def test_gcn2_conv_by_dense_reference(project):
    torch.manual_seed(2)
    g = graph(loops=True)
    layer = topograph.nn.GCN2Conv(6, layer=2, alpha=0.2, lambda_=1.5, project_initial_features=project)
    x, x0 = torch.randn(N, 6), torch.randn(N, 6)
    beta = torch.log(torch.tensor(1.5 / 2 + 1))
    px = (1 - 0.2) * (normalised(g) @ x)
    s = px + 0.2 * x0
    proj = s @ layer.weight1 if project else px @ layer.weight1 + (0.2 * x0) @ layer.weight2
    ref = (1 - beta) * s + beta * proj + layer.bias
    torch.testing.assert_close(layer(g, x, x0), ref, **TOL)
    ew = torch.rand(g.num_edges()) + 0.5
    assert layer(g, x, x0, edge_weight=ew).shape == (N, 6)


def test_sequential_and_edge_predictor():
    torch.manual_seed(3)
    g = graph(loops=True)
    net = topograph.nn.Sequential(topograph.nn.GraphConv(4, 8), topograph.nn.GraphConv(8, 3))
    x = torch.randn(N, 4)
    torch.testing.assert_close(net(g, x), net[1](g, net[0](g, x)), **TOL)
    torch.testing.assert_close(net([g, g], x), net(g, x), **TOL)
    with pytest.raises(TypeError, match="graph or a list of graphs"):
        net(x, x)
    hs, hd = torch.randn(5, 4), torch.randn(5, 4)
    for op, ref in [("dot", (hs * hd).sum(1, keepdim=True)), ("ele", hs * hd), ("cat", torch.cat([hs, hd], 1)),
                    ("cos", torch.nn.functional.cosine_similarity(hs, hd).unsqueeze(1))]:
        torch.testing.assert_close(topograph.nn.EdgePredictor(op)(hs, hd), ref)
        assert topograph.nn.EdgePredictor(op, 4, 2)(hs, hd).shape == (5, 2)
    with pytest.raises(ValueError, match="op must be"):
        topograph.nn.EdgePredictor("sum")


def test_layers_match_dgl():
    dgl = need_dgl()
    import dgl.nn.pytorch as dnn

    torch.manual_seed(5)
    gd, gt = graph(dgl, loops=True), graph(topograph, loops=True)
    x, x0 = torch.randn(N, 5), torch.randn(N, 5)
    ew = torch.rand(gt.num_edges()) + 0.5
    cases = [
        (dnn.DotGatConv(5, 4, 3), topograph.nn.DotGatConv(5, 4, 3), [x]),
        (dnn.AGNNConv(0.8), topograph.nn.AGNNConv(0.8), [x]),
        (dnn.AGNNConv(0.8), topograph.nn.AGNNConv(0.8), [x.view(N, 1, 5).expand(N, 2, 5).contiguous()]),
        (dnn.GCN2Conv(5, 3, alpha=0.3, lambda_=2), topograph.nn.GCN2Conv(5, 3, alpha=0.3, lambda_=2), [x, x0]),
        (dnn.GCN2Conv(5, 1, project_initial_features=False),
         topograph.nn.GCN2Conv(5, 1, project_initial_features=False), [x, x0]),
    ]
    for md, mt, inputs in cases:
        _compare(md, mt, lambda m, *a: m(gd, *a), lambda m, *a: m(gt, *a), inputs)
    md, mt = dnn.GCN2Conv(5, 2), topograph.nn.GCN2Conv(5, 2)
    _compare(md, mt, lambda m, a, b, w: m(gd, a, b, edge_weight=w), lambda m, a, b, w: m(gt, a, b, edge_weight=w),
             [x, x0, ew])
    md, mt = dnn.DotGatConv(5, 4, 2), topograph.nn.DotGatConv(5, 4, 2)
    _compare(md, mt, lambda m, a: m(gd, a, get_attention=True)[1], lambda m, a: m(gt, a, get_attention=True)[1], [x])
    # blocks: the destinations are the first source rows
    seeds = torch.tensor([1, 3, 4])
    bd = dgl.to_block(dgl.in_subgraph(gd, seeds), seeds)
    bt = topograph.to_block(topograph.in_subgraph(gt, seeds), seeds)
    xb = torch.randn(bt.num_src_nodes(), 5)
    for md, mt in [(dnn.DotGatConv(5, 4, 2), topograph.nn.DotGatConv(5, 4, 2)),
                   (dnn.AGNNConv(), topograph.nn.AGNNConv())]:
        _compare(md, mt, lambda m, a: m(bd, a), lambda m, a: m(bt, a), [xb])
    for op in ("dot", "cos", "ele", "cat"):
        md, mt = dnn.EdgePredictor(op, 5, 3, bias=True), topograph.nn.EdgePredictor(op, 5, 3, bias=True)
        _compare(md, mt, lambda m, a, b: m(a, b), lambda m, a, b: m(a, b), [x, x0])


def per_edge_softmax(scores, dst, n):
    """softmax of scores [E, ...] over the edges into each destination, by a loop over destinations."""
    out = torch.zeros_like(scores)
    for d in range(n):
        into = dst == d
        if bool(into.any()):
            out[into] = torch.softmax(scores[into], 0)
    return out


def test_egat_conv_by_edge_loop_reference():
    torch.manual_seed(6)
    g = graph(loops=True)
    src, dst = (t.long() for t in g.edges())
    layer = topograph.nn.EGATConv(5, 3, 4, 2, num_heads=2)
    x, e = torch.randn(N, 5), torch.randn(g.num_edges(), 3)
    f = torch.nn.functional.leaky_relu(layer.fc_ni(x)[src] + layer.fc_nj(x)[dst] + layer.fc_fij(e) + layer.bias)
    f = f.view(-1, 2, 2)
    a = per_edge_softmax((f * layer.attn).sum(-1, keepdim=True), dst, N)
    h = torch.zeros(N, 2, 4).index_add(0, dst, a * layer.fc_node_src(x).view(-1, 2, 4)[src])
    out_h, out_f, out_a = layer(g, x, e, get_attention=True)
    for got, want in ((out_h, h), (out_f, f), (out_a, a)):
        torch.testing.assert_close(got, want, **TOL)
    w = torch.rand(g.num_edges())
    torch.testing.assert_close(layer(g, x, e, edge_weight=w)[0],
                               torch.zeros(N, 2, 4).index_add(0, dst, (a * w.view(-1, 1, 1)) *
                                                              layer.fc_node_src(x).view(-1, 2, 4)[src]), **TOL)


def test_hgt_conv_by_edge_loop_reference():
    torch.manual_seed(7)
    g = graph(loops=True)
    src, dst = (t.long() for t in g.edges())
    ntype = torch.tensor([0, 1, 0, 2, 1, 0])
    etype = torch.randint(0, 3, (g.num_edges(),))
    layer = topograph.nn.HGTConv(6, 2, 2, num_ntypes=3, num_etypes=3, dropout=0.0, use_norm=True)
    x = torch.randn(N, 6)
    k, q, v = (lin(x, ntype).view(N, 2, 2) for lin in (layer.linear_k, layer.linear_q, layer.linear_v))
    score, msg = torch.zeros(g.num_edges(), 2), torch.zeros(g.num_edges(), 2, 2)
    for i in range(g.num_edges()):
        s, d, r = int(src[i]), int(dst[i]), int(etype[i])
        for h in range(2):
            score[i, h] = (k[s, h] @ layer.relation_att[h].W[r]) @ q[d, h] * layer.relation_pri[h][r] / 2 ** 0.5
            msg[i, h] = v[s, h] @ layer.relation_msg[h].W[r]
    agg = torch.zeros(N, 2, 2).index_add(0, dst, msg * per_edge_softmax(score, dst, N).unsqueeze(-1))
    alpha = torch.sigmoid(layer.skip[ntype]).unsqueeze(-1)
    ref = layer.norm(layer.linear_a(agg.reshape(N, 4), ntype) * alpha + x @ layer.residual_w * (1 - alpha))
    torch.testing.assert_close(layer(g, x, ntype, etype), ref, **TOL)


def test_hetero_attention_layers_match_dgl():
    dgl = need_dgl()
    import dgl.nn.pytorch as dnn

    torch.manual_seed(8)
    gd, gt = graph(dgl, loops=True), graph(topograph, loops=True)
    E = gt.num_edges()
    x, e, w = torch.randn(N, 5), torch.randn(E, 3), torch.rand(E)
    ntype, etype = torch.tensor([0, 1, 0, 2, 1, 0]), torch.randint(0, 3, (E,))
    for get_attention in (False, True):
        pick = (lambda out: torch.cat([o.reshape(-1) for o in out]))  # h, f (and a): every value compared
        md, mt = dnn.EGATConv(5, 3, 4, 2, 2), topograph.nn.EGATConv(5, 3, 4, 2, 2)
        _compare(md, mt, lambda m, a, b, c: pick(m(gd, a, b, edge_weight=c, get_attention=get_attention)),
                 lambda m, a, b, c: pick(m(gt, a, b, edge_weight=c, get_attention=get_attention)), [x, e, w])
    for use_norm, size in ((False, 4), (True, 5)):  # 4 = 2 x 2: no residual_w
        md = dnn.HGTConv(size, 2, 2, 3, 3, dropout=0.0, use_norm=use_norm)
        mt = topograph.nn.HGTConv(size, 2, 2, 3, 3, dropout=0.0, use_norm=use_norm)
        xs = torch.randn(N, size)
        _compare(md, mt, lambda m, a: m(gd, a, ntype, etype), lambda m, a: m(gt, a, ntype, etype), [xs])


def test_more_layers_by_reference():
    torch.manual_seed(9)
    g = graph(loops=True)
    src, dst = (t.long() for t in g.edges())
    x, pseudo = torch.randn(N, 5), torch.rand(g.num_edges(), 2)
    for agg in ("sum", "mean", "max"):
        layer = topograph.nn.GMMConv(5, 3, dim=2, n_kernels=4, aggregator_type=agg, residual=True)
        w = torch.exp((-0.5 * (pseudo[:, None] - layer.mu[None]) ** 2 * layer.inv_sigma[None] ** 2).sum(-1))
        msg = layer.fc(x).view(N, 4, 3)[src] * w.unsqueeze(-1)  # [E, K, out]
        ref = torch.stack([getattr(msg[dst == d], {"sum": "sum", "mean": "mean", "max": "amax"}[agg])(0)
                           for d in range(N)]).sum(1) + layer.res_fc(x) + layer.bias
        torch.testing.assert_close(layer(g, x, pseudo), ref, **TOL)
    feats = [torch.randn(N, 4) for _ in range(3)]
    torch.testing.assert_close(topograph.nn.JumpingKnowledge("max")(feats), torch.stack(feats).amax(0))
    assert topograph.nn.JumpingKnowledge("cat")(feats).shape == (N, 12)
    assert topograph.nn.JumpingKnowledge("lstm", 4, 3)(feats).shape == (N, 4)
    labels, mask = torch.tensor([0, 1, 2, 0, 1, 2]), torch.tensor([True, True, False, False, True, False])
    lp = topograph.nn.LabelPropagation(k=3, alpha=0.5, norm_type="row", clamp=False)
    y0 = torch.nn.functional.one_hot(labels).float() * mask.unsqueeze(1)
    a = adjacency(g)
    y = y0
    for _ in range(3):
        y = 0.5 * y0 + 0.5 * (a @ y) / a.sum(1, keepdim=True).clamp(min=1)
    torch.testing.assert_close(lp(g, labels, mask), y, **TOL)
    lin = topograph.nn.HeteroLinear({"user": 3, ("user", "buys", "item"): 2}, 4)
    out = lin({"user": torch.randn(2, 3), ("user", "buys", "item"): torch.randn(5, 2)})
    assert out["user"].shape == (2, 4) and out[("user", "buys", "item")].shape == (5, 4)
    emb = topograph.nn.HeteroEmbedding({"user": 3, "item": 5}, 4)
    assert emb({"item": torch.tensor([4, 0])})["item"].shape == (2, 4) and emb.weight["user"].shape == (3, 4)
    with pytest.raises(KeyError, match="no module for type 'shop'"):
        emb({"shop": torch.tensor([0])})


def test_more_layers_match_dgl():
    dgl = need_dgl()
    import dgl.nn.pytorch as dnn

    torch.manual_seed(10)
    gd, gt = graph(dgl, loops=True), graph(topograph, loops=True)
    zd, zt = graph(dgl), graph(topograph)  # node 5 without in-edges
    x, pseudo = torch.randn(N, 5), torch.rand(gt.num_edges(), 2)
    for agg in ("sum", "mean", "max"):
        md = dnn.GMMConv(5, 3, 2, 4, aggregator_type=agg, residual=True)
        mt = topograph.nn.GMMConv(5, 3, 2, 4, aggregator_type=agg, residual=True)
        _compare(md, mt, lambda m, a, p: m(gd, a, p), lambda m, a, p: m(gt, a, p), [x, pseudo])
        md = dnn.GMMConv(5, 3, 2, 4, aggregator_type=agg, allow_zero_in_degree=True)
        mt = topograph.nn.GMMConv(5, 3, 2, 4, aggregator_type=agg, allow_zero_in_degree=True)
        pz = torch.rand(zt.num_edges(), 2)
        _compare(md, mt, lambda m, a, p: m(zd, a, p), lambda m, a, p: m(zt, a, p), [x, pz])
    feats = [torch.randn(N, 4) for _ in range(3)]
    for mode in ("cat", "max", "lstm"):
        md, mt = dnn.JumpingKnowledge(mode, 4, 3), topograph.nn.JumpingKnowledge(mode, 4, 3)
        _compare(md, mt, lambda m, *f: m(list(f)), lambda m, *f: m(list(f)), feats)
    labels, mask = torch.tensor([0, 1, 2, 0, 1, 2]), torch.tensor([True, True, False, False, True, False])
    for kw in ({}, {"norm_type": "row", "clamp": False, "normalize": True}, {"reset": True}):
        torch.testing.assert_close(topograph.nn.LabelPropagation(3, 0.6, **kw)(zt, labels, mask),
                                   dnn.LabelPropagation(3, 0.6, **kw)(zd, labels, mask), **TOL)
    md, mt = dnn.HeteroLinear({"a": 3, "b": 2}, 4), topograph.nn.HeteroLinear({"a": 3, "b": 2}, 4)
    mt.load_state_dict(md.state_dict())
    xa, xb = torch.randn(2, 3), torch.randn(5, 2)
    for key in ("a", "b"):
        torch.testing.assert_close(mt({"a": xa, "b": xb})[key], md({"a": xa, "b": xb})[key])
    md, mt = dnn.HeteroEmbedding({"a": 3, "b": 5}, 4), topograph.nn.HeteroEmbedding({"a": 3, "b": 5}, 4)
    mt.load_state_dict(md.state_dict())
    torch.testing.assert_close(mt({"b": torch.tensor([4, 1])})["b"], md({"b": torch.tensor([4, 1])})["b"])


def test_edge_gat_conv_by_reference_and_against_dgl():
    torch.manual_seed(11)
    g = graph(loops=True)
    src, dst = (t.long() for t in g.edges())
    layer = topograph.nn.EdgeGATConv(5, 3, 4, num_heads=2)
    x, e = torch.randn(N, 5), torch.randn(g.num_edges(), 3)
    z, f = layer.fc(x).view(N, 2, 4), layer.fc_edge(e).view(-1, 2, 4)
    score = (z * layer.attn_l).sum(-1)[src] + (z * layer.attn_r).sum(-1)[dst] + (f * layer.attn_edge).sum(-1)
    a = per_edge_softmax(torch.nn.functional.leaky_relu(score, 0.2), dst, N).unsqueeze(-1)
    ref = torch.zeros(N, 2, 4).index_add(0, dst, a * (z[src] + f)) + layer.res_fc(x).view(N, 2, 4) + \
        layer.bias.view(1, 2, 4)
    out, att = layer(g, x, e, get_attention=True)
    torch.testing.assert_close(out, ref, **TOL)
    torch.testing.assert_close(att, a, **TOL)
    try:
        import dgl
        import dgl.nn.pytorch as dnn
    except ImportError:
        return
    gd = graph(dgl, loops=True)
    for kwargs in ({}, {"residual": False, "bias": False}):
        md, mt = dnn.EdgeGATConv(5, 3, 4, 2, **kwargs), topograph.nn.EdgeGATConv(5, 3, 4, 2, **kwargs)
        _compare(md, mt, lambda m, a_, b: m(gd, a_, b), lambda m, a_, b: m(g, a_, b), [x, e])


def test_weight_basis():
    wb = topograph.nn.WeightBasis((3, 2), num_bases=2, num_outputs=4)
    out = wb()
    assert out.shape == (4, 3, 2)
    torch.testing.assert_close(out[1], wb.w_comp[1, 0] * wb.weight[0] + wb.w_comp[1, 1] * wb.weight[1])
    try:
        import dgl.nn.pytorch as dnn
    except ImportError:
        return
    theirs = dnn.WeightBasis((3, 2), 2, 4)
    wb.load_state_dict(theirs.state_dict())
    torch.testing.assert_close(wb(), theirs())
